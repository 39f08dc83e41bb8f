/*@prompt
Write a numerically stable row-wise softmax kernel for a [1024, 1000] float matrix. Use one block of 256 threads per row and shared-memory reductions for the row max and the row sum.
@explanation
Softmax is `exp(x_j - m) / sum_k exp(x_k - m)` with `m` the row maximum; subtracting `m` keeps every exponent at or below zero, so nothing overflows, and the result is mathematically unchanged. The block makes three passes over its row: a strided max that is reduced in shared memory, a strided sum of `exp(x - m)` reduced the same way, and a final pass writing the normalised values. Each reduction reuses the same shared buffer, which is why a `__syncthreads()` separates reading the previous result from overwriting the buffer. The CPU reference computes in double; every probability must match to 1e-5 relative (plus 1e-9 absolute for the vanishing ones), since the float path rounds only a few times per output and its row sum is a short tree.
@after
When rows fit in registers (say up to a few thousand columns) the warp-per-row variant avoids the shared-memory round trips entirely.
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

#define THREADS 256

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols)
{
    __shared__ float red[THREADS];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    const int t = threadIdx.x;

    float m = -INFINITY;
    for (int c = t; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    red[t] = m;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    const float row_max = red[0];
    __syncthreads();  // everyone has read red[0] before it is reused

    float sum = 0.0f;
    for (int c = t; c < cols; c += THREADS) sum += expf(xr[c] - row_max);
    red[t] = sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    const float inv_sum = 1.0f / red[0];

    for (int c = t; c < cols; c += THREADS) yr[c] = expf(xr[c] - row_max) * inv_sum;
}

int main()
{
    const int rows = 1024, cols = 1000;
    std::vector<float> x((size_t)rows * cols), y(x.size());
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            x[(size_t)r * cols + c] = 20.0f * std::sin(0.013f * c * (r % 17 + 1)) + 0.5f * r;  // large logits

    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    softmax_rows<<<rows, THREADS>>>(dx, dy, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx);
    cudaFree(dy);

    int bad = 0;
    for (int r = 0; r < rows; ++r) {
        const float* xr = &x[(size_t)r * cols];
        double m = xr[0], s = 0.0;
        for (int c = 1; c < cols; ++c) m = std::fmax(m, (double)xr[c]);
        for (int c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
        for (int c = 0; c < cols; ++c) {
            double ref = std::exp(xr[c] - m) / s;
            if (!(std::fabs(y[(size_t)r * cols + c] - ref) <= 1e-5 * ref + 1e-9)) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %d values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
