// The cuemu runtime's build flags and its files on disk (cuset/emu/runtime.h); the files' text
// is generated into runtime_files.cpp by embed_runtime.cmake.
#include "cuset/emu/runtime.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"

namespace fs = std::filesystem;

namespace cuset::emu {

std::vector<std::string> build_flags(const std::string& runtime_dir, const std::string& cuda_include) {
    const fs::path d(runtime_dir);
    return {"-std=c++17", "-O1", "-w", "-fpermissive", "-I", (d / "include").string(), "-I", d.string(),
            "-I", cuda_include};
}

void write_runtime_files(const std::string& dir) {
    for (const auto& [rel, text] : runtime_files()) {
        const fs::path path = fs::path(dir) / rel;
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        if (ec) throw RuntimeFailure("cannot create " + path.parent_path().string() + ": " + ec.message());
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.close();
        if (!out) throw RuntimeFailure("cannot write " + path.string() + ": " + std::strerror(errno));
    }
}

std::string runtime_hash() {
    Hasher h;
    for (const auto& [rel, text] : runtime_files()) h.add(rel).add(text);
    for (const std::string& f : build_flags("D", "C")) h.add(f);
    return h.hex();
}

}  // namespace cuset::emu
