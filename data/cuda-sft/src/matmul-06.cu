/*@prompt
Compute attention scores S = Q K^T / sqrt(d) for all heads at once: Q and K are [batch*heads = 32, seq = 256, d = 64] float, S is [32, 256, 256]. Write a strided-batched tiled GEMM (one launch, blockIdx.z selects the batch) and run the copies and the kernel on a non-blocking CUDA stream with pinned host buffers.
@explanation
Every (batch, head) pair is an independent `T x d` by `d x T` product, stored at a fixed stride from the previous one, which is the "strided batched GEMM" pattern: the grid's z dimension picks the batch and offsets the three pointers by `z * stride`, while x and y tile the 256 x 256 output with 16 x 16 blocks. Because the second operand is K^T, both tiles are read along rows of their matrices (`Q[i][k]` and `K[j][k]`), so both loads are coalesced; the K tile is stored transposed in shared memory (`Ks[k][j]`, padded by one column) so the inner product loop reads it with unit stride. The scale `1/sqrt(d)` is applied once per output. The host uses `cudaMallocHost` buffers and `cudaMemcpyAsync` on a stream created with `cudaStreamNonBlocking`, which does not synchronise with the legacy default stream, and waits with `cudaStreamSynchronize`. Each score is checked against a double-precision product with the d-term dot-product error bound.
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

constexpr int TILE = 16;

__global__ void scores_batched(const float* __restrict__ Q, const float* __restrict__ K, float* __restrict__ S,
                               int T, int D, float scale)
{
    __shared__ float Qs[TILE][TILE];
    __shared__ float Ks[TILE][TILE + 1];
    const size_t bz = blockIdx.z;
    const float* q = Q + bz * T * D;
    const float* k = K + bz * T * D;
    const int i = blockIdx.y * TILE + threadIdx.y;       // query row of S
    const int j = blockIdx.x * TILE + threadIdx.x;       // key column of S
    const int j_load = blockIdx.x * TILE + threadIdx.y;  // key row loaded by this thread

    float acc = 0.0f;
    for (int d0 = 0; d0 < D; d0 += TILE) {
        Qs[threadIdx.y][threadIdx.x] = (i < T && d0 + threadIdx.x < D) ? q[(size_t)i * D + d0 + threadIdx.x] : 0.0f;
        Ks[threadIdx.x][threadIdx.y] = (j_load < T && d0 + threadIdx.x < D) ? k[(size_t)j_load * D + d0 + threadIdx.x] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int t = 0; t < TILE; ++t) acc += Qs[threadIdx.y][t] * Ks[t][threadIdx.x];
        __syncthreads();
    }
    if (i < T && j < T) S[bz * T * T + (size_t)i * T + j] = acc * scale;
}

int main()
{
    const int BH = 32, T = 256, D = 64;
    const float scale = 1.0f / std::sqrt((float)D);
    const size_t nqk = (size_t)BH * T * D, ns = (size_t)BH * T * T;
    float *hQ, *hK, *hS;
    CUDA_CHECK(cudaMallocHost(&hQ, nqk * sizeof(float)));
    CUDA_CHECK(cudaMallocHost(&hK, nqk * sizeof(float)));
    CUDA_CHECK(cudaMallocHost(&hS, ns * sizeof(float)));
    for (size_t e = 0; e < nqk; ++e) {
        hQ[e] = std::sin(0.013f * (float)(e % 7919));
        hK[e] = std::cos(0.021f * (float)(e % 6007));
    }

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    float *dQ, *dK, *dS;
    CUDA_CHECK(cudaMalloc(&dQ, nqk * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dK, nqk * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dS, ns * sizeof(float)));
    CUDA_CHECK(cudaMemcpyAsync(dQ, hQ, nqk * sizeof(float), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(dK, hK, nqk * sizeof(float), cudaMemcpyHostToDevice, stream));
    dim3 block(TILE, TILE);
    dim3 grid((T + TILE - 1) / TILE, (T + TILE - 1) / TILE, BH);
    scores_batched<<<grid, block, 0, stream>>>(dQ, dK, dS, T, D, scale);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(hS, dS, ns * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));

    long bad = 0;
    const double u = std::ldexp(1.0, -24);
    for (int b = 0; b < BH; ++b)
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j) {
                double ref = 0.0, mag = 0.0;
                for (int d = 0; d < D; ++d) {
                    double p = (double)hQ[((size_t)b * T + i) * D + d] * hK[((size_t)b * T + j) * D + d];
                    ref += p;
                    mag += std::fabs(p);
                }
                double got = hS[(size_t)b * T * T + (size_t)i * T + j];
                bad += !(std::fabs(got - ref * scale) <= (D + 2) * u * mag * scale);
            }
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(dQ)); CUDA_CHECK(cudaFree(dK)); CUDA_CHECK(cudaFree(dS));
    CUDA_CHECK(cudaFreeHost(hQ)); CUDA_CHECK(cudaFreeHost(hK)); CUDA_CHECK(cudaFreeHost(hS));
    if (bad) {
        printf("FAIL: %ld scores\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
