// Stand-in for c10's CUDA error checks in KernelBench extensions built for the CPU emulator.
#pragma once
#include <stdexcept>
#include <string>
#include <cuda_runtime.h>
#define C10_CUDA_CHECK(EXPR)                                                                   \
    do {                                                                                       \
        const cudaError_t cuset_err_ = (EXPR);                                                 \
        if (cuset_err_ != cudaSuccess)                                                         \
            throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(cuset_err_)); \
    } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
