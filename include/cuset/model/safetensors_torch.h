// LibTorch side of the safetensors concern: dtype mapping, a copying conversion of a mapped view
// into a tensor of the requested dtype and device, and writing named tensors (any device and
// dtype) as one file or as shards with an index.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "cuset/model/safetensors.h"

namespace cuset {

c10::ScalarType st_dtype_to_torch(StDtype dtype);
// RuntimeFailure for a dtype safetensors cannot hold (complex, quantized).
StDtype st_dtype_from_torch(c10::ScalarType dtype);

// A new tensor (never aliasing the mapping) with `view`'s shape, converted to `dtype` on
// `device`.
at::Tensor tensor_from_view(const TensorView& view, c10::ScalarType dtype, c10::Device device);

// Same, keeping the file's dtype.
at::Tensor tensor_from_view(const TensorView& view, c10::Device device);

// Copies `view` into the existing tensor `dst` (same numel and shape, any dtype/device).
void tensor_copy_from_view(at::Tensor& dst, const TensorView& view);

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// Every tensor of `path` (a file or checkpoint folder) in its own dtype on `device`.
std::map<std::string, at::Tensor> safetensors_load(const std::string& path, c10::Device device);

// Writes `tensors` (any device; converted to `dtype` unless it is Undefined; made contiguous on
// the CPU) with safetensors_write.
void safetensors_save(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata = {},
                      c10::ScalarType dtype = c10::ScalarType::Undefined);
// Same as safetensors_write_sharded, one shard in host memory at a time (a 32B model on the GPU
// is never copied to the host at once). Returns the file names written.
std::vector<std::string> safetensors_save_sharded(const std::string& dir, const NamedTensors& tensors,
                                                  int64_t max_shard_bytes,
                                                  c10::ScalarType dtype = c10::ScalarType::Undefined);

}  // namespace cuset
