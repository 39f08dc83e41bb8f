/*@prompt
Row-wise top-k with k = 8 for a [4096, 1024] float matrix: output the 8 largest values of every row in descending order together with their column indices (ties broken by the smaller index). Use one warp per row.
@explanation
Each lane first scans its strided share of the row (32 of the 1024 columns) and keeps a private sorted list of its best 8 (value, index) pairs in registers, inserting with a short bubble step; most candidates are rejected by a single comparison against the list's last entry. The warp then merges the 32 lists in 8 rounds: every lane offers the head of its list, a `__shfl_xor_sync` butterfly finds the best head (larger value, then smaller index), lane 0 records it, and the lane that owned it pops its head. Because ties are broken by index everywhere, the result is deterministic and matches a CPU partial sort with the same ordering exactly. `#pragma unroll` on the fixed-size list loops keeps the arrays in registers.
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

constexpr int K = 8;

__host__ __device__ inline bool better(float v, int i, float w, int j) { return v > w || (v == w && i < j); }

__global__ void topk_warp(const float* __restrict__ x, float* __restrict__ vals, int* __restrict__ idxs, int rows, int cols)
{
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* r = x + (size_t)row * cols;

    float v[K];
    int id[K];
#pragma unroll
    for (int k = 0; k < K; ++k) { v[k] = -INFINITY; id[k] = 0x7fffffff; }
    for (int c = lane; c < cols; c += 32) {
        float cv = r[c];
        if (!better(cv, c, v[K - 1], id[K - 1])) continue;
        v[K - 1] = cv; id[K - 1] = c;
#pragma unroll
        for (int k = K - 1; k > 0; --k) {  // bubble the new entry up
            if (better(v[k], id[k], v[k - 1], id[k - 1])) {
                float tv = v[k]; v[k] = v[k - 1]; v[k - 1] = tv;
                int ti = id[k]; id[k] = id[k - 1]; id[k - 1] = ti;
            }
        }
    }
    for (int out = 0; out < K; ++out) {
        float bv = v[0];
        int bi = id[0];
        for (int m = 16; m > 0; m >>= 1) {
            float ov = __shfl_xor_sync(0xffffffff, bv, m);
            int oi = __shfl_xor_sync(0xffffffff, bi, m);
            if (better(ov, oi, bv, bi)) { bv = ov; bi = oi; }
        }
        if (lane == 0) {
            vals[(size_t)row * K + out] = bv;
            idxs[(size_t)row * K + out] = bi;
        }
        if (id[0] == bi) {  // indices are unique, so exactly one lane owns the winner: pop it
#pragma unroll
            for (int k = 0; k < K - 1; ++k) { v[k] = v[k + 1]; id[k] = id[k + 1]; }
            v[K - 1] = -INFINITY; id[K - 1] = 0x7fffffff;
        }
    }
}

int main()
{
    const int rows = 4096, cols = 1024;
    std::vector<float> x((size_t)rows * cols), vals((size_t)rows * K);
    std::vector<int> idxs((size_t)rows * K);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (float)((i * 2654435761u) % 5000u) * 0.01f;  // many ties

    float *dx, *dv;
    int* di;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dv, vals.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&di, idxs.size() * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    const int threads = 128;
    topk_warp<<<(rows * 32 + threads - 1) / threads, threads>>>(dx, dv, di, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(vals.data(), dv, vals.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(idxs.data(), di, idxs.size() * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dv); cudaFree(di);

    long bad = 0;
    std::vector<int> order(cols);
    for (int r = 0; r < rows; ++r) {
        const float* xr = &x[(size_t)r * cols];
        for (int c = 0; c < cols; ++c) order[c] = c;
        std::partial_sort(order.begin(), order.begin() + K, order.end(),
                          [&](int a, int b) { return better(xr[a], a, xr[b], b); });
        for (int k = 0; k < K; ++k)
            bad += idxs[(size_t)r * K + k] != order[k] || vals[(size_t)r * K + k] != xr[order[k]];
    }
    if (bad) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
