// CUDA runtime queries for `--version` and the device checks. Compiled by nvcc (sm_80, sm_90), so
// every build with CUDA checks the toolchain.
#include "cuset/model/cuda_runtime_info.h"

#include <cuda_runtime.h>

namespace cuset::cuda {

int runtime_version_compiled() { return CUDART_VERSION; }

int driver_version() {
    int v = 0;
    if (cudaDriverGetVersion(&v) != cudaSuccess) return 0;
    return v;
}

int device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no driver" error
        return 0;
    }
    return n;
}

long long device_total_memory(int device) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return static_cast<long long>(prop.totalGlobalMem);
}

}  // namespace cuset::cuda
