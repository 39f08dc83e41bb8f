/*@prompt
Compute the dot product of two fp16 vectors but accumulate in fp32 to avoid overflow and precision loss. Load the halves two at a time with __half2. Length 2^21 + 1.
@explanation
Summing millions of products in half precision would lose almost all significant bits (fp16 has an 11-bit significand and a maximum of 65504), so each thread converts a `__half2` pair with `__half22float2` and accumulates in float. The grid-stride loop runs over the `n / 2` pairs; thread 0 adds the odd last element. A block-level shared-memory reduction produces one value per block, which is added to the result with `atomicAdd`. The product of two fp16 values is exact in float, so the CPU reference sums those same products in double and the check allows 1e-4 of the sum of their magnitudes (a few hundred float roundings, each at most 2^-24 of a partial sum).
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

constexpr int kThreads = 256;

__global__ void dot_half(const __half* a, const __half* b, float* result, int n)
{
    __shared__ float s[kThreads];
    const __half2* a2 = reinterpret_cast<const __half2*>(a);
    const __half2* b2 = reinterpret_cast<const __half2*>(b);
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 2; i += blockDim.x * gridDim.x) {
        float2 fa = __half22float2(a2[i]);
        float2 fb = __half22float2(b2[i]);
        acc += fa.x * fb.x + fa.y * fb.y;
    }
    if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0)
        acc += __half2float(a[n - 1]) * __half2float(b[n - 1]);

    s[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = kThreads / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(result, s[0]);
}

int main()
{
    const int n = (1 << 21) + 1;
    std::vector<__half> a(n), b(n);
    for (int i = 0; i < n; ++i) {
        a[i] = __float2half(0.01f * (float)((i * 17) % 201 - 20));  // mostly positive: little cancellation
        b[i] = __float2half(0.5f + 0.001f * (float)(i % 1000));
    }
    double ref = 0.0, mag = 0.0;
    for (int i = 0; i < n; ++i) {
        double p = (double)__half2float(a[i]) * (double)__half2float(b[i]);
        ref += p;
        mag += std::fabs(p);
    }

    __half *da, *db;
    float* dres;
    CUDA_CHECK(cudaMalloc(&da, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&db, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dres, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dres, 0, sizeof(float)));

    int blocks = 512;
    dot_half<<<blocks, kThreads>>>(da, db, dres, n);
    CUDA_CHECK(cudaGetLastError());
    float got = 0.0f;
    CUDA_CHECK(cudaMemcpy(&got, dres, sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(da); cudaFree(db); cudaFree(dres);

    printf("gpu %.6f cpu %.6f\n", got, ref);
    if (!(std::fabs(got - ref) <= 1e-4 * mag)) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
