/*@prompt
Per-channel (per-row) int8 weight quantization: W is [out=4096, in=4096] float; for each output row compute its own scale = max|W_row| / 127 and quantize the row. One block per row. Output int8 weights and a float scale per row.
@explanation
Per-channel scales follow each row's own range, so a row with small weights does not lose resolution to one large row elsewhere. Each 256-thread block handles a row in two phases. First it reduces the row's absolute maximum: strided `fmaxf` per thread, a warp shuffle, then a 8-entry shared array that thread 0 folds and publishes as the row scale in shared memory. After `__syncthreads()` every thread quantises its strided elements with `rintf(w / scale)` and clamps to [-127, 127]. An all-zero row would give scale 0 and a division by zero, so the scale is replaced by 1 in that case (the test contains one such row). Codes and scales are exactly reproducible on the host.
@*/
#include <cmath>
#include <cstdint>
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

constexpr int THREADS = 256;

__global__ void quantize_rows(const float* __restrict__ w, int8_t* __restrict__ q, float* __restrict__ scales, int cols)
{
    __shared__ float warp_max[THREADS / 32];
    __shared__ float s_scale;
    const float* row = w + (size_t)blockIdx.x * cols;
    int8_t* qrow = q + (size_t)blockIdx.x * cols;

    float m = 0.0f;
    for (int c = threadIdx.x; c < cols; c += THREADS) m = fmaxf(m, fabsf(row[c]));
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_down_sync(0xffffffff, m, o));
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 1; i < THREADS / 32; ++i) m = fmaxf(m, warp_max[i]);
        float scale = m > 0.0f ? m / 127.0f : 1.0f;
        s_scale = scale;
        scales[blockIdx.x] = scale;
    }
    __syncthreads();
    const float scale = s_scale;
    for (int c = threadIdx.x; c < cols; c += THREADS)
        qrow[c] = (int8_t)fminf(fmaxf(rintf(row[c] / scale), -127.0f), 127.0f);
}

int main()
{
    const int rows = 4096, cols = 4096;
    std::vector<float> w((size_t)rows * cols), scales(rows);
    std::vector<int8_t> q(w.size());
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            w[(size_t)r * cols + c] = (r == 77) ? 0.0f : (0.01f + 0.001f * (r % 50)) * std::sin(0.37f * c + r);

    float *dw, *ds;
    int8_t* dq;
    CUDA_CHECK(cudaMalloc(&dw, w.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dq, q.size()));
    CUDA_CHECK(cudaMalloc(&ds, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
    quantize_rows<<<rows, THREADS>>>(dw, dq, ds, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(q.data(), dq, q.size(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(scales.data(), ds, rows * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dw); cudaFree(dq); cudaFree(ds);

    long bad = 0;
    for (int r = 0; r < rows; ++r) {
        const float* row = &w[(size_t)r * cols];
        float m = 0.0f;
        for (int c = 0; c < cols; ++c) m = std::fmax(m, std::fabs(row[c]));
        float scale = m > 0.0f ? m / 127.0f : 1.0f;
        bad += scales[r] != scale;
        for (int c = 0; c < cols; ++c) {
            int8_t ref = (int8_t)std::fmin(std::fmax(std::rint(row[c] / scale), -127.0f), 127.0f);
            bad += q[(size_t)r * cols + c] != ref;
        }
    }
    if (bad) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
