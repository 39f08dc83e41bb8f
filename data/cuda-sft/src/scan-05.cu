/*@prompt
Implement a single-pass inclusive prefix sum with decoupled look-back (the technique behind CUB's DeviceScan). Each block scans a 2048-element tile, publishes its aggregate, looks back over predecessor tiles' status words to find its exclusive prefix, and publishes its inclusive prefix. Make sure it cannot deadlock if blocks are scheduled out of order.
@explanation
The input is read once and the output written once, in one launch:
- **Tile order.** Blocks may start in any order, and a block that spins waiting for a predecessor that has not started yet would deadlock. Each block therefore takes its tile number from a global `atomicAdd` counter instead of `blockIdx.x`: a tile's predecessors were claimed by blocks that are already running.
- **Status words.** Every tile has a 64-bit word: flag in the high half (0 = not ready, A = aggregate only, P = inclusive prefix), value in the low half. Flag and value live in one aligned 64-bit word written with `atomicExch`, so a reader never sees a flag without its value.
- **Look-back.** Thread 0 walks backwards from the previous tile, adding A values and continuing, until it meets a P value, which ends the walk; a not-ready tile is re-read until it publishes. Because every tile posts its aggregate before looking back, the walk rarely waits for a full prefix chain.
- **Local scan.** The tile is staged in shared memory with coalesced loads; each thread scans 8 consecutive items serially, a warp-shuffle scan combines the thread totals, and the tile's exclusive prefix is added before a coalesced store.

The sums are unsigned and wrap modulo 2^32 on both sides, so the check is exact.
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

constexpr int kThreads = 256, kItems = 8, kTile = kThreads * kItems;
constexpr unsigned long long kFlagA = 1ull << 32, kFlagP = 2ull << 32, kFlagMask = ~0xffffffffull;

__global__ void single_pass_scan(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                 unsigned long long* status, unsigned* tile_counter, int n)
{
    __shared__ unsigned tile_data[kTile];
    __shared__ unsigned warp_incl[kThreads / 32];
    __shared__ unsigned s_tile, s_prefix;

    if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const unsigned tile = s_tile;
    const size_t base = (size_t)tile * kTile;

    for (int k = 0; k < kItems; ++k) {  // coalesced load into shared memory
        size_t i = base + k * kThreads + threadIdx.x;
        tile_data[k * kThreads + threadIdx.x] = i < (size_t)n ? in[i] : 0u;
    }
    __syncthreads();

    unsigned items[kItems], run = 0;
    for (int k = 0; k < kItems; ++k) {  // serial scan of this thread's 8 consecutive items
        run += tile_data[threadIdx.x * kItems + k];
        items[k] = run;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned incl = run;
    for (int d = 1; d < 32; d <<= 1) {
        unsigned up = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += up;
    }
    if (lane == 31) warp_incl[warp] = incl;
    __syncthreads();
    unsigned thread_offset = incl - run, aggregate = 0;
    for (int w = 0; w < kThreads / 32; ++w) {
        if (w < warp) thread_offset += warp_incl[w];
        aggregate += warp_incl[w];
    }

    if (threadIdx.x == 0) {
        unsigned prefix = 0;
        if (tile == 0) {
            atomicExch(&status[0], kFlagP | aggregate);
        } else {
            atomicExch(&status[tile], kFlagA | aggregate);
            const volatile unsigned long long* vstatus = status;
            for (int pred = (int)tile - 1; pred >= 0;) {
                unsigned long long s = vstatus[pred];
                unsigned long long flag = s & kFlagMask;
                if (flag == 0) continue;  // predecessor not ready yet: read again
                prefix += (unsigned)s;
                if (flag == kFlagP) break;
                --pred;
            }
            atomicExch(&status[tile], kFlagP | (unsigned long long)(prefix + aggregate));
        }
        s_prefix = prefix;
    }
    __syncthreads();

    const unsigned offset = s_prefix + thread_offset;
    for (int k = 0; k < kItems; ++k) tile_data[threadIdx.x * kItems + k] = items[k] + offset;
    __syncthreads();
    for (int k = 0; k < kItems; ++k) {
        size_t i = base + k * kThreads + threadIdx.x;
        if (i < (size_t)n) out[i] = tile_data[k * kThreads + threadIdx.x];
    }
}

int main()
{
    const int n = 20000003;
    const int tiles = (n + kTile - 1) / kTile;
    std::vector<unsigned> h(n), res(n);
    for (int i = 0; i < n; ++i) h[i] = (unsigned)(i * 2654435761u) >> 12;

    unsigned *d_in, *d_out, *d_counter;
    unsigned long long* d_status;
    CUDA_CHECK(cudaMalloc(&d_in, (size_t)n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_out, (size_t)n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_status, tiles * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMalloc(&d_counter, sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d_in, h.data(), (size_t)n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_status, 0, tiles * sizeof(unsigned long long)));  // all "not ready"
    CUDA_CHECK(cudaMemset(d_counter, 0, sizeof(unsigned)));

    single_pass_scan<<<tiles, kThreads>>>(d_in, d_out, d_status, d_counter, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(res.data(), d_out, (size_t)n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    cudaFree(d_in); cudaFree(d_out); cudaFree(d_status); cudaFree(d_counter);

    unsigned running = 0;
    long bad = 0;
    for (int i = 0; i < n; ++i) {
        running += h[i];
        if (res[i] != running) ++bad;
    }
    if (bad) {
        printf("FAIL: %ld wrong prefixes\n", bad);
        return 1;
    }
    printf("PASS: %d tiles\n", tiles);
    return 0;
}
