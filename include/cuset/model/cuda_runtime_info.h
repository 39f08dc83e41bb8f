// What the CUDA runtime linked into cuset reports (only when built with CUSET_WITH_CUDA).
// Compiled by nvcc from src/model/cuda_runtime_info.cu.
#pragma once

namespace cuset::cuda {

// CUDA runtime version cuset was compiled against, e.g. 13000 for 13.0.
int runtime_version_compiled();
// Driver version, or 0 when no driver is installed.
int driver_version();
// Number of visible GPUs; 0 when there is no driver or device.
int device_count();
// Total memory of GPU `device` in bytes; 0 when it cannot be queried.
long long device_total_memory(int device);

}  // namespace cuset::cuda
