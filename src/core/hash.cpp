// FNV-1a hashing of bytes, files and model folders.
#include "cuset/core/hash.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

namespace fs = std::filesystem;

Hasher& Hasher::add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t h = h_;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    h_ = h;
    return *this;
}

Hasher& Hasher::add(std::string_view s) {
    add(s.data(), s.size());
    return add_u64(s.size());
}

Hasher& Hasher::add_u64(uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    return add(b, 8);
}

std::string Hasher::hex() const { return strprintf("%016llx", (unsigned long long)h_); }

std::string hash_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("cannot read '" + path + "'");
    Hasher h;
    std::vector<char> buf(1 << 20);
    while (f) {
        f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        h.add(buf.data(), static_cast<size_t>(f.gcount()));
    }
    return h.hex();
}

std::string hash_model_dir(const std::string& dir) {
    Hasher h;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError("model folder '" + dir + "' does not exist: check model.path");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        std::string n = e.path().filename().string();
        if (n == "config.json" || n == "model.safetensors.index.json" ||
            (n.size() > 12 && n.compare(n.size() - 12, 12, ".safetensors") == 0))
            files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
        std::string n = p.filename().string();
        h.add(n);
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) {
            h.add(hash_file(p.string()));
            continue;
        }
        // A safetensors file: its size and header (names, dtypes, shapes, offsets) plus the first
        // and last MiB of data, which changes whenever training changed the weights.
        uint64_t size = fs::file_size(p, ec);
        h.add_u64(size);
        std::ifstream f(p, std::ios::binary);
        uint64_t header_len = 0;
        f.read(reinterpret_cast<char*>(&header_len), 8);
        std::vector<char> buf(static_cast<size_t>(std::min<uint64_t>(header_len, 100u << 20)));
        f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        h.add(buf.data(), static_cast<size_t>(f.gcount()));
        std::vector<char> chunk(1 << 20);
        f.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        h.add(chunk.data(), static_cast<size_t>(f.gcount()));
        if (size > (2u << 20)) {
            f.clear();
            f.seekg(static_cast<std::streamoff>(size - (1u << 20)));
            f.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
            h.add(chunk.data(), static_cast<size_t>(f.gcount()));
        }
    }
    return h.hex();
}

}  // namespace cuset
