/*@prompt
Fast softmax for short rows: the input is [65536, 128] floats. Use one warp per row, keep the row in registers (4 values per lane), and use __shfl_xor_sync for the max and sum so every lane gets the result without shared memory.
@explanation
A 128-wide row is exactly four values per lane, so a warp can hold it entirely in registers: lane l owns columns l, l+32, l+64 and l+96, which keeps every load instruction of the warp on 32 consecutive floats. A butterfly reduction with `__shfl_xor_sync` leaves the full result in every lane (unlike `__shfl_down_sync`, which only fills lane 0), so all lanes can use the max and then the sum immediately, with no shared memory and no `__syncthreads()`. Each 256-thread block processes 8 rows. The reference is computed in double; each probability must match to 1e-5 relative plus 1e-9 absolute.
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

constexpr int kCols = 128;
constexpr int kPerLane = kCols / 32;

__global__ void softmax_warp_per_row(const float* __restrict__ x, float* __restrict__ y, int rows)
{
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* xr = x + (size_t)row * kCols;

    float v[kPerLane];
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
        v[k] = xr[lane + 32 * k];
        m = fmaxf(m, v[k]);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));

    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) {
        v[k] = expf(v[k] - m);
        s += v[k];
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);

    const float inv = 1.0f / s;
    float* yr = y + (size_t)row * kCols;
#pragma unroll
    for (int k = 0; k < kPerLane; ++k) yr[lane + 32 * k] = v[k] * inv;
}

int main()
{
    const int rows = 65536;
    std::vector<float> x((size_t)rows * kCols), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = 6.0f * std::cos(0.7f * (float)(i % 1237)) - 2.0f;

    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 256;
    const int rows_per_block = threads / 32;
    const int blocks = (rows + rows_per_block - 1) / rows_per_block;
    softmax_warp_per_row<<<blocks, threads>>>(dx, dy, rows);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx);
    cudaFree(dy);

    long bad = 0;
    for (int r = 0; r < rows; ++r) {
        const float* xr = &x[(size_t)r * kCols];
        double m = -INFINITY, s = 0.0;
        for (int c = 0; c < kCols; ++c) m = std::fmax(m, (double)xr[c]);
        for (int c = 0; c < kCols; ++c) s += std::exp(xr[c] - m);
        for (int c = 0; c < kCols; ++c) {
            double ref = std::exp(xr[c] - m) / s;
            if (!(std::fabs(y[(size_t)r * kCols + c] - ref) <= 1e-5 * ref + 1e-9)) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
