/*@prompt
Brute-force k-nearest-neighbours: for each of 2048 query points find the 8 nearest of 16384 reference points in 3D (squared Euclidean distance), returning indices sorted by distance (ties to the smaller index). One thread per query; stage the reference points through shared memory in tiles.
@explanation
Every query must look at every reference point, so the reference set is streamed through shared memory: each 128-thread block loads a tile of 128 points (one per thread), synchronises, and every thread compares its query against the whole tile before the block moves on; each reference point is fetched from global memory once per block instead of once per thread. A thread keeps its 8 best (distance, index) pairs in a sorted register list with insertion. The coordinates are integers (stored as `int4`, the fourth component unused), so squared distances are exact 32-bit integers and the GPU and CPU agree even on ties; floating-point distances could otherwise be contracted into FMAs and order near-ties differently. Query threads past the end still help load tiles and reach every barrier, but write nothing.
@*/
#include <algorithm>
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

constexpr int K = 8, TILE = 128;

__global__ void knn_bruteforce(const int4* __restrict__ queries, int nq, const int4* __restrict__ refs, int nr,
                               int* __restrict__ knn_idx, int* __restrict__ knn_dist)
{
    __shared__ int4 tile[TILE];
    const int q = blockIdx.x * TILE + threadIdx.x;
    const int4 p = (q < nq) ? queries[q] : make_int4(0, 0, 0, 0);
    int bd[K], bi[K];
    for (int k = 0; k < K; ++k) { bd[k] = 0x7fffffff; bi[k] = 0x7fffffff; }

    for (int base = 0; base < nr; base += TILE) {
        if (base + threadIdx.x < nr) tile[threadIdx.x] = refs[base + threadIdx.x];
        __syncthreads();
        const int len = min(TILE, nr - base);
        for (int t = 0; t < len; ++t) {
            int dx = p.x - tile[t].x, dy = p.y - tile[t].y, dz = p.z - tile[t].z;
            int d = dx * dx + dy * dy + dz * dz, id = base + t;
            if (d > bd[K - 1] || (d == bd[K - 1] && id > bi[K - 1])) continue;
            int k = K - 1;
            for (; k > 0 && (d < bd[k - 1] || (d == bd[k - 1] && id < bi[k - 1])); --k) { bd[k] = bd[k - 1]; bi[k] = bi[k - 1]; }
            bd[k] = d; bi[k] = id;
        }
        __syncthreads();  // the tile is overwritten next iteration
    }
    if (q < nq)
        for (int k = 0; k < K; ++k) { knn_idx[q * K + k] = bi[k]; knn_dist[q * K + k] = bd[k]; }
}

int main()
{
    const int nq = 2048, nr = 16384;
    std::vector<int4> queries(nq), refs(nr);
    unsigned s = 3u;
    auto next = [&]() { s = s * 1664525u + 1013904223u; return (int)((s >> 16) % 1000u); };  // coords 0..999
    for (auto& r : refs) r = make_int4(next(), next(), next(), 0);
    for (auto& q : queries) q = make_int4(next(), next(), next(), 0);

    int4 *d_q, *d_r;
    int *d_idx, *d_dist;
    CUDA_CHECK(cudaMalloc(&d_q, nq * sizeof(int4)));
    CUDA_CHECK(cudaMalloc(&d_r, nr * sizeof(int4)));
    CUDA_CHECK(cudaMalloc(&d_idx, nq * K * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_dist, nq * K * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_q, queries.data(), nq * sizeof(int4), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_r, refs.data(), nr * sizeof(int4), cudaMemcpyHostToDevice));
    knn_bruteforce<<<(nq + TILE - 1) / TILE, TILE>>>(d_q, nq, d_r, nr, d_idx, d_dist);
    CUDA_CHECK(cudaGetLastError());
    std::vector<int> idx(nq * K), dist(nq * K);
    CUDA_CHECK(cudaMemcpy(idx.data(), d_idx, idx.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dist.data(), d_dist, dist.size() * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_q); cudaFree(d_r); cudaFree(d_idx); cudaFree(d_dist);

    long bad = 0;
    std::vector<std::pair<int, int>> cand(nr);
    for (int q = 0; q < nq; ++q) {
        for (int r = 0; r < nr; ++r) {
            int dx = queries[q].x - refs[r].x, dy = queries[q].y - refs[r].y, dz = queries[q].z - refs[r].z;
            cand[r] = {dx * dx + dy * dy + dz * dz, r};
        }
        std::partial_sort(cand.begin(), cand.begin() + K, cand.end());
        for (int k = 0; k < K; ++k) bad += idx[q * K + k] != cand[k].second || dist[q * K + k] != cand[k].first;
    }
    if (bad) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
