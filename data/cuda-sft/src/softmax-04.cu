/*@prompt
Write a CUDA kernel for causal (masked) attention softmax. Input: scores of shape [heads=16, T=256, T=256] (float, row-major). For each query row i, apply scale 1/sqrt(64) to the scores, mask out keys j > i, and compute softmax over j <= i; masked positions must be exactly 0 in the output. Use one warp per row.
@explanation
Row i of every head only attends to the keys `0..i`, so the warp reduces over those columns only: lane l visits columns l, l+32, ... up to i, takes the maximum of the scaled scores, then the sum of `exp(s - max)`, with `__shfl_xor_sync` butterflies so every lane has both values. The write pass covers the whole row: columns up to i get `exp(s - max) / sum`, columns past i get an explicit 0, which is what a consumer multiplying by V expects. Row 0 still has one valid key (itself), so the sum is never zero. With 8 warps per 256-thread block the grid has `heads * T / 8` blocks; a row's head and query index come from dividing the flat row number by T. The CPU reference masks and normalises in double; the tolerance is 1e-5 relative plus 1e-9 absolute.
@*/
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

__global__ void causal_softmax(const float* __restrict__ scores, float* __restrict__ probs,
                               int n_rows, int T, float scale)
{
    const int row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);  // flat (head, query) row
    const int lane = threadIdx.x & 31;
    if (row >= n_rows) return;
    const int q = row % T;  // query position: keys 0..q are visible
    const float* s = scores + (size_t)row * T;
    float* p = probs + (size_t)row * T;

    float m = -INFINITY;
    for (int j = lane; j <= q; j += 32) m = fmaxf(m, s[j] * scale);
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));

    float sum = 0.0f;
    for (int j = lane; j <= q; j += 32) sum += expf(s[j] * scale - m);
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, off);

    const float inv = 1.0f / sum;
    for (int j = lane; j < T; j += 32) p[j] = (j <= q) ? expf(s[j] * scale - m) * inv : 0.0f;
}

int main()
{
    const int heads = 16, T = 256, head_dim = 64;
    const int n_rows = heads * T;
    const float scale = 1.0f / std::sqrt((float)head_dim);
    std::vector<float> scores((size_t)n_rows * T), probs(scores.size());
    for (size_t i = 0; i < scores.size(); ++i) scores[i] = 8.0f * std::sin(0.001f * (float)(i % 65537) * 7.0f);

    float *d_s, *d_p;
    CUDA_CHECK(cudaMalloc(&d_s, scores.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_p, probs.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_s, scores.data(), scores.size() * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 256;
    const int blocks = (n_rows + threads / 32 - 1) / (threads / 32);
    causal_softmax<<<blocks, threads>>>(d_s, d_p, n_rows, T, scale);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(probs.data(), d_p, probs.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_s);
    cudaFree(d_p);

    long bad = 0;
    for (int row = 0; row < n_rows; ++row) {
        int q = row % T;
        const float* s = &scores[(size_t)row * T];
        double m = -INFINITY, sum = 0.0;
        for (int j = 0; j <= q; ++j) m = std::fmax(m, (double)(s[j] * scale));
        for (int j = 0; j <= q; ++j) sum += std::exp((double)(s[j] * scale) - m);
        for (int j = 0; j < T; ++j) {
            double ref = (j <= q) ? std::exp((double)(s[j] * scale) - m) / sum : 0.0;
            float got = probs[(size_t)row * T + j];
            if ((j > q && got != 0.0f) || !(std::fabs(got - ref) <= 1e-5 * ref + 1e-9)) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
