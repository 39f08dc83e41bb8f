/*@prompt
RoPE in the GPT-NeoX / LLaMA "rotate_half" layout: for head_dim D, dimension i is paired with i + D/2. Compute the angles on the fly from an inv_freq table (float, like the buffer Hugging Face models keep) instead of a cos/sin cache. Input x is [tokens=8192, heads=16, D=64], token t has position t. Write to a separate output.
@explanation
In the rotate_half layout, `out[i] = x[i] cos a_i - x[i + D/2] sin a_i` and `out[i + D/2] = x[i + D/2] cos a_i + x[i] sin a_i` for i < D/2, with `a_i = pos * inv_freq[i]`. One thread handles one pair (token, head, i); consecutive threads take consecutive i, so the two halves of a head are each read contiguously. The angle is formed exactly as the model would form it, a float product `(float)pos * inv_freq[i]`, and `sincosf` evaluates both trigonometric functions at once. Without `-use_fast_math` `sincosf` performs a full range reduction, which matters because angles reach several thousand radians for late positions. The host forms the same float angle, evaluates sin and cos in double and rotates in double; the tolerance is 1e-5 relative to the pair's magnitude, covering the few-ulp error of `sincosf`.
@after
Keep the angle computation in float32 even when q and k are fp16 or bf16: fp16 cannot represent positions above 2048 exactly, bf16 none above 256.
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

__global__ void rope_neox(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ inv_freq,
                          int tokens, int heads, int D)
{
    const int half = D / 2;
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // (token, head, i)
    if (p >= (long long)tokens * heads * half) return;
    const int i = (int)(p % half);
    const long long th = p / half;  // token * heads + head
    const int pos = (int)(th / heads);
    float s, c;
    sincosf((float)pos * inv_freq[i], &s, &c);
    const float* xh = x + th * D;
    float* yh = y + th * D;
    const float a = xh[i], b = xh[i + half];
    yh[i] = a * c - b * s;
    yh[i + half] = b * c + a * s;
}

int main()
{
    const int tokens = 8192, heads = 16, D = 64, half = D / 2;
    const size_t n = (size_t)tokens * heads * D;
    std::vector<float> x(n), y(n), inv_freq(half);
    for (int i = 0; i < half; ++i) inv_freq[i] = (float)(1.0 / std::pow(10000.0, 2.0 * i / D));
    for (size_t k = 0; k < n; ++k) x[k] = std::cos(0.013f * (float)(k % 65537)) * 2.0f;

    float *dx, *dy, *df;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&df, half * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(df, inv_freq.data(), half * sizeof(float), cudaMemcpyHostToDevice));
    const long long pairs = (long long)tokens * heads * half;
    const int threads = 256;
    rope_neox<<<(unsigned)((pairs + threads - 1) / threads), threads>>>(dx, dy, df, tokens, heads, D);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dy); cudaFree(df);

    long bad = 0;
    for (int t = 0; t < tokens; ++t)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < half; ++i) {
                size_t base = ((size_t)t * heads + h) * D;
                double ang = (double)((float)t * inv_freq[i]);
                double c = std::cos(ang), s = std::sin(ang), a = x[base + i], b = x[base + i + half];
                double tol = 1e-5 * (std::fabs(a) + std::fabs(b)) + 1e-7;
                bad += !(std::fabs(y[base + i] - (a * c - b * s)) <= tol);
                bad += !(std::fabs(y[base + i + half] - (b * c + a * s)) <= tol);
            }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
