/*@prompt
Global top-16 of a 4M-element float array (values and indices, descending, ties to the smaller index). Do it in two passes: each block produces its 16 best candidates, then a single block selects the final 16 from all candidates. Reuse the same kernel for both passes.
@explanation
Pass one: every thread of a 256-thread block keeps a sorted register list of the 16 best (value, index) pairs it has seen in its grid-stride slice. The block then extracts its 16 winners in 16 rounds: each thread offers its list head, a warp butterfly with `__shfl_xor_sync` picks each warp's best, thread 0 compares the eight warp winners from shared memory and publishes the round's winner, and after a `__syncthreads()` the owning thread pops its head. The winners go to a candidate buffer of `gridDim.x * 16` entries. Pass two launches the same kernel with a single block over the candidates; it carries the original indices through an optional index array, exactly as the first pass uses the element position. Ordering is total (value, then index), so the result equals a CPU partial sort.
@after
For k in the hundreds or thousands, a radix-select that narrows the threshold digit by digit scales better than extracting winners one at a time.
@*/
#include <algorithm>
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

constexpr int K = 16, THREADS = 256, NO_INDEX = 0x7fffffff;

__host__ __device__ inline bool better(float v, int i, float w, int j) { return v > w || (v == w && i < j); }

// Writes the K best of (vals[k], idx_in ? idx_in[k] : k) seen by this block to out_v/out_i[blockIdx.x*K ...].
__global__ void block_topk(const float* __restrict__ vals, const int* __restrict__ idx_in, int n,
                           float* __restrict__ out_v, int* __restrict__ out_i)
{
    __shared__ float wv[THREADS / 32];
    __shared__ int wi[THREADS / 32];
    __shared__ int winner;
    float v[K];
    int id[K];
    for (int k = 0; k < K; ++k) { v[k] = -INFINITY; id[k] = NO_INDEX; }
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x) {
        float cv = vals[e];
        int ci = idx_in ? idx_in[e] : e;
        if (!better(cv, ci, v[K - 1], id[K - 1])) continue;
        int k = K - 1;
        for (; k > 0 && better(cv, ci, v[k - 1], id[k - 1]); --k) { v[k] = v[k - 1]; id[k] = id[k - 1]; }
        v[k] = cv; id[k] = ci;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int round = 0; round < K; ++round) {
        float bv = v[0];
        int bi = id[0];
        for (int m = 16; m > 0; m >>= 1) {
            float ov = __shfl_xor_sync(0xffffffff, bv, m);
            int oi = __shfl_xor_sync(0xffffffff, bi, m);
            if (better(ov, oi, bv, bi)) { bv = ov; bi = oi; }
        }
        if (lane == 0) { wv[warp] = bv; wi[warp] = bi; }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int w = 1; w < THREADS / 32; ++w)
                if (better(wv[w], wi[w], bv, bi)) { bv = wv[w]; bi = wi[w]; }
            out_v[blockIdx.x * K + round] = bv;
            out_i[blockIdx.x * K + round] = bi;
            winner = bi;
        }
        __syncthreads();
        if (winner != NO_INDEX && id[0] == winner) {  // the unique owner pops its head
            for (int k = 0; k < K - 1; ++k) { v[k] = v[k + 1]; id[k] = id[k + 1]; }
            v[K - 1] = -INFINITY; id[K - 1] = NO_INDEX;
        }
        __syncthreads();  // wv/wi/winner are rewritten next round
    }
}

int main()
{
    const int n = 4 << 20, blocks = 256;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = (float)((i * 2246822519u) >> 12) * 0.001f;  // duplicates exist
    float *dx, *dcv, *dv;
    int *dci, *di;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dcv, blocks * K * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dci, blocks * K * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dv, K * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&di, K * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    block_topk<<<blocks, THREADS>>>(dx, nullptr, n, dcv, dci);    // n -> blocks*K candidates
    block_topk<<<1, THREADS>>>(dcv, dci, blocks * K, dv, di);     // candidates -> K
    CUDA_CHECK(cudaGetLastError());
    float vals[K];
    int idxs[K];
    CUDA_CHECK(cudaMemcpy(vals, dv, sizeof(vals), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(idxs, di, sizeof(idxs), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dcv); cudaFree(dci); cudaFree(dv); cudaFree(di);

    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + K, order.end(),
                      [&](int a, int b) { return better(x[a], a, x[b], b); });
    int bad = 0;
    for (int k = 0; k < K; ++k) bad += idxs[k] != order[k] || vals[k] != x[order[k]];
    printf("top-1: x[%d] = %.3f\n", idxs[0], vals[0]);
    if (bad) {
        printf("FAIL: %d of %d wrong\n", bad, K);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
