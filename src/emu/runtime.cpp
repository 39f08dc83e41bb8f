// The cuemu runtime's build flags and its files on disk (cuset/emu/runtime.h); the files' text
// is generated into runtime_files.cpp by embed_runtime.cmake.
#include "cuset/emu/runtime.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"

namespace fs = std::filesystem;

namespace cuset::emu {
namespace {

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return in ? text.str() : "";
}

// The number after `#define NAME` in `text`, -1 when there is none.
long defined_number(const std::string& text, const std::string& name) {
    const std::string key = "#define " + name;
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
        size_t i = at + key.size();
        if (i >= text.size() || (text[i] != ' ' && text[i] != '\t')) continue;
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        size_t j = i;
        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
        if (j > i) return std::stol(text.substr(i, j - i));
    }
    return -1;
}

// nvcc's build number for toolkit version major.minor whose headers are `cuda_include`: the
// "cuda_nvcc" entry of the toolkit's version.json, else the name of a pip layout's
// dist-info/nvidia_cuda_nvcc-M.m.B.dist-info folder; 0 when neither says.
long nvcc_build(const fs::path& cuda_include, long major, long minor) {
    const fs::path root = cuda_include.parent_path();
    const std::string prefix = std::to_string(major) + "." + std::to_string(minor) + ".";
    auto build_of = [&](const std::string& version) -> long {
        if (version.compare(0, prefix.size(), prefix) != 0) return -1;
        size_t i = prefix.size(), j = i;
        while (j < version.size() && std::isdigit(static_cast<unsigned char>(version[j]))) ++j;
        return j > i ? std::stol(version.substr(i, j - i)) : -1;
    };
    const std::string json = read_text(root / "version.json");
    size_t at = json.find("\"cuda_nvcc\"");
    if (at != std::string::npos) at = json.find("\"version\"", at);
    if (at != std::string::npos) at = json.find(':', at);
    if (at != std::string::npos) at = json.find('"', at);
    if (at != std::string::npos) {
        const long b = build_of(json.substr(at + 1));
        if (b >= 0) return b;
    }
    std::error_code ec;
    for (fs::directory_iterator it(root / "dist-info", ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string(), head = "nvidia_cuda_nvcc-";
        if (name.compare(0, head.size(), head) != 0) continue;
        const long b = build_of(name.substr(head.size()));
        if (b >= 0) return b;
    }
    return 0;
}

// The macros nvcc's host compilation pass defines (`nvcc --dryrun` shows them as -D flags of its
// first `gcc -E`), with the version of the toolkit whose headers are `cuda_include`
// (cuda_runtime_api.h's CUDART_VERSION); without that header, only those that need no version.
std::vector<std::string> nvcc_macros(const std::string& cuda_include) {
    std::vector<std::string> m = {"-D__CUDACC__", "-D__NVCC__"};
    const long v = defined_number(read_text(fs::path(cuda_include) / "cuda_runtime_api.h"), "CUDART_VERSION");
    if (v < 0) return m;
    const long major = v / 1000, minor = v % 1000 / 10;
    const std::string maj = std::to_string(major), min = std::to_string(minor);
    // nvcc's default target when the judge names none: sm_75 from CUDA 13, sm_52 before.
    m.insert(m.begin(), std::string("-D__CUDA_ARCH_LIST__=") + (major >= 13 ? "750" : "520"));
    for (const std::string& d :
         {"__CUDACC_VER_MAJOR__=" + maj, "__CUDACC_VER_MINOR__=" + min,
          "__CUDACC_VER_BUILD__=" + std::to_string(nvcc_build(cuda_include, major, minor)), "__CUDA_API_VER_MAJOR__=" + maj,
          "__CUDA_API_VER_MINOR__=" + min, std::string("__NVCC_DIAG_PRAGMA_SUPPORT__=1"),
          std::string("__CUDACC_DEVICE_ATOMIC_BUILTINS__=1")})
        m.push_back("-D" + d);
    return m;
}

}  // namespace

std::vector<std::string> build_flags(const std::string& runtime_dir, const std::string& cuda_include) {
    const fs::path d(runtime_dir);
    // gnu++17 and no __OPTIMIZE__ (but __NO_INLINE__): the dialect and the macros of nvcc's host
    // pass, which calls g++ without -std or -O; the code is still compiled at -O1.
    std::vector<std::string> flags = {"-std=gnu++17", "-O1", "-U__OPTIMIZE__", "-D__NO_INLINE__", "-w", "-fpermissive",
                                      "-I", (d / "include").string(), "-I", d.string(), "-I", cuda_include};
    for (const std::string& m : nvcc_macros(cuda_include)) flags.push_back(m);
    return flags;
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
