/*@prompt
Write a SiLU (swish) kernel for fp16 tensors: y = x * sigmoid(x). Inputs and outputs are __half, but do the math in float for accuracy. Process a tensor of shape [64, 4096].
@explanation
Half precision has only an 11-bit significand, and `expf` has no half counterpart that is as accurate, so each thread converts its element to float with `__half2float`, computes `x / (1 + exp(-x))` in float and rounds once at the end with `__float2half`. The tensor is treated as a flat array of 64 * 4096 elements; the layout does not matter for an element-wise op. For large negative x, `expf(-x)` overflows to infinity and the quotient correctly becomes -0, so no special case is needed. The host reference uses the same float formula and the check allows one half-precision rounding step (relative 2^-10) plus a small absolute floor.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                         \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

__global__ void silu_fp16(const __half* __restrict__ x, __half* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __half2float(x[i]);
        y[i] = __float2half(v / (1.0f + expf(-v)));
    }
}

int main()
{
    const int rows = 64, cols = 4096;
    const int n = rows * cols;
    std::vector<__half> hx(n), hy(n);
    for (int i = 0; i < n; ++i) {
        float v = (float)((i * 131) % 2001 - 1000) / 100.0f;  // [-10, 10]
        hx[i] = __float2half(v);
    }

    __half *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(dx, hx.data(), n * sizeof(__half), cudaMemcpyHostToDevice));

    int block = 256;
    int grid = (n + block - 1) / block;
    silu_fp16<<<grid, block>>>(dx, dy, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hy.data(), dy, n * sizeof(__half), cudaMemcpyDeviceToHost));

    int bad = 0;
    for (int i = 0; i < n; ++i) {
        float v = __half2float(hx[i]);
        float ref = v / (1.0f + std::exp(-v));
        float got = __half2float(hy[i]);
        if (!(std::fabs(got - ref) <= std::fabs(ref) * 1e-3f + 1e-4f)) {
            if (bad < 5) printf("i=%d x=%f got %f ref %f\n", i, v, got, ref);
            ++bad;
        }
    }
    cudaFree(dx);
    cudaFree(dy);
    if (bad) {
        printf("FAIL: %d elements out of tolerance\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
