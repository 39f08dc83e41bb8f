/*@prompt
BLAS GER (rank-1 update) in place: A <- A + alpha * x * y^T, with A a 4096 x 4096 row-major float matrix. Each block should stage the slices of x and y it needs in shared memory before updating its tile.
@explanation
A 32x8 block updates a 32x32 tile of A: each thread handles four rows of one column (rows `ty, ty+8, ty+16, ty+24`). All threads of the tile need the same 32 entries of x and 32 of y, so the first 32 threads load `alpha * x` and `y` slices into shared memory, and after `__syncthreads()` every update reads them from there; scaling x by alpha once per tile saves a multiply per element. The update of A is a read-modify-write of each element by exactly one thread, so no atomics are needed. The device evaluates `A + (alpha x_i) y_j` as one fused multiply-add, the CPU as a multiply and an add, so results may differ in the last bit; the check allows 2 ulp-sized relative errors (2^-22) of the terms.
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

constexpr int TILE = 32, ROWS = 8;

__global__ void sger_tiled(float* __restrict__ A, const float* __restrict__ x, const float* __restrict__ y,
                           float alpha, int m, int n)
{
    __shared__ float xs[TILE], ys[TILE];
    const int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    if (tid < TILE) {
        xs[tid] = (i0 + tid < m) ? alpha * x[i0 + tid] : 0.0f;
        ys[tid] = (j0 + tid < n) ? y[j0 + tid] : 0.0f;
    }
    __syncthreads();

    const int j = j0 + threadIdx.x;
    if (j >= n) return;
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        int i = i0 + r;
        if (i < m) A[(size_t)i * n + j] += xs[r] * ys[threadIdx.x];
    }
}

int main()
{
    const int m = 4096, n = 4096;
    const float alpha = -0.37f;
    std::vector<float> A((size_t)m * n), A0, x(m), y(n);
    for (size_t i = 0; i < A.size(); ++i) A[i] = (float)(i % 1000) * 0.01f;
    for (int i = 0; i < m; ++i) x[i] = std::sin(0.01f * i);
    for (int j = 0; j < n; ++j) y[j] = std::cos(0.02f * j);
    A0 = A;

    float *dA, *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dx, m * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), m * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE, ROWS);
    dim3 grid((n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
    sger_tiled<<<grid, block>>>(dA, dx, dy, alpha, m, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(A.data(), dA, A.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dA); cudaFree(dx); cudaFree(dy);

    long bad = 0;
    const double tol = std::ldexp(1.0, -22);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double a0 = A0[(size_t)i * n + j];
            double p = (double)(alpha * x[i]) * y[j];
            double ref = a0 + p;
            if (!(std::fabs(A[(size_t)i * n + j] - ref) <= tol * (std::fabs(a0) + std::fabs(p)))) ++bad;
        }
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
