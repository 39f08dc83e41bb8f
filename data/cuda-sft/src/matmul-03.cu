/*@prompt
Improve on the basic 16x16 shared-memory SGEMM with register blocking: a 16x16 thread block should compute a 64x64 tile of C, each thread a 4x4 sub-block held in registers, with K processed in slices of 16. Matrices are row-major, M = N = K = 1024.
@explanation
In the one-output-per-thread tiled kernel every multiply-add needs two shared-memory loads. Here each thread keeps a 4x4 block of accumulators in registers, and for each k it loads 4 values of A and 4 of B from shared memory and performs 16 multiply-adds, quadrupling the arithmetic per shared-memory load. The 256 threads load the 64x16 slice of A and the 16x64 slice of B cooperatively (four elements each, consecutive threads on consecutive addresses). Thread (ty, tx) owns rows `ty + 16*i` and columns `tx + 16*j`: interleaving ownership this way makes the 16 threads of a half-warp read 16 consecutive B entries (no bank conflicts) and one broadcast A entry per row. Bounds are checked at load and store, so other sizes work too. Every 16th row is compared entry by entry within the K-term float dot-product bound, K * 2^-24 * sum |a_ik b_kj|, and every row is checked cheaply by comparing C v with A (B v) (Freivalds' trick).
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

constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4;  // 16x16 threads, 4x4 outputs each

__global__ void sgemm_reg_blocked(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, int M, int N, int K)
{
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * 16 + tx;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int l = 0; l < (BM * BK) / 256; ++l) {
            int idx = tid + l * 256;
            int r = idx / BK, c = idx % BK;
            As[r][c] = (bm + r < M && k0 + c < K) ? A[(size_t)(bm + r) * K + k0 + c] : 0.0f;
        }
        for (int l = 0; l < (BK * BN) / 256; ++l) {
            int idx = tid + l * 256;
            int r = idx / BN, c = idx % BN;
            Bs[r][c] = (k0 + r < K && bn + c < N) ? B[(size_t)(k0 + r) * N + bn + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[ty + 16 * i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
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
    const int M = 1024, N = 1024, K = 1024;
    std::vector<float> A((size_t)M * K), B((size_t)K * N), C((size_t)M * N);
    for (size_t i = 0; i < A.size(); ++i) A[i] = (float)((i * 37) % 200) / 100.0f - 1.0f;
    for (size_t i = 0; i < B.size(); ++i) B[i] = (float)((i * 91) % 300) / 150.0f - 1.0f;

    float *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(16, 16);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    sgemm_reg_blocked<<<grid, block>>>(dA, dB, dC, M, N, K);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dA); cudaFree(dB); cudaFree(dC);

    // Check every 16th row fully (a full CPU reference of 1024^3 would be slow).
    long bad = 0;
    const double u = std::ldexp(1.0, -24);
    for (int i = 0; i < M; i += 16)
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
