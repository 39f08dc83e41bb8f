/*@prompt
Given logits of shape [batch=10000, classes=1000] (row-major float), write a CUDA kernel that outputs the predicted class (argmax over each row) as int. Use one warp per row. Ties go to the lower class index.
@explanation
With 1000 classes a row is a good fit for one warp: lane l scans classes l, l+32, ..., which keeps the warp's loads on consecutive addresses, and keeps its own best (value, class). Five rounds of `__shfl_xor_sync` then exchange candidates in a butterfly pattern, so every lane ends with the row's winner; lane 0 stores it. Because the combine rule prefers the larger value and breaks ties toward the smaller index, the result is the first maximum, as in `torch.argmax`. Blocks of 128 threads hold four rows each, and the grid is `ceil(batch / 4)`.
@*/
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

__global__ void row_argmax(const float* __restrict__ logits, int* __restrict__ pred, int rows, int cols)
{
    const int warps_per_block = blockDim.x / 32;
    const int row = blockIdx.x * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;

    const float* r = logits + (size_t)row * cols;
    float best = r[0];
    int best_idx = 0;
    for (int c = lane; c < cols; c += 32) {
        float v = r[c];
        if (v > best || (v == best && c < best_idx)) { best = v; best_idx = c; }
    }
    for (int mask = 16; mask > 0; mask >>= 1) {
        float ov = __shfl_xor_sync(0xffffffff, best, mask);
        int oi = __shfl_xor_sync(0xffffffff, best_idx, mask);
        if (ov > best || (ov == best && oi < best_idx)) { best = ov; best_idx = oi; }
    }
    if (lane == 0) pred[row] = best_idx;
}

int main()
{
    const int rows = 10000, cols = 1000;
    std::vector<float> logits((size_t)rows * cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            logits[(size_t)r * cols + c] = (float)(((r + 1) * (c + 7) * 2654435761u) % 1000u) / 100.0f;

    float* d_logits;
    int* d_pred;
    CUDA_CHECK(cudaMalloc(&d_logits, logits.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_pred, rows * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_logits, logits.data(), logits.size() * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 128;
    const int rows_per_block = threads / 32;
    const int blocks = (rows + rows_per_block - 1) / rows_per_block;
    row_argmax<<<blocks, threads>>>(d_logits, d_pred, rows, cols);
    CUDA_CHECK(cudaGetLastError());

    std::vector<int> pred(rows);
    CUDA_CHECK(cudaMemcpy(pred.data(), d_pred, rows * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_logits);
    cudaFree(d_pred);

    int wrong = 0;
    for (int r = 0; r < rows; ++r) {
        const float* row = &logits[(size_t)r * cols];
        int ref = 0;
        for (int c = 1; c < cols; ++c) if (row[c] > row[ref]) ref = c;
        if (pred[r] != ref) ++wrong;
    }
    if (wrong) {
        printf("FAIL: %d rows wrong\n", wrong);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
