// CUDA runtime queries for `--version` and a minimal launch check for `cuset-train doctor`-style
// diagnostics. Compiled by nvcc (sm_80, sm_90) so every build checks the CUDA toolchain.
#include "cuset/model/cuda_runtime_info.h"

#include <cuda_runtime.h>

namespace cuset::cuda {
namespace {

__global__ void iota_kernel(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3 * i + 1;
}

}  // namespace

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

bool self_test() {
    if (device_count() == 0) return false;
    const int n = 1000;
    int* d = nullptr;
    if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess) return false;
    iota_kernel<<<(n + 255) / 256, 256>>>(d, n);
    int h[n];
    bool ok = cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(d);
    for (int i = 0; ok && i < n; ++i) ok = h[i] == 3 * i + 1;
    return ok;
}

}  // namespace cuset::cuda
