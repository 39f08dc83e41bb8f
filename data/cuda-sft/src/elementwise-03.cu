/*@prompt
Scale a half-precision (fp16) vector by a constant: y[i] = alpha * x[i]. Use __half2 so each thread handles two values per load, a grid-stride loop, and make it work for an odd length.
@explanation
Reinterpreting the `__half` array as `__half2` halves the number of memory transactions and lets one `__hmul2` instruction multiply two values at once. The main loop walks over the `n / 2` pairs with a grid-stride loop, so a fixed, modest grid covers any length. When n is odd the last element has no partner; a single thread (global index 0) handles it with the scalar `__hmul`. `cudaMalloc` returns memory aligned far beyond the 4 bytes `__half2` needs, so the reinterpretation is safe.

The CPU reference computes in float and rounds to half; the check allows one half-precision ulp of relative error.
@*/
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                   \
    do {                                                                   \
        cudaError_t e = (call);                                            \
        if (e != cudaSuccess) {                                            \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,             \
                    cudaGetErrorString(e));                                \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

__global__ void scale_half(const __half* __restrict__ x, __half* __restrict__ y,
                           __half alpha, int n)
{
    const __half2* x2 = reinterpret_cast<const __half2*>(x);
    __half2* y2 = reinterpret_cast<__half2*>(y);
    const __half2 alpha2 = __halves2half2(alpha, alpha);
    const int n_pairs = n / 2;

    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_pairs; i += stride) {
        y2[i] = __hmul2(alpha2, x2[i]);
    }
    if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0) {
        y[n - 1] = __hmul(alpha, x[n - 1]);
    }
}

int main()
{
    const int n = (1 << 20) + 3;  // odd on purpose
    const float alpha_f = 1.5f;

    std::vector<__half> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
        hx[i] = __float2half(((i % 200) - 100) * 0.03125f);
    }

    __half *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), n * sizeof(__half), cudaMemcpyHostToDevice));

    int device, sm_count;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    const int block = 256;
    const int grid = sm_count * 4;  // grid-stride loop covers the rest
    scale_half<<<grid, block>>>(dx, dy, __float2half(alpha_f), n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hy.data(), dy, n * sizeof(__half), cudaMemcpyDeviceToHost));

    int errors = 0;
    for (int i = 0; i < n; ++i) {
        float ref = __half2float(__float2half(alpha_f * __half2float(hx[i])));
        float got = __half2float(hy[i]);
        if (fabsf(got - ref) > 1e-3f * fabsf(ref) + 1e-6f) {
            if (errors < 5) printf("y[%d] = %f, expected %f\n", i, got, ref);
            ++errors;
        }
    }
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));

    if (errors) {
        printf("FAIL: %d of %d values differ\n", errors, n);
        return 1;
    }
    printf("PASS: %d values\n", n);
    return 0;
}
