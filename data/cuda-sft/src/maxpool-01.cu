/*@prompt
2x2 max pooling with stride 2 on an NCHW float tensor of shape [32, 64, 112, 112] (output [32, 64, 56, 56]). One thread per output element.
@explanation
The output has `N*C*OH*OW` elements; the kernel flattens that index with a 1D grid and recovers (n, c, oy, ox) by division and modulo, so a warp covers consecutive `ox` positions of the same row. Each thread reads its 2x2 window starting at `(2*oy, 2*ox)` in the same (n, c) plane and keeps the maximum. With stride equal to the window size and even input dimensions there is no padding and every window is complete. Pooling selects an input value, so the result is exact and compared with `==`. The index is kept in `size_t` because the tensor has 25.7 million input elements and larger batches would overflow `int` products.
@*/
#include <algorithm>
#include <cmath>
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

__global__ void maxpool2x2(const float* __restrict__ in, float* __restrict__ out, int NC, int H, int W)
{
    const int OH = H / 2, OW = W / 2;
    const size_t total = (size_t)NC * OH * OW;
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int ox = (int)(idx % OW);
    const int oy = (int)((idx / OW) % OH);
    const size_t nc = idx / ((size_t)OW * OH);
    const float* p = in + nc * H * W + (size_t)(2 * oy) * W + 2 * ox;
    out[idx] = fmaxf(fmaxf(p[0], p[1]), fmaxf(p[W], p[W + 1]));
}

int main()
{
    const int N = 32, C = 64, H = 112, W = 112;
    const int OH = H / 2, OW = W / 2;
    std::vector<float> in((size_t)N * C * H * W), out((size_t)N * C * OH * OW);
    for (size_t i = 0; i < in.size(); ++i) in[i] = std::sin(0.37f * (float)(i % 100003)) * 3.0f;

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, in.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 256;
    const unsigned blocks = (unsigned)((out.size() + threads - 1) / threads);
    maxpool2x2<<<blocks, threads>>>(d_in, d_out, N * C, H, W);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);

    long bad = 0;
    for (int nc = 0; nc < N * C; ++nc)
        for (int oy = 0; oy < OH; ++oy)
            for (int ox = 0; ox < OW; ++ox) {
                const float* p = &in[(size_t)nc * H * W + (size_t)(2 * oy) * W + 2 * ox];
                float ref = std::max(std::max(p[0], p[1]), std::max(p[W], p[W + 1]));
                bad += out[((size_t)nc * OH + oy) * OW + ox] != ref;
            }
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
