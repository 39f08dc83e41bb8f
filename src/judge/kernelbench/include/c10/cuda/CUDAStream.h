// Stand-in for c10's CUDAStream in KernelBench extensions built for the CPU emulator: one stream,
// the default (0), on which every launch runs to its end before the next.
#pragma once
#include <cuda_runtime.h>
namespace c10 {
namespace cuda {
struct CUDAStream {
    cudaStream_t stream() const { return 0; }
    operator cudaStream_t() const { return 0; }
    int device_index() const { return 0; }
    void synchronize() const {}
};
inline CUDAStream getCurrentCUDAStream(int = -1) { return {}; }
inline CUDAStream getDefaultCUDAStream(int = -1) { return {}; }
inline CUDAStream getStreamFromPool(bool = false, int = -1) { return {}; }
}  // namespace cuda
}  // namespace c10
namespace at {
namespace cuda {
using c10::cuda::CUDAStream;
using c10::cuda::getCurrentCUDAStream;
using c10::cuda::getDefaultCUDAStream;
using c10::cuda::getStreamFromPool;
}  // namespace cuda
}  // namespace at
