/*@prompt
Direct 1D convolution (valid mode, no padding) of a signal of 4M floats with a 31-tap filter: y[i] = sum_k h[k] * x[i + k], output length n - 30. Put the filter in __constant__ memory.
@explanation
This is the cross-correlation form used by deep-learning frameworks (the filter is not flipped). The output has `n - K + 1` samples and each thread computes one of them, reading `K` consecutive inputs. The taps are identical for every thread and are read in lockstep, so `__constant__` memory is ideal: a warp reading the same constant address gets it in one broadcast from the constant cache. Neighbouring threads read overlapping windows, which the L1 cache mostly absorbs; a shared-memory tile would remove that redundancy for long filters. The filter is uploaded once with `cudaMemcpyToSymbol`. The float sum of 31 products is within 31 * 2^-24 of the sum of their magnitudes, which sets the tolerance.
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

constexpr int K = 31;
__constant__ float c_taps[K];

__global__ void conv1d_valid(const float* __restrict__ x, float* __restrict__ y, int n_out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_out) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) acc += c_taps[k] * x[i + k];
    y[i] = acc;
}

int main()
{
    const int n = 4 << 20;
    const int n_out = n - K + 1;
    std::vector<float> x(n), y(n_out), h(K);
    for (int k = 0; k < K; ++k) h[k] = std::exp(-0.02f * (k - 15) * (k - 15)) * (k % 2 ? 1.0f : -0.5f);
    for (int i = 0; i < n; ++i) x[i] = std::sin(0.01f * i) + 0.3f * std::sin(0.77f * i);

    CUDA_CHECK(cudaMemcpyToSymbol(c_taps, h.data(), K * sizeof(float)));
    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n_out * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int block = 256;
    conv1d_valid<<<(n_out + block - 1) / block, block>>>(dx, dy, n_out);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, n_out * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx);
    cudaFree(dy);

    long bad = 0;
    const double tol_scale = K * std::ldexp(1.0, -24);
    for (int i = 0; i < n_out; ++i) {
        double ref = 0.0, mag = 0.0;
        for (int k = 0; k < K; ++k) {
            double p = (double)h[k] * x[i + k];
            ref += p;
            mag += std::fabs(p);
        }
        if (!(std::fabs(y[i] - ref) <= tol_scale * mag + 1e-30)) ++bad;
    }
    if (bad) {
        printf("FAIL: %ld outputs\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
