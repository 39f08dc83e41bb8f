/*@prompt
fp16 dropout where the backward pass does not read a stored mask: it regenerates the mask from the same (seed, offset) as the forward pass. p = 0.2, tensor of 4M halves, process two elements per thread with __half2. Show forward and backward kernels and check that they agree.
@explanation
Storing a dropout mask costs a byte (or a bit) per element of memory traffic in both passes; memory-bound kernels such as fused attention instead remember only the seed and an offset and recompute the random numbers in the backward pass. That works because the generator is a pure function of `(seed, offset + element index)`: the forward and backward kernels call the same `__device__` hash, so they make the same keep decision for every element. Each thread handles a `__half2` pair, draws one hash per element, and multiplies by `1/(1-p) = 1.25` with `__hmul2`; a dropped lane is multiplied by 0 instead. The CPU checks both passes exactly against the same hash, and checks that forward and backward dropped the same elements. The product of a half and 1.25, rounded to half, is reproduced exactly on the host by multiplying in float and converting.
@*/
#include <cmath>
#include <cstdint>
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

__host__ __device__ inline bool keep_at(uint64_t seed, uint64_t idx, float p)
{
    uint64_t z = seed + idx * 0x9E3779B97F4A7C15ull;  // splitmix64 finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f) >= p;
}

// Same kernel body for forward (x -> y) and backward (dy -> dx): both scale kept lanes by 1/(1-p).
__global__ void dropout_half2(const __half2* __restrict__ in, __half2* __restrict__ out, int n2,
                              float p, uint64_t seed, uint64_t offset)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    const float scale = 1.0f / (1.0f - p);
    const uint64_t e = offset + 2ull * i;
    const __half2 factor = __floats2half2_rn(keep_at(seed, e, p) ? scale : 0.0f, keep_at(seed, e + 1, p) ? scale : 0.0f);
    out[i] = __hmul2(in[i], factor);
}

int main()
{
    const int n = 4 << 20, n2 = n / 2;
    const float p = 0.2f;
    const uint64_t seed = 42, offset = 1000;  // offset: where this tensor starts in the random stream
    std::vector<__half> x(n), y(n), dy(n), dx(n);
    for (int i = 0; i < n; ++i) {
        x[i] = __float2half((float)((i % 2001) - 1000) / 256.0f);
        dy[i] = __float2half((float)((i % 97) - 48) / 64.0f);
    }

    __half *d_x, *d_y, *d_dy, *d_dx;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_dy, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_dx, n * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_dy, dy.data(), n * sizeof(__half), cudaMemcpyHostToDevice));

    const int threads = 256, blocks = (n2 + threads - 1) / threads;
    dropout_half2<<<blocks, threads>>>((const __half2*)d_x, (__half2*)d_y, n2, p, seed, offset);   // forward
    dropout_half2<<<blocks, threads>>>((const __half2*)d_dy, (__half2*)d_dx, n2, p, seed, offset); // backward
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(__half), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dx.data(), d_dx, n * sizeof(__half), cudaMemcpyDeviceToHost));
    cudaFree(d_x); cudaFree(d_y); cudaFree(d_dy); cudaFree(d_dx);

    const float scale = 1.0f / (1.0f - p);
    long bad = 0, kept = 0;
    for (int i = 0; i < n; ++i) {
        bool keep = keep_at(seed, offset + i, p);
        kept += keep;
        float fy = keep ? __half2float(__float2half(__half2float(x[i]) * scale)) : 0.0f;
        float fdx = keep ? __half2float(__float2half(__half2float(dy[i]) * scale)) : 0.0f;
        bad += __half2float(y[i]) != fy;
        bad += __half2float(dx[i]) != fdx;
        // Consistency: wherever the input was non-zero, y and dx are zero together.
        if (__half2float(x[i]) != 0.0f && __half2float(dy[i]) != 0.0f)
            bad += (__half2float(y[i]) == 0.0f) != (__half2float(dx[i]) == 0.0f);
    }
    printf("kept %.4f\n", (double)kept / n);
    if (bad || !(std::fabs((double)kept / n - (1.0 - p)) <= 2e-3)) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
