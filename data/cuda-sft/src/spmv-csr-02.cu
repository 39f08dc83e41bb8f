/*@prompt
CSR SpMV with the "vector" strategy: one warp per row, lanes striding over the row's nonzeros, warp-shuffle reduction at the end. The matrix has long rows (100 to 3000 nonzeros), 20,000 rows, double precision.
@explanation
With long rows the scalar kernel (one thread per row) reads `values` and `col_idx` in an uncoalesced way and lets a warp idle while its longest row finishes. Giving each row a whole warp fixes both: lane l handles nonzeros `begin + l, begin + l + 32, ...`, so each warp-wide load of `values` and `col_idx` covers 32 consecutive entries, and the row's work is split 32 ways. Each lane accumulates a partial sum in double, and five `__shfl_down_sync` steps combine them; lane 0 writes y. Blocks of 128 threads process four rows each. Both the GPU and the CPU round, so each row is compared with twice the double-precision dot-product bound, `2 * nnz * 2^-53 * sum |a x|`.
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

__global__ void spmv_csr_vector(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                const double* __restrict__ values, const double* __restrict__ x, double* __restrict__ y)
{
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    double sum = 0.0;
    for (int k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += 32) sum += values[k] * x[col_idx[k]];
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffff, sum, off);
    if (lane == 0) y[row] = sum;
}

int main()
{
    const int n = 20000;
    std::vector<int> row_ptr(n + 1, 0), col_idx;
    std::vector<double> values, x(n), y(n);
    unsigned s = 11u;
    for (int r = 0; r < n; ++r) {
        s = s * 1664525u + 1013904223u;
        int nnz = 100 + (int)((s >> 12) % 2901);
        for (int k = 0; k < nnz; ++k) {
            s = s * 1664525u + 1013904223u;
            col_idx.push_back((int)((s >> 6) % n));
            values.push_back(std::sin(0.001 * (double)(s % 100000)));
        }
        row_ptr[r + 1] = (int)col_idx.size();
    }
    for (int i = 0; i < n; ++i) x[i] = 1.0 / (1.0 + (i % 97));
    const int nnz_total = row_ptr[n];

    int *d_ptr, *d_col;
    double *d_val, *d_x, *d_y;
    CUDA_CHECK(cudaMalloc(&d_ptr, (n + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_col, nnz_total * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_val, nnz_total * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(d_ptr, row_ptr.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_col, col_idx.data(), nnz_total * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_val, values.data(), nnz_total * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(double), cudaMemcpyHostToDevice));

    const int threads = 128;
    spmv_csr_vector<<<(n * 32 + threads - 1) / threads, threads>>>(n, d_ptr, d_col, d_val, d_x, d_y);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(d_ptr); cudaFree(d_col); cudaFree(d_val); cudaFree(d_x); cudaFree(d_y);

    long bad = 0;
    const double u = std::ldexp(1.0, -53);
    for (int r = 0; r < n; ++r) {
        double ref = 0.0, mag = 0.0;
        for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
            ref += values[k] * x[col_idx[k]];
            mag += std::fabs(values[k] * x[col_idx[k]]);
        }
        bad += !(std::fabs(y[r] - ref) <= 2.0 * (row_ptr[r + 1] - row_ptr[r]) * u * mag);
    }
    printf("%d nonzeros\n", nnz_total);
    if (bad) {
        printf("FAIL: %ld rows\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
