/*@prompt
Sparse matrix-vector multiply y = A x with A in CSR format (row_ptr, col_idx, values), 200,000 x 200,000 with 0-40 nonzeros per row. Write the straightforward scalar kernel: one thread per row.
@explanation
In CSR the nonzeros of row r occupy positions `row_ptr[r] .. row_ptr[r+1]-1` of `col_idx` and `values`, so a thread can compute its row's dot product with x by walking that range. This "scalar" kernel is simple and works well when rows are short and similar in length; its weaknesses are that neighbouring threads read `values` and `col_idx` at unrelated offsets (uncoalesced) and that a warp waits for its longest row. Gathering `x[col_idx[k]]` is inherently irregular and relies on the cache. The CPU reference performs the same sums in double; each row is compared with the float dot-product bound `nnz * 2^-24 * sum |a x|`.
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

__global__ void spmv_csr_scalar(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                const float* __restrict__ values, const float* __restrict__ x, float* __restrict__ y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float sum = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) sum += values[k] * x[col_idx[k]];
    y[r] = sum;
}

int main()
{
    const int n = 200000;
    std::vector<int> row_ptr(n + 1, 0), col_idx;
    std::vector<float> values, x(n), y(n);
    unsigned s = 2u;
    for (int r = 0; r < n; ++r) {
        s = s * 1664525u + 1013904223u;
        int nnz = (s >> 16) % 41;
        for (int k = 0; k < nnz; ++k) {
            s = s * 1664525u + 1013904223u;
            col_idx.push_back((int)((s >> 8) % n));
            values.push_back((float)((int)(s % 200) - 100) / 50.0f);
        }
        row_ptr[r + 1] = (int)col_idx.size();
    }
    for (int i = 0; i < n; ++i) x[i] = std::cos(0.001f * i);
    const int nnz_total = row_ptr[n];

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

    const int threads = 256;
    spmv_csr_scalar<<<(n + threads - 1) / threads, threads>>>(n, d_ptr, d_col, d_val, d_x, d_y);
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
    printf("%d nonzeros\n", nnz_total);
    if (bad) {
        printf("FAIL: %ld rows\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
