// Safetensors files of our own: a memory-mapped reader that validates every header field against
// the file, sharded folders (model.safetensors.index.json), and an atomic, sharding writer.
// No LibTorch here: tensors are raw views (dtype, shape, bytes); safetensors_torch.h converts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cuset {

// The dtypes of the safetensors format (its spelling in the header in comments).
enum class StDtype {
    kF64,    // "F64"
    kF32,    // "F32"
    kF16,    // "F16"
    kBF16,   // "BF16"
    kF8E4M3, // "F8_E4M3"
    kF8E5M2, // "F8_E5M2"
    kI64,    // "I64"
    kI32,    // "I32"
    kI16,    // "I16"
    kI8,     // "I8"
    kU64,    // "U64"
    kU32,    // "U32"
    kU16,    // "U16"
    kU8,     // "U8"
    kBool,   // "BOOL"
};

size_t st_dtype_size(StDtype dtype);           // bytes per element
const char* st_dtype_name(StDtype dtype);      // "BF16"
bool st_dtype_parse(const std::string& name, StDtype* out);  // false when unknown

// One tensor inside a mapped file: valid while its SafetensorsFile lives.
struct TensorView {
    std::string name;
    StDtype dtype = StDtype::kF32;
    std::vector<int64_t> shape;   // [] for a scalar
    const uint8_t* data = nullptr;  // little-endian elements, row-major
    size_t n_bytes = 0;            // = numel * st_dtype_size(dtype), checked on open
    std::string file;              // the file it lives in (for error messages)

    int64_t numel() const;
};

// One .safetensors file, mapped read-only. Opening validates the whole header: its length
// against the file size, the JSON, every dtype, shape and offset (inside the data area, no
// overlap, byte length = numel x dtype size), no duplicate names. Any problem is an InputError
// naming the file and the tensor.
class SafetensorsFile {
public:
    explicit SafetensorsFile(const std::string& path);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const std::string& path() const { return path_; }
    const std::vector<TensorView>& tensors() const { return tensors_; }  // in header order
    const TensorView* find(const std::string& name) const;  // nullptr when absent
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    size_t file_size() const { return size_; }

    // Hints the kernel to read the whole file ahead (before a full load).
    void prefetch() const;

private:
    std::string path_;
    void* map_ = nullptr;
    size_t size_ = 0;
    std::vector<TensorView> tensors_;
    std::map<std::string, size_t> index_;  // name -> position in tensors_
    std::map<std::string, std::string> metadata_;
};

// All tensors of a checkpoint folder: `model.safetensors`, or the shards listed by
// `model.safetensors.index.json` (every listed shard must exist, every tensor of the weight map
// must be in the shard it names, no tensor may appear in two shards). A single .safetensors
// file path also works.
class SafetensorsCheckpoint {
public:
    explicit SafetensorsCheckpoint(const std::string& path);

    const std::vector<std::string>& names() const { return names_; }  // sorted
    const TensorView* find(const std::string& name) const;  // nullptr when absent
    const TensorView& get(const std::string& name) const;   // InputError when absent
    const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }
    size_t total_bytes() const;  // sum of the tensors' byte lengths

private:
    std::vector<std::unique_ptr<SafetensorsFile>> files_;
    std::map<std::string, const TensorView*> by_name_;
    std::vector<std::string> names_;
};

// A tensor to write: raw little-endian bytes.
struct TensorBytes {
    std::string name;
    StDtype dtype = StDtype::kF32;
    std::vector<int64_t> shape;
    const void* data = nullptr;
    size_t n_bytes = 0;  // must equal numel x dtype size
};

// Writes one file: header padded with spaces to a multiple of 8 bytes, `__metadata__` holding
// {"format": "pt"} plus `metadata`, tensors in the given order. Written to a temporary name in
// the same folder and renamed onto `path` when complete. RuntimeFailure on I/O errors.
void safetensors_write(const std::string& path, const std::vector<TensorBytes>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The index file of a sharded checkpoint folder.
inline constexpr const char* kSafetensorsIndexFile = "model.safetensors.index.json";

// Shard planning shared by the raw and the LibTorch writers: consecutive tensors grouped so a
// shard stays within `max_shard_bytes` (<= 0: no limit; an oversized tensor gets its own shard).
std::vector<std::vector<size_t>> safetensors_plan_shards(const std::vector<size_t>& n_bytes,
                                                         int64_t max_shard_bytes);
// "model.safetensors" when n_shards == 1, else "model-0000i-of-0000n.safetensors" (i from 0).
std::string safetensors_shard_name(size_t i, size_t n_shards);
// Writes `dir`/model.safetensors.index.json (atomically): total_size and name -> shard file.
void safetensors_write_index(const std::string& dir, const std::map<std::string, std::string>& weight_map,
                             uint64_t total_size);

// Writes `tensors` into folder `dir` (which must exist): `model.safetensors` when they fit in
// `max_shard_bytes` (<= 0: no limit), else `model-0000i-of-0000n.safetensors` shards (a tensor
// larger than the limit gets a shard of its own) plus `model.safetensors.index.json`. Returns
// the file names written.
std::vector<std::string> safetensors_write_sharded(const std::string& dir,
                                                   const std::vector<TensorBytes>& tensors,
                                                   int64_t max_shard_bytes);

}  // namespace cuset
