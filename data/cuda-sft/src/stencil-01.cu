/*@prompt
1D stencil with radius 3: out[i] = sum_{k=-3..3} w[k+3] * in[i+k], with zero padding outside the array. Put the 7 weights in constant memory and stage each block's input, including the halo, in shared memory.
@explanation
Every output needs 7 neighbouring inputs, so a block of 256 threads loads its 256 inputs plus 3 halo elements on each side (262 values) into shared memory once, and each thread then reads its 7 inputs from there instead of from global memory. The first `RADIUS` threads of the block also load the left and right halo; positions outside the array are stored as 0, which implements the zero padding. The weights are the same for every thread, so they live in `__constant__` memory: when all threads of a warp read the same constant address the access is broadcast from the constant cache. They are set once with `cudaMemcpyToSymbol`. A `__syncthreads()` separates loading from computing. A float sum of seven products is within 7 * 2^-24 of the sum of their magnitudes, so the check against the double-precision CPU stencil can be tight: 1e-6 of that sum.
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

#define RADIUS 3
#define BLOCK 256

__constant__ float c_weights[2 * RADIUS + 1];

__global__ void stencil_1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[BLOCK + 2 * RADIUS];
    const int g = blockIdx.x * BLOCK + threadIdx.x;
    const int l = threadIdx.x + RADIUS;

    tile[l] = (g < n) ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = g - RADIUS, right = g + BLOCK;
        tile[l - RADIUS] = (left >= 0) ? in[left] : 0.0f;
        tile[l + BLOCK] = (right < n) ? in[right] : 0.0f;
    }
    __syncthreads();

    if (g < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = -RADIUS; k <= RADIUS; ++k) acc += c_weights[k + RADIUS] * tile[l + k];
        out[g] = acc;
    }
}

int main()
{
    const int n = (1 << 24) + 5;
    const float w[2 * RADIUS + 1] = {0.05f, 0.1f, 0.2f, 0.3f, 0.2f, 0.1f, 0.05f};
    std::vector<float> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = std::sin(0.001f * i) + 0.5f * std::cos(0.37f * i);

    CUDA_CHECK(cudaMemcpyToSymbol(c_weights, w, sizeof(w)));
    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int blocks = (n + BLOCK - 1) / BLOCK;
    stencil_1d<<<blocks, BLOCK>>>(d_in, d_out, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);

    long bad = 0;
    for (int i = 0; i < n; ++i) {
        double ref = 0.0, mag = 0.0;
        for (int k = -RADIUS; k <= RADIUS; ++k) {
            int j = i + k;
            double v = (j >= 0 && j < n) ? in[j] : 0.0;
            ref += w[k + RADIUS] * v;
            mag += std::fabs(w[k + RADIUS] * v);
        }
        if (!(std::fabs(out[i] - ref) <= 1e-6 * mag + 1e-30)) ++bad;
    }
    if (bad) {
        printf("FAIL: %ld outputs\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
