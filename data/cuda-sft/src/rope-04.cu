/*@prompt
Partial rotary embeddings (as in GPT-NeoX and Phi models): only the first rotary_dim = 32 of the head_dim = 80 features are rotated (rotate_half layout within those 32), the remaining 48 pass through unchanged. Write the forward kernel and its backward (which rotates by the negative angle), as one template with a bool parameter, and check both.
@explanation
Within the rotated slice, feature i (i < 16) pairs with i + 16; features 32..79 are copied untouched, which matters when the output is a separate buffer. Rotation is orthogonal, so its gradient is the rotation by the opposite angle: the backward pass is the forward pass with `sin` negated, and a `template <bool kInverse>` parameter selects that at compile time without a runtime branch. A block handles one (token, head) row of 80 features with 64 threads: the first 16 threads do the rotation pairs, and all threads copy the pass-through features with a strided loop. The test checks the forward result against a double-precision CPU rotation and checks that backward(forward(x)) returns x to within 1e-5, which also validates the sign convention of the backward kernel.
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

constexpr int D = 80, R = 32, RH = R / 2;

template <bool kInverse>
__global__ void partial_rope(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ cos_t,
                             const float* __restrict__ sin_t, int heads)
{
    const int row = blockIdx.x;  // token * heads + head
    const int pos = row / heads;
    const float* xr = x + (size_t)row * D;
    float* yr = y + (size_t)row * D;
    const int i = threadIdx.x;
    if (i < RH) {
        const float c = cos_t[pos * RH + i];
        const float s = kInverse ? -sin_t[pos * RH + i] : sin_t[pos * RH + i];
        const float a = xr[i], b = xr[i + RH];
        yr[i] = a * c - b * s;
        yr[i + RH] = b * c + a * s;
    }
    for (int j = R + i; j < D; j += blockDim.x) yr[j] = xr[j];  // pass-through features
}

int main()
{
    const int tokens = 4096, heads = 32;
    const size_t n = (size_t)tokens * heads * D;
    std::vector<float> x(n), y(n), back(n), cos_t(tokens * RH), sin_t(tokens * RH);
    for (int t = 0; t < tokens; ++t)
        for (int i = 0; i < RH; ++i) {
            double a = t * std::pow(10000.0, -2.0 * i / R);
            cos_t[t * RH + i] = (float)std::cos(a);
            sin_t[t * RH + i] = (float)std::sin(a);
        }
    for (size_t e = 0; e < n; ++e) x[e] = std::sin(0.019f * (float)(e % 30011)) + 0.2f;

    float *dx, *dy, *db, *dc, *ds;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dc, cos_t.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ds, sin_t.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc, cos_t.data(), cos_t.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(ds, sin_t.data(), sin_t.size() * sizeof(float), cudaMemcpyHostToDevice));

    const int rows = tokens * heads;
    partial_rope<false><<<rows, 64>>>(dx, dy, dc, ds, heads);
    partial_rope<true><<<rows, 64>>>(dy, db, dc, ds, heads);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back.data(), db, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dy); cudaFree(db); cudaFree(dc); cudaFree(ds);

    long bad = 0;
    for (int row = 0; row < rows; ++row) {
        const int t = row / heads;
        const size_t b = (size_t)row * D;
        for (int i = 0; i < RH; ++i) {
            double c = cos_t[t * RH + i], s = sin_t[t * RH + i], a = x[b + i], bb = x[b + i + RH];
            double tol = 1e-6 * (std::fabs(a) + std::fabs(bb));
            bad += !(std::fabs(y[b + i] - (a * c - bb * s)) <= tol);
            bad += !(std::fabs(y[b + i + RH] - (bb * c + a * s)) <= tol);
        }
        for (int j = R; j < D; ++j) bad += y[b + j] != x[b + j];
        for (int j = 0; j < D; ++j) bad += !(std::fabs(back[b + j] - x[b + j]) <= 1e-5);
    }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
