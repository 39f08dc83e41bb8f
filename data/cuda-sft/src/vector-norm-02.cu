/*@prompt
Find the infinity norm max_i |x_i| of a float array with CUDA. I heard you can use integer atomicMax on float bit patterns — show that trick and explain why it is valid.
@explanation
For non-negative IEEE-754 floats the bit patterns, read as signed integers, are ordered exactly like the values: a larger exponent field means a larger number, and within one exponent a larger significand does. Taking `fabsf` first clears the sign bit, so every value is non-negative and `atomicMax` on `__float_as_int(|x|)` finds the maximum. To keep atomics rare, each block first reduces its grid-stride slice with a warp shuffle (`fmaxf` is exact, so order does not matter) and shared memory, and only one thread per block calls `atomicMax`. The accumulator starts at 0, which is the bit pattern of +0.0f, and the host converts the final integer back to a float. The max is exact, so the CPU comparison uses `==`.
@*/
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
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

__global__ void abs_max(const float* __restrict__ x, int* __restrict__ result_bits, int n)
{
    __shared__ float warp_max[32];
    float m = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        m = fmaxf(m, fabsf(x[i]));
    for (int offset = 16; offset > 0; offset >>= 1)
        m = fmaxf(m, __shfl_down_sync(0xffffffff, m, offset));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < blockDim.x / 32; ++w) m = fmaxf(m, warp_max[w]);
        atomicMax(result_bits, __float_as_int(m));  // m >= 0: int order == float order
    }
}

int main()
{
    const int n = 7000001;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = std::sin(0.001f * i) * (float)(i % 977);
    x[4321987] = -1234.5f;  // the extreme value is negative on purpose

    float ref = 0.0f;
    for (int i = 0; i < n; ++i) ref = std::max(ref, std::fabs(x[i]));

    float* dx;
    int* dbits;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dbits, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dbits, 0, sizeof(int)));  // bits of +0.0f

    abs_max<<<512, 256>>>(dx, dbits, n);
    CUDA_CHECK(cudaGetLastError());
    int bits = 0;
    CUDA_CHECK(cudaMemcpy(&bits, dbits, sizeof(int), cudaMemcpyDeviceToHost));
    float got;
    std::memcpy(&got, &bits, sizeof(float));
    cudaFree(dx);
    cudaFree(dbits);

    printf("inf-norm gpu %.4f cpu %.4f\n", got, ref);
    if (got != ref) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
