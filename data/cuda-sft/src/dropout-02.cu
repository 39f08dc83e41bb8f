/*@prompt
Fused "bias + dropout + residual add" for a transformer: out = residual + dropout(x + bias), x and residual are [tokens=8192, hidden=1024] float, bias is [1024], p = 0.1. Generate the random numbers with Philox4x32-10 (one call gives 4 numbers, use them for 4 consecutive elements loaded as float4). Verify exactly which elements were dropped.
@explanation
Fusing the three element-wise steps means each element is read and written once instead of three times. Philox4x32-10, the counter-based generator that PyTorch's CUDA random ops use (through cuRAND's Philox implementation), turns a 128-bit counter and a 64-bit key into four 32-bit random words with ten rounds of multiply-high / xor mixing; it needs no state, so thread g can simply use counter = g (the index of its group of four elements) and key = seed. One Philox call therefore feeds one `float4` worth of elements, matching the vectorised loads. The generator is written once as a `__host__ __device__` function, so the CPU reproduces the same keep decisions exactly. Kept values are `residual + (x + bias) / (1 - p)`; the device may fuse that multiply-add, so values are compared with a 1e-6 relative tolerance while the set of dropped elements must match exactly.
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

struct U4 { uint32_t v[4]; };

__host__ __device__ inline U4 philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; ++r) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0, hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0; c1 = lo1; c2 = hi0 ^ c3 ^ k1; c3 = lo0;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
    return U4{{c0, c1, c2, c3}};
}

__host__ __device__ inline bool keep_elem(uint32_t word, float p) { return (float)(word >> 8) * (1.0f / 16777216.0f) >= p; }

__global__ void bias_dropout_residual(const float4* __restrict__ x, const float4* __restrict__ bias,
                                      const float4* __restrict__ res, float4* __restrict__ out,
                                      int n4, int hidden4, float p, uint32_t seed_lo, uint32_t seed_hi)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n4) return;
    const U4 r = philox4x32_10((uint32_t)g, 0u, 0u, 0u, seed_lo, seed_hi);
    const float scale = 1.0f / (1.0f - p);
    const float4 a = x[g], b = bias[g % hidden4], s = res[g];
    float4 o;
    o.x = s.x + (keep_elem(r.v[0], p) ? (a.x + b.x) * scale : 0.0f);
    o.y = s.y + (keep_elem(r.v[1], p) ? (a.y + b.y) * scale : 0.0f);
    o.z = s.z + (keep_elem(r.v[2], p) ? (a.z + b.z) * scale : 0.0f);
    o.w = s.w + (keep_elem(r.v[3], p) ? (a.w + b.w) * scale : 0.0f);
    out[g] = o;
}

int main()
{
    const int tokens = 8192, hidden = 1024, n = tokens * hidden;
    const float p = 0.1f;
    const uint32_t seed_lo = 1234u, seed_hi = 5678u;
    std::vector<float> x(n), res(n), bias(hidden), out(n);
    for (int i = 0; i < n; ++i) { x[i] = std::sin(0.001f * i); res[i] = 0.5f * std::cos(0.003f * i); }
    for (int j = 0; j < hidden; ++j) bias[j] = 0.01f * (j % 7) + 0.3f;  // never cancels x exactly

    float *dx, *dres, *dbias, *dout;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dres, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dbias, hidden * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dres, res.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dbias, bias.data(), hidden * sizeof(float), cudaMemcpyHostToDevice));

    const int n4 = n / 4, threads = 256;
    bias_dropout_residual<<<(n4 + threads - 1) / threads, threads>>>(
        (const float4*)dx, (const float4*)dbias, (const float4*)dres, (float4*)dout, n4, hidden / 4, p, seed_lo, seed_hi);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dres); cudaFree(dbias); cudaFree(dout);

    long bad = 0, dropped = 0;
    for (int g = 0; g < n4; ++g) {
        U4 r = philox4x32_10((uint32_t)g, 0u, 0u, 0u, seed_lo, seed_hi);
        for (int k = 0; k < 4; ++k) {
            int i = 4 * g + k;
            bool keep = keep_elem(r.v[k], p);
            dropped += !keep;
            double ref = res[i] + (keep ? ((double)x[i] + bias[i % hidden]) / (1.0 - p) : 0.0);
            if (!keep) bad += out[i] != res[i];  // a dropped element leaves the residual untouched
            else bad += !(std::fabs(out[i] - ref) <= 1e-6 * (std::fabs(res[i]) + std::fabs(ref) + 1.0));
        }
    }
    printf("dropped fraction %.4f\n", (double)dropped / n);
    if (bad || !(std::fabs((double)dropped / n - p) <= 2e-3)) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
