/*@prompt
Tiled matrix multiplication with shared memory. Use 16x16 tiles: each block loads a tile of A and a tile of B into __shared__ arrays, synchronizes, accumulates the partial dot products, and moves to the next tile along K. It must handle sizes that are not multiples of 16 (M=1000, N=700, K=900).
@explanation
A block computes a 16x16 tile of C. For every step along K it cooperatively loads a 16x16 tile of A and one of B into shared memory (each thread loads one element of each), waits at `__syncthreads()`, and then each thread accumulates 16 multiply-adds from shared memory; the second `__syncthreads()` keeps a fast thread from overwriting the tiles while others are still reading them. Each global element is now loaded once per tile instead of once per multiply, a 16x cut in global traffic. Out-of-range elements are loaded as zeros, so partial edge tiles contribute nothing and the inner loop needs no bounds checks; only the final store is guarded. The check compares every 5th row with a double-precision CPU product, using the textbook error bound of a K-term float dot product, K * 2^-24 * sum_k |a_ik * b_kj|, which a correct kernel can never exceed; all rows are also checked in O(n^2) by comparing C v with A (B v) for a fixed weight vector v.
@after
In production code you would call cuBLAS (`cublasSgemm`), which is several times faster than any simple tiled kernel; this version is for understanding the data reuse.
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

#define TILE 16

__global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                             float* __restrict__ C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

// Every entry, in O(MK + KN + MN) (Freivalds' idea): with weights v_j in [1, 2), (C v)_i must equal
// (A (B v))_i up to the sum of the entries' error bounds, K * 2^-24 * (|A| (|B| v))_i. One wrong
// entry e changes (C v)_i by at least |e|, so gross errors anywhere are caught cheaply.
static long freivalds_bad_rows(const std::vector<float>& A, const std::vector<float>& B, const std::vector<float>& C,
                               int M, int N, int K)
{
    std::vector<double> v(N), Bv(K, 0.0), Babs(K, 0.0);
    for (int j = 0; j < N; ++j) v[j] = 1.0 + (double)((j * 7919) % 13) / 13.0;
    for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) {
            Bv[k] += (double)B[(size_t)k * N + j] * v[j];
            Babs[k] += std::fabs((double)B[(size_t)k * N + j]) * v[j];
        }
    long bad = 0;
    for (int i = 0; i < M; ++i) {
        double cv = 0.0, abv = 0.0, bound = 0.0;
        for (int j = 0; j < N; ++j) cv += (double)C[(size_t)i * N + j] * v[j];
        for (int k = 0; k < K; ++k) {
            abv += (double)A[(size_t)i * K + k] * Bv[k];
            bound += std::fabs((double)A[(size_t)i * K + k]) * Babs[k];
        }
        bad += !(std::fabs(cv - abv) <= (K * std::ldexp(1.0, -24) + 1e-12) * bound);
    }
    return bad;
}

int main()
{
    const int M = 1000, N = 700, K = 900;
    std::vector<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N);
    for (size_t i = 0; i < A.size(); ++i) A[i] = std::sin(0.01f * (float)(i % 10007));
    for (size_t i = 0; i < B.size(); ++i) B[i] = std::cos(0.013f * (float)(i % 9973));

    float *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled<<<grid, block>>>(dA, dB, dC, M, N, K);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dA); cudaFree(dB); cudaFree(dC);

    long bad = 0;
    for (int i = 0; i < M; i += 5)  // every 5th row keeps the CPU reference quick
        for (int j = 0; j < N; ++j) {
            double ref = 0.0, mag = 0.0;
            for (int k = 0; k < K; ++k) {
                double p = (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
                ref += p;
                mag += std::fabs(p);
            }
            if (!(std::fabs(C[(size_t)i * N + j] - ref) <= K * std::ldexp(1.0, -24) * mag)) ++bad;
        }
    bad += freivalds_bad_rows(A, B, C, M, N, K);
    if (bad) {
        printf("FAIL: %ld entries out of tolerance\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
