/*@prompt
My CSR matrix has very short rows (about 6 nonzeros on average), so a full warp per row wastes lanes and one thread per row is uncoalesced. Write a templated SpMV where a group of THREADS_PER_ROW lanes (a power of two <= 32) handles one row, pick the group size from the average row length, and verify it.
@explanation
The kernel is a template over the group size G. A warp is split into 32/G groups; a thread's group is `lane / G` and its position in the group `lane % G`, so each group walks its row's nonzeros with stride G and the group's loads stay contiguous. The reduction uses `__shfl_down_sync(mask, v, offset, G)`: the `width` argument makes the shuffle operate within each G-lane segment, so log2(G) steps sum the group without crossing into the neighbouring row. All 32 lanes execute the shuffles (rows past the end contribute zeros) because the full mask requires it. The host picks G as the power of two nearest the average row length, clamped to [2, 32], and dispatches to the matching instantiation. Each row is checked against the float dot-product bound.
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

template <int G>
__global__ void spmv_csr_group(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                               const float* __restrict__ values, const float* __restrict__ x, float* __restrict__ y)
{
    static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "G must be a power of two <= 32");
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = gid / G, lane_in_group = gid % G;
    float sum = 0.0f;
    if (row < rows)
        for (int k = row_ptr[row] + lane_in_group; k < row_ptr[row + 1]; k += G) sum += values[k] * x[col_idx[k]];
    for (int off = G / 2; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off, G);
    if (row < rows && lane_in_group == 0) y[row] = sum;
}

template <int G>
static void launch(int rows, const int* p, const int* c, const float* v, const float* x, float* y)
{
    const int threads = 256;
    const long long total = (long long)rows * G;
    spmv_csr_group<G><<<(unsigned)((total + threads - 1) / threads), threads>>>(rows, p, c, v, x, y);
}

int main()
{
    const int n = 1 << 20;
    std::vector<int> row_ptr(n + 1, 0), col_idx;
    std::vector<float> values, x(n), y(n);
    unsigned s = 5u;
    for (int r = 0; r < n; ++r) {
        s = s * 1664525u + 1013904223u;
        int nnz = (s >> 20) % 13;  // 0..12, mean 6
        for (int k = 0; k < nnz; ++k) {
            s = s * 1664525u + 1013904223u;
            col_idx.push_back((int)((r + (int)(s >> 24) - 128 + n) % n));  // near the diagonal
            values.push_back(0.5f + (float)(s % 64) / 64.0f);
        }
        row_ptr[r + 1] = (int)col_idx.size();
    }
    for (int i = 0; i < n; ++i) x[i] = std::sin(0.0003f * i);
    const int nnz_total = row_ptr[n];
    const double avg = (double)nnz_total / n;
    int G = 2;
    while (G < 32 && 2 * G <= avg * 1.5) G *= 2;  // ~average row length, as a power of two

    int *d_ptr, *d_col;
    float *d_val, *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_ptr, (n + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_col, nnz_total * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_val, nnz_total * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_ptr, row_ptr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_col, col_idx.data(), nnz_total * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_val, values.data(), nnz_total * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    switch (G) {
    case 2: launch<2>(n, d_ptr, d_col, d_val, d_x, d_y); break;
    case 4: launch<4>(n, d_ptr, d_col, d_val, d_x, d_y); break;
    case 8: launch<8>(n, d_ptr, d_col, d_val, d_x, d_y); break;
    case 16: launch<16>(n, d_ptr, d_col, d_val, d_x, d_y); break;
    default: launch<32>(n, d_ptr, d_col, d_val, d_x, d_y); break;
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_ptr); cudaFree(d_col); cudaFree(d_val); cudaFree(d_x); cudaFree(d_y);

    long bad = 0;
    const double u = std::ldexp(1.0, -24);
    for (int r = 0; r < n; ++r) {
        double ref = 0.0, mag = 0.0;
        for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
            double p = (double)values[k] * x[col_idx[k]];
            ref += p;
            mag += std::fabs(p);
        }
        bad += !(std::fabs(y[r] - ref) <= (row_ptr[r + 1] - row_ptr[r]) * u * mag);
    }
    printf("avg %.2f nonzeros per row, group size %d\n", avg, G);
    if (bad) {
        printf("FAIL: %ld rows\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
