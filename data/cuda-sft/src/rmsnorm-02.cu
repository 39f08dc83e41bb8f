/*@prompt
Write an fp16 RMSNorm where each warp normalizes one token (hidden size 1024). Use cooperative groups: tiled_partition<32> and cg::reduce for the sum of squares. Accumulate in float.
@explanation
A warp-sized `thread_block_tile<32>` handles one token: each lane converts its 32 strided fp16 values to float and accumulates their squares, and `cg::reduce(warp, ss, cg::plus<float>())` returns the total to every lane of the tile, so no shared memory or block barrier is involved. The scale `rsqrt(ss / hidden + eps)` is applied in float together with the fp16 weight, and the product is rounded to half once at the store. Eight tokens share a 256-thread block, and `meta_group_rank()` tells each tile which of them it owns. The check uses the same half inputs in double and allows 2e-3 relative plus 1e-3 absolute.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                         \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

__global__ void rmsnorm_half_warp(const __half* __restrict__ x, const __half* __restrict__ w,
                                  __half* __restrict__ y, int tokens, int hidden, float eps)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const int token = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (token >= tokens) return;

    const __half* xr = x + (size_t)token * hidden;
    float ss = 0.0f;
    for (int c = warp.thread_rank(); c < hidden; c += 32) {
        float v = __half2float(xr[c]);
        ss += v * v;
    }
    ss = cg::reduce(warp, ss, cg::plus<float>());
    const float scale = rsqrtf(ss / hidden + eps);

    __half* yr = y + (size_t)token * hidden;
    for (int c = warp.thread_rank(); c < hidden; c += 32)
        yr[c] = __float2half(__half2float(xr[c]) * scale * __half2float(w[c]));
}

int main()
{
    const int tokens = 16384, hidden = 1024;
    const float eps = 1e-5f;
    std::vector<__half> x((size_t)tokens * hidden), w(hidden), y(x.size());
    for (int c = 0; c < hidden; ++c) w[c] = __float2half(1.0f + 0.25f * std::sin(0.01f * c));
    for (int t = 0; t < tokens; ++t)
        for (int c = 0; c < hidden; ++c)
            x[(size_t)t * hidden + c] = __float2half((1 + t % 4) * std::cos(0.37f * c + 0.11f * t));

    __half *dx, *dw, *dy;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dw, w.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dw, w.data(), w.size() * sizeof(__half), cudaMemcpyHostToDevice));

    const int threads = 256;
    const int tokens_per_block = threads / 32;
    const int blocks = (tokens + tokens_per_block - 1) / tokens_per_block;
    rmsnorm_half_warp<<<blocks, threads>>>(dx, dw, dy, tokens, hidden, eps);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dw); cudaFree(dy);

    long bad = 0;
    for (int t = 0; t < tokens; ++t) {
        double ss = 0.0;
        for (int c = 0; c < hidden; ++c) {
            double v = __half2float(x[(size_t)t * hidden + c]);
            ss += v * v;
        }
        double scale = 1.0 / std::sqrt(ss / hidden + eps);
        for (int c = 0; c < hidden; ++c) {
            double ref = __half2float(x[(size_t)t * hidden + c]) * scale * __half2float(w[c]);
            double got = __half2float(y[(size_t)t * hidden + c]);
            if (!(std::fabs(got - ref) <= 2e-3 * std::fabs(ref) + 1e-3)) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
