/*@prompt
Write the work-efficient (Blelloch) exclusive scan: an up-sweep that builds a reduction tree in place in shared memory and a down-sweep that turns it into an exclusive prefix sum. Each block scans one segment of 2048 unsigned ints with 1024 threads (two elements per thread). Pad the shared-memory indices to avoid bank conflicts, and also output each segment's total.
@explanation
The up-sweep combines pairs at distance 1, 2, 4, ... so that after log2(n) levels the last slot holds the segment total; the down-sweep clears that slot and walks back down, at each node passing its value to the left child and the sum of its value and the old left child to the right child. The result is an exclusive scan in O(n) additions. At deep tree levels the touched indices are multiples of large powers of two, which would all fall into the same shared-memory bank; adding `i >> 5` to every index (one pad slot per 32 entries) spreads them across banks. Thread 0 saves the total before it clears the root. Unsigned integer arithmetic is exact, so the host compares exactly.
@after
For arrays longer than one segment, scan the `totals` array and add each segment's offset back, as in the three-phase scan.
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

constexpr int kSeg = 2048;        // elements per block
constexpr int kThreads = kSeg / 2;
#define PAD(i) ((i) + ((i) >> 5)) // one extra slot every 32 entries

__global__ void blelloch_scan(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                              unsigned* __restrict__ totals)
{
    __shared__ unsigned tree[kSeg + kSeg / 32];
    const int t = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * kSeg;

    tree[PAD(t)] = in[base + t];
    tree[PAD(t + kSeg / 2)] = in[base + t + kSeg / 2];

    int step = 1;
    for (int active = kSeg / 2; active > 0; active >>= 1) {  // up-sweep
        __syncthreads();
        if (t < active) {
            int left = step * (2 * t + 1) - 1;
            int right = step * (2 * t + 2) - 1;
            tree[PAD(right)] += tree[PAD(left)];
        }
        step <<= 1;
    }
    if (t == 0) {
        totals[blockIdx.x] = tree[PAD(kSeg - 1)];
        tree[PAD(kSeg - 1)] = 0;
    }
    for (int active = 1; active < kSeg; active <<= 1) {  // down-sweep
        step >>= 1;
        __syncthreads();
        if (t < active) {
            int left = step * (2 * t + 1) - 1;
            int right = step * (2 * t + 2) - 1;
            unsigned l = tree[PAD(left)];
            tree[PAD(left)] = tree[PAD(right)];
            tree[PAD(right)] += l;
        }
    }
    __syncthreads();
    out[base + t] = tree[PAD(t)];
    out[base + t + kSeg / 2] = tree[PAD(t + kSeg / 2)];
}

int main()
{
    const int segments = 1500;
    const size_t n = (size_t)segments * kSeg;
    std::vector<unsigned> in(n), out(n), totals(segments);
    for (size_t i = 0; i < n; ++i) in[i] = (unsigned)((i * 2246822519u) >> 20) & 1023u;

    unsigned *d_in, *d_out, *d_tot;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_tot, segments * sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));

    blelloch_scan<<<segments, kThreads>>>(d_in, d_out, d_tot);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(totals.data(), d_tot, segments * sizeof(unsigned), cudaMemcpyDeviceToHost));
    cudaFree(d_in); cudaFree(d_out); cudaFree(d_tot);

    long bad = 0;
    for (int s = 0; s < segments; ++s) {
        unsigned running = 0;
        for (int k = 0; k < kSeg; ++k) {
            size_t i = (size_t)s * kSeg + k;
            if (out[i] != running) ++bad;  // exclusive: sum of the elements before i
            running += in[i];
        }
        if (totals[s] != running) ++bad;
    }
    if (bad) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
