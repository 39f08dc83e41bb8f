/*@prompt
I want a bigger SGEMM tile: 128x128 outputs per block with K-slices of 64, 256 threads, each thread computing an 8x8 block. That needs more than 48 KB of shared memory, so show how to opt in with cudaFuncSetAttribute and dynamic shared memory. Pad the A tile to avoid bank conflicts.
@explanation
The A slice (128 x 64) and the B slice (64 x 128) need 64 KB together, more than the 48 KB a kernel gets by default. Static `__shared__` arrays are capped at 48 KB, so the tiles live in one `extern __shared__` buffer, and the host raises the kernel's limit with `cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)` before passing `bytes` as the third launch parameter (after checking `cudaDevAttrMaxSharedMemoryPerBlockOptin`, 163 KB on A100 and 227 KB on H100). Each A row is padded from 64 to 65 floats: the two rows a warp reads at the same k are then 65 words apart and land in different banks instead of the same one. Each thread accumulates an 8x8 block (rows `ty + 16*i`, columns `tx + 16*j`), so every shared-memory value it loads feeds 8 FMAs. K = 1000 is not a multiple of 64, so the loads zero-fill the last slice. Sampled rows are checked entry by entry with the K-term float dot-product error bound, and all rows through C v = A (B v) for a fixed weight vector v.
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

constexpr int BM = 128, BN = 128, BK = 64, TM = 8, TN = 8, THREADS = 256;
constexpr int LDA = BK + 1;  // padded row length of the A tile
constexpr size_t kSmemBytes = (size_t)(BM * LDA + BK * BN) * sizeof(float);

__global__ void __launch_bounds__(THREADS)
sgemm_128x128(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
              int M, int N, int K)
{
    extern __shared__ float smem[];
    float* As = smem;             // [BM][LDA]
    float* Bs = smem + BM * LDA;  // [BK][BN]
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int idx = tid; idx < BM * BK; idx += THREADS) {
            int r = idx / BK, c = idx % BK;
            As[r * LDA + c] = (bm + r < M && k0 + c < K) ? A[(size_t)(bm + r) * K + k0 + c] : 0.0f;
        }
        for (int idx = tid; idx < BK * BN; idx += THREADS) {
            int r = idx / BN, c = idx % BN;
            Bs[r * BN + c] = (k0 + r < K && bn + c < N) ? B[(size_t)(k0 + r) * N + bn + c] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[(ty + 16 * i) * LDA + k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k * BN + tx + 16 * j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) {
            int r = bm + ty + 16 * i, c = bn + tx + 16 * j;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
        }
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
    const int M = 1536, N = 1280, K = 1000;
    int dev = 0, optin = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if ((size_t)optin < kSmemBytes) {
        printf("FAIL: device allows %d bytes of shared memory per block, need %zu\n", optin, kSmemBytes);
        return 1;
    }
    CUDA_CHECK(cudaFuncSetAttribute(sgemm_128x128, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemBytes));

    std::vector<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N);
    for (size_t i = 0; i < A.size(); ++i) A[i] = std::sin(0.37f * (float)(i % 4099));
    for (size_t i = 0; i < B.size(); ++i) B[i] = std::cos(0.23f * (float)(i % 3079));

    float *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_128x128<<<grid, THREADS, kSmemBytes>>>(dA, dB, dC, M, N, K);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dA); cudaFree(dB); cudaFree(dC);

    long bad = 0;
    const double u = std::ldexp(1.0, -24);
    for (int i = 0; i < M; i += 31)  // sampled rows keep the CPU check quick
        for (int j = 0; j < N; ++j) {
            double ref = 0.0, mag = 0.0;
            for (int k = 0; k < K; ++k) {
                double p = (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
                ref += p;
                mag += std::fabs(p);
            }
            if (!(std::fabs(C[(size_t)i * N + j] - ref) <= K * u * mag)) ++bad;
        }
    bad += freivalds_bad_rows(A, B, C, M, N, K);
    if (bad) {
        printf("FAIL: %ld entries\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
