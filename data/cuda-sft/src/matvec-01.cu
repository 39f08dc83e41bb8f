/*@prompt
Matrix-vector product y = A x with A of size 8192 x 4096 (row-major, float). Start with one thread per row.
@explanation
Thread r computes the dot product of row r with x. The code is short and correct, but it is worth seeing why it is slow: at each step k the 32 threads of a warp read `A[r][k]` for 32 different rows, addresses 16 KB apart, so every load instruction touches 32 separate memory segments instead of one. x is read by all threads at the same k, a broadcast that caches well. Assigning a whole warp to each row, so that consecutive lanes read consecutive columns, fixes the access pattern (see the warp-per-row variant). The check uses the K-term float dot-product error bound, `K * 2^-24 * sum |a_rk x_k|`.
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

__global__ void gemv_row_per_thread(const float* A, const float* x, float* y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* a = A + (size_t)r * cols;
    float acc = 0.0f;
    for (int k = 0; k < cols; ++k) acc += a[k] * x[k];
    y[r] = acc;
}

int main()
{
    const int rows = 8192, cols = 4096;
    std::vector<float> A((size_t)rows * cols), x(cols), y(rows);
    for (size_t i = 0; i < A.size(); ++i) A[i] = (float)((i * 13) % 64) / 32.0f - 1.0f;
    for (int k = 0; k < cols; ++k) x[k] = std::cos(0.002f * k);

    float *dA, *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dx, cols * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), cols * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 128;
    gemv_row_per_thread<<<(rows + threads - 1) / threads, threads>>>(dA, dx, dy, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, rows * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dA); cudaFree(dx); cudaFree(dy);

    int bad = 0;
    const double u = std::ldexp(1.0, -24);
    for (int r = 0; r < rows; ++r) {
        double ref = 0.0, mag = 0.0;
        for (int k = 0; k < cols; ++k) {
            double p = (double)A[(size_t)r * cols + k] * x[k];
            ref += p;
            mag += std::fabs(p);
        }
        if (!(std::fabs(y[r] - ref) <= cols * u * mag)) ++bad;
    }
    if (bad) {
        printf("FAIL: %d rows\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
