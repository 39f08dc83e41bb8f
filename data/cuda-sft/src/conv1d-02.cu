/*@prompt
Implement the forward pass of nn.Conv1d(in_channels=64, out_channels=128, kernel_size=5, padding=2, bias=True) in CUDA for an input of shape [2, 64, 2048] (NCL layout). Load the weights of one output channel into shared memory per block.
@explanation
Output element (b, co, l) is `bias[co] + sum_ci sum_k w[co][ci][k] * x[b][ci][l + k - 2]`, with zero padding where `l + k - 2` falls outside `[0, L)`. The grid is 2D: `blockIdx.y` enumerates the (b, co) pairs and `blockIdx.x` tiles the length, so every thread of a block shares one output channel. That block's 64 x 5 weights are loaded once into dynamically sized shared memory (`Cin * K` floats, passed at launch) and then read by all threads; within a warp everyone reads the same weight at the same time, a broadcast. Consecutive threads handle consecutive positions l, so their input reads are coalesced. Each output is a 320-term sum, so the check uses the float error bound 321 * 2^-24 times the sum of magnitudes.
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

__global__ void conv1d_ncl(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                           float* __restrict__ y, int Cin, int Cout, int L, int K, int pad)
{
    extern __shared__ float w_s[];  // Cin * K weights of this block's output channel
    const int b = blockIdx.y / Cout, co = blockIdx.y % Cout;
    for (int i = threadIdx.x; i < Cin * K; i += blockDim.x) w_s[i] = w[(size_t)co * Cin * K + i];
    __syncthreads();

    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= L) return;
    float acc = bias[co];
    for (int ci = 0; ci < Cin; ++ci) {
        const float* xr = x + ((size_t)b * Cin + ci) * L;
        for (int k = 0; k < K; ++k) {
            int pos = l + k - pad;
            if (pos >= 0 && pos < L) acc += w_s[ci * K + k] * xr[pos];
        }
    }
    y[((size_t)b * Cout + co) * L + l] = acc;
}

int main()
{
    const int B = 2, Cin = 64, Cout = 128, L = 2048, K = 5, pad = 2;
    std::vector<float> x((size_t)B * Cin * L), w((size_t)Cout * Cin * K), bias(Cout), y((size_t)B * Cout * L);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.013f * (float)(i % 7919));
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * std::cos(0.7f * (float)i);
    for (int c = 0; c < Cout; ++c) bias[c] = 0.01f * c - 0.5f;

    float *dx, *dw, *db, *dy;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dw, w.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, bias.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(256);
    dim3 grid((L + block.x - 1) / block.x, B * Cout);
    size_t smem = (size_t)Cin * K * sizeof(float);
    conv1d_ncl<<<grid, block, smem>>>(dx, dw, db, dy, Cin, Cout, L, K, pad);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dw); cudaFree(db); cudaFree(dy);

    long bad = 0;
    const double u = std::ldexp(1.0, -24);
    for (int b = 0; b < B; ++b)
        for (int co = 0; co < Cout; ++co)
            for (int l = 0; l < L; ++l) {
                double ref = bias[co], mag = std::fabs(bias[co]);
                for (int ci = 0; ci < Cin; ++ci)
                    for (int k = 0; k < K; ++k) {
                        int pos = l + k - pad;
                        if (pos < 0 || pos >= L) continue;
                        double p = (double)w[((size_t)co * Cin + ci) * K + k] * x[((size_t)b * Cin + ci) * L + pos];
                        ref += p;
                        mag += std::fabs(p);
                    }
                if (!(std::fabs(y[((size_t)b * Cout + co) * L + l] - ref) <= (Cin * K + 1) * u * mag)) ++bad;
            }
    if (bad) {
        printf("FAIL: %ld outputs\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
