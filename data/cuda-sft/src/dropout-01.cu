/*@prompt
Implement inverted dropout (p = 0.3) for a float tensor of 16M elements without cuRAND: use a stateless hash of (seed, element index) as the random number, so the result is reproducible and the CPU can check it exactly. Also output the keep mask as uint8.
@explanation
A counter-based generator needs no per-thread state: the random number for element i is a hash of `seed` and `i`. Here the index is mixed with the seed and passed through the MurmurHash3 32-bit finaliser (xor-shifts and multiplies that make every output bit depend on every input bit); the top 24 bits become a uniform float in [0, 1). An element is kept when that number is at least p, and kept values are scaled by `1 / (1 - p)` so the expected output equals the input ("inverted" dropout: no rescaling at inference). Because the hash is a plain `__host__ __device__` function, the CPU can regenerate the identical mask and the check is exact; it also verifies that the kept fraction is within 0.1% of 0.7.
@after
Because the mask is a pure function of (seed, index), the backward pass can recompute it instead of storing it; see the fp16 variant.
@*/
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

__host__ __device__ inline float uniform_hash(uint32_t seed, uint32_t i)
{
    uint32_t h = seed ^ (i * 0x9E3779B9u);
    h ^= h >> 16; h *= 0x85EBCA6Bu;
    h ^= h >> 13; h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return (float)(h >> 8) * (1.0f / 16777216.0f);  // [0, 1)
}

__global__ void dropout_fwd(const float* __restrict__ x, float* __restrict__ y, uint8_t* __restrict__ mask,
                            int n, float p, uint32_t seed)
{
    const float scale = 1.0f / (1.0f - p);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        bool keep = uniform_hash(seed, (uint32_t)i) >= p;
        mask[i] = keep;
        y[i] = keep ? x[i] * scale : 0.0f;
    }
}

int main()
{
    const int n = 16 << 20;
    const float p = 0.3f;
    const uint32_t seed = 0xC0FFEEu;
    std::vector<float> x(n), y(n);
    std::vector<uint8_t> mask(n);
    for (int i = 0; i < n; ++i) x[i] = 1.0f + (float)(i % 100) * 0.01f;

    float *dx, *dy;
    uint8_t* dm;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dm, n));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    dropout_fwd<<<2048, 256>>>(dx, dy, dm, n, p, seed);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(mask.data(), dm, n, cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dy); cudaFree(dm);

    const float scale = 1.0f / (1.0f - p);
    long bad = 0, kept = 0;
    for (int i = 0; i < n; ++i) {
        bool keep = uniform_hash(seed, (uint32_t)i) >= p;
        kept += keep;
        bad += mask[i] != (uint8_t)keep;
        bad += y[i] != (keep ? x[i] * scale : 0.0f);
    }
    double frac = (double)kept / n;
    printf("kept fraction %.5f (expected %.2f)\n", frac, 1.0 - p);
    if (bad || !(std::fabs(frac - (1.0 - p)) <= 1e-3)) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
