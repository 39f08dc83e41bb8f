/*@prompt
For sampling from a language model I need the top-50 logits (and their token ids) of each row of a [64, 50257] float tensor, sorted descending. Rows are too long for registers or shared memory. Write a simple block-per-row kernel that selects the winners one at a time.
@explanation
Each 512-thread block owns one row and first copies it into a scratch buffer, because selection destroys data: in each of the 50 rounds the block performs an argmax over the scratch row (strided scan per thread, then a (value, index) reduction through warp shuffles and shared memory, ties going to the smaller index), thread 0 records the winner and overwrites it with -inf, and a `__syncthreads()` makes that write visible before the next round scans again. That costs 50 passes over a 200 KB row, which is served largely from L2 cache; for small k it is simple and robust, while large k would call for a radix-select. The CPU reference is a partial sort with the same ordering, so the comparison is exact.
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

constexpr int K = 50, THREADS = 512;

__device__ __forceinline__ void take(float& v, int& i, float ov, int oi)
{
    if (ov > v || (ov == v && oi < i)) { v = ov; i = oi; }
}

__global__ void topk_rows(const float* __restrict__ logits, float* __restrict__ scratch, float* __restrict__ top_v,
                          int* __restrict__ top_i, int V)
{
    __shared__ float sv[THREADS / 32];
    __shared__ int si[THREADS / 32];
    const float* row = logits + (size_t)blockIdx.x * V;
    float* s = scratch + (size_t)blockIdx.x * V;
    for (int j = threadIdx.x; j < V; j += THREADS) s[j] = row[j];
    __syncthreads();

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int round = 0; round < K; ++round) {
        float v = -INFINITY;
        int i = 0x7fffffff;
        for (int j = threadIdx.x; j < V; j += THREADS) take(v, i, s[j], j);
        for (int off = 16; off > 0; off >>= 1)
            take(v, i, __shfl_down_sync(0xffffffff, v, off), __shfl_down_sync(0xffffffff, i, off));
        if (lane == 0) { sv[warp] = v; si[warp] = i; }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int w = 1; w < THREADS / 32; ++w) take(v, i, sv[w], si[w]);
            top_v[blockIdx.x * K + round] = v;
            top_i[blockIdx.x * K + round] = i;
            s[i] = -INFINITY;  // remove the winner
        }
        __syncthreads();
    }
}

int main()
{
    const int B = 64, V = 50257;
    std::vector<float> logits((size_t)B * V), top_v(B * K);
    std::vector<int> top_i(B * K);
    for (int b = 0; b < B; ++b)
        for (int j = 0; j < V; ++j)
            logits[(size_t)b * V + j] = 10.0f * std::sin(0.0013f * j * (b + 1)) + (float)((j * 7) % 13) * 0.5f;

    float *d_logits, *d_scratch, *d_v;
    int* d_i;
    CUDA_CHECK(cudaMalloc(&d_logits, logits.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_scratch, logits.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_v, top_v.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_i, top_i.size() * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_logits, logits.data(), logits.size() * sizeof(float), cudaMemcpyHostToDevice));
    topk_rows<<<B, THREADS>>>(d_logits, d_scratch, d_v, d_i, V);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(top_v.data(), d_v, top_v.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(top_i.data(), d_i, top_i.size() * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_logits); cudaFree(d_scratch); cudaFree(d_v); cudaFree(d_i);

    long bad = 0;
    std::vector<int> order(V);
    for (int b = 0; b < B; ++b) {
        const float* x = &logits[(size_t)b * V];
        for (int j = 0; j < V; ++j) order[j] = j;
        std::partial_sort(order.begin(), order.begin() + K, order.end(),
                          [&](int p, int q) { return x[p] > x[q] || (x[p] == x[q] && p < q); });
        for (int k = 0; k < K; ++k) bad += top_i[b * K + k] != order[k] || top_v[b * K + k] != x[order[k]];
    }
    if (bad) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
