/*@prompt
Transpose a square N x N float matrix in place on the GPU (no second buffer). N = 3000.
@explanation
In place, tile (i, j) and tile (j, i) must swap, and each pair must be handled by exactly one block, or two blocks would each swap the pair and undo each other. The kernel launches a full 2D grid of 32x32 tiles and lets only blocks with `blockIdx.x >= blockIdx.y` (the upper triangle including the diagonal) work. Such a block loads both tiles into shared memory, waits at `__syncthreads()`, and writes each back transposed into the other's place; a diagonal block loads its single tile and writes it back transposed onto itself. Because each block reads everything it needs before it writes anything, and no two blocks touch the same tiles, there are no races. Padding the tiles to 33 columns keeps the transposed shared-memory reads free of bank conflicts.
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

constexpr int T = 32, ROWS = 8;

__global__ void transpose_inplace(float* a, int n)
{
    const int bi = blockIdx.y, bj = blockIdx.x;
    if (bj < bi) return;  // the pair (bi, bj) is handled by block (bj, bi)
    __shared__ float t1[T][T + 1];
    __shared__ float t2[T][T + 1];
    const int tx = threadIdx.x;

    for (int k = threadIdx.y; k < T; k += ROWS) {
        int r1 = bi * T + k, c1 = bj * T + tx;  // tile (bi, bj)
        if (r1 < n && c1 < n) t1[k][tx] = a[(size_t)r1 * n + c1];
        int r2 = bj * T + k, c2 = bi * T + tx;  // tile (bj, bi)
        if (bi != bj && r2 < n && c2 < n) t2[k][tx] = a[(size_t)r2 * n + c2];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < T; k += ROWS) {
        int r2 = bj * T + k, c2 = bi * T + tx;  // tile (bj, bi) receives tile (bi, bj) transposed
        if (r2 < n && c2 < n) a[(size_t)r2 * n + c2] = t1[tx][k];
        if (bi != bj) {
            int r1 = bi * T + k, c1 = bj * T + tx;
            if (r1 < n && c1 < n) a[(size_t)r1 * n + c1] = t2[tx][k];
        }
    }
}

int main()
{
    const int n = 3000;
    std::vector<float> a((size_t)n * n), res(a.size());
    for (size_t i = 0; i < a.size(); ++i) a[i] = (float)(i % 16777216);  // unique below 2^24

    float* d;
    CUDA_CHECK(cudaMalloc(&d, a.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
    dim3 block(T, ROWS);
    dim3 grid((n + T - 1) / T, (n + T - 1) / T);
    transpose_inplace<<<grid, block>>>(d, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(res.data(), d, res.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d);

    long bad = 0;
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            if (res[(size_t)r * n + c] != a[(size_t)c * n + r]) ++bad;
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
