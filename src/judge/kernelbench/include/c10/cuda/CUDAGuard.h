// Stand-in for c10's device guards in KernelBench extensions built for the CPU emulator: one
// device, nothing to switch.
#pragma once
#include <c10/cuda/CUDAStream.h>
namespace c10 {
namespace cuda {
struct CUDAGuard {
    template <class T>
    explicit CUDAGuard(const T&) {}
};
struct OptionalCUDAGuard {
    OptionalCUDAGuard() {}
    template <class T>
    explicit OptionalCUDAGuard(const T&) {}
};
}  // namespace cuda
}  // namespace c10
namespace at {
namespace cuda {
using c10::cuda::CUDAGuard;
using c10::cuda::OptionalCUDAGuard;
}  // namespace cuda
}  // namespace at
