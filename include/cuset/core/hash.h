// Content hashes that key caches and guard resumes (tokenised data, score files, checkpoints):
// 64-bit FNV-1a, printed as 16 hex digits. Not cryptographic; collisions are not a threat here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cuset {

class Hasher {
public:
    Hasher& add(const void* data, size_t n);
    Hasher& add(std::string_view s);  // the bytes, then their length (so "ab"+"c" != "a"+"bc")
    Hasher& add_u64(uint64_t v);
    uint64_t value() const { return h_; }
    std::string hex() const;

private:
    uint64_t h_ = 1469598103934665603ull;
};

// Hash of a file's bytes; InputError when it cannot be read.
std::string hash_file(const std::string& path);

// Hash identifying a model folder without reading its weights: config.json, the safetensors
// index, and each weight file's size and header.
std::string hash_model_dir(const std::string& dir);

}  // namespace cuset
