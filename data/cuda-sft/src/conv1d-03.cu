/*@prompt
Write a causal depthwise conv1d with a fused SiLU, the kind used in Mamba blocks: x is [batch=4, channels=512, length=4096], each channel has its own 4-tap filter w[c][0..3] and bias b[c], y[l] = silu(b + sum_k w[k] * x[l - 3 + k]) with zeros before the start of the sequence. Stage the inputs in shared memory including the left halo.
@explanation
"Depthwise" means no mixing between channels: channel c of the output only sees channel c of the input, so each (batch, channel) row is an independent 1D problem, enumerated by `blockIdx.y`. "Causal" means output l depends on inputs `l-3 .. l` only, so the halo is on the left: a block of 128 outputs loads 128 + 3 inputs into shared memory, with the three threads `tid < K - 1` fetching the extra left values and substituting 0 before position 0. The 4 taps and the bias of the channel are read once into registers. The SiLU, `v / (1 + exp(-v))`, is applied before the single store, which saves writing and re-reading the pre-activation. The CPU reference runs in double; the tolerance is 1e-5 relative plus 5e-6 absolute (the pre-activation is a float sum of five terms of size up to about 3).
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

constexpr int K = 4;
constexpr int TILE = 128;

__global__ void causal_dwconv_silu(const float* __restrict__ x, const float* __restrict__ w,
                                   const float* __restrict__ bias, float* __restrict__ y, int C, int L)
{
    __shared__ float xs[TILE + K - 1];
    const int row = blockIdx.y;  // (batch, channel) pair
    const int c = row % C;
    const float* xr = x + (size_t)row * L;
    const int l0 = blockIdx.x * TILE;
    const int l = l0 + threadIdx.x;

    xs[threadIdx.x + K - 1] = (l < L) ? xr[l] : 0.0f;
    if (threadIdx.x < K - 1) {
        int p = l0 - (K - 1) + threadIdx.x;
        xs[threadIdx.x] = (p >= 0) ? xr[p] : 0.0f;
    }
    __syncthreads();
    if (l >= L) return;

    float acc = bias[c];
#pragma unroll
    for (int k = 0; k < K; ++k) acc += w[c * K + k] * xs[threadIdx.x + k];
    y[(size_t)row * L + l] = acc / (1.0f + expf(-acc));
}

int main()
{
    const int B = 4, C = 512, L = 4096;
    std::vector<float> x((size_t)B * C * L), w(C * K), bias(C), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = 2.0f * std::sin(0.0123f * (float)(i % 10007));
    for (int i = 0; i < C * K; ++i) w[i] = 0.3f * std::cos(0.5f * i);
    for (int c = 0; c < C; ++c) bias[c] = 0.001f * c - 0.2f;

    float *dx, *dw, *db, *dy;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dw, w.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, bias.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 grid((L + TILE - 1) / TILE, B * C);
    causal_dwconv_silu<<<grid, TILE>>>(dx, dw, db, dy, C, L);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dy);

    long bad = 0;
    for (int row = 0; row < B * C; ++row) {
        int c = row % C;
        for (int l = 0; l < L; ++l) {
            double v = bias[c];
            for (int k = 0; k < K; ++k) {
                int p = l - (K - 1) + k;
                if (p >= 0) v += (double)w[c * K + k] * x[(size_t)row * L + p];
            }
            double ref = v / (1.0 + std::exp(-v));
            if (!(std::fabs(y[(size_t)row * L + l] - ref) <= 1e-5 * std::fabs(ref) + 5e-6)) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %ld outputs\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
