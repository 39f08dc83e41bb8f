/*@prompt
Compute y = A^T x in double precision where A is stored row-major as [M=6000, N=3000] (so y has N entries), without transposing A. Cache chunks of x in shared memory.
@explanation
Entry j of `A^T x` is `sum_i A[i][j] * x[i]`, a walk down column j. Giving each thread one column makes the access pattern naturally good: at every step i the threads of a warp read `A[i][j..j+31]`, 32 consecutive doubles of one row, which coalesce. All threads of a block need the same `x[i]` values, so the block stages x in chunks of 256 doubles in shared memory (one element per thread, then `__syncthreads()`), and the inner loop reads x from there as a broadcast. The second barrier at the end of each chunk prevents a fast thread from overwriting the chunk while a slow one still reads it. Both sides round, so the tolerance is twice the M-term double dot-product bound, `2 * M * 2^-53 * sum |a x|`.
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

constexpr int CHUNK = 256;  // == blockDim.x

__global__ void gemv_transposed(const double* __restrict__ A, const double* __restrict__ x,
                                double* __restrict__ y, int M, int N)
{
    __shared__ double xs[CHUNK];
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    double acc = 0.0;
    for (int i0 = 0; i0 < M; i0 += CHUNK) {
        int i = i0 + threadIdx.x;
        xs[threadIdx.x] = (i < M) ? x[i] : 0.0;
        __syncthreads();
        const int len = min(CHUNK, M - i0);
        if (j < N)
            for (int k = 0; k < len; ++k) acc += A[(size_t)(i0 + k) * N + j] * xs[k];
        __syncthreads();
    }
    if (j < N) y[j] = acc;
}

int main()
{
    const int M = 6000, N = 3000;
    std::vector<double> A((size_t)M * N), x(M), y(N);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) A[(size_t)i * N + j] = std::sin(0.001 * i + 0.002 * j);
    for (int i = 0; i < M; ++i) x[i] = std::cos(0.01 * i);

    double *dA, *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dx, M * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dy, N * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), M * sizeof(double), cudaMemcpyHostToDevice));

    gemv_transposed<<<(N + CHUNK - 1) / CHUNK, CHUNK>>>(dA, dx, dy, M, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, N * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(dA); cudaFree(dx); cudaFree(dy);

    std::vector<double> ref(N, 0.0), mag(N, 0.0);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double p = A[(size_t)i * N + j] * x[i];
            ref[j] += p;
            mag[j] += std::fabs(p);
        }
    int bad = 0;
    const double u = std::ldexp(1.0, -53);
    for (int j = 0; j < N; ++j) bad += !(std::fabs(y[j] - ref[j]) <= 2.0 * M * u * mag[j]);
    if (bad) {
        printf("FAIL: %d entries\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
