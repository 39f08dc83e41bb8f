/*@prompt
How do I do an inclusive prefix sum over an array that is much larger than one block? Show the classic three-phase approach: scan each block, scan the block totals, then add each block's offset. Use ints, n = 1,000,000, 1024 threads per block.
@explanation
A block can only synchronise with itself, so a large scan is split into three launches:
- `scan_blocks` scans each 1024-element chunk in shared memory and writes the chunk's total to `block_sums`.
- The same kernel runs again as a single block over `block_sums` (977 totals fit in one 1024-thread block), turning them into inclusive running totals.
- `add_offsets` adds the running total of all previous chunks, `block_sums[b - 1]`, to every element of chunk b.

Inside a block the scan uses warp shuffles: `__shfl_up_sync` builds an inclusive scan within each warp, the 32 warp totals are scanned by warp 0 in the same way, and each thread adds the total of the warps before it. Launches on the same stream run in order, so no extra synchronisation is needed between phases. Integer sums are exact.
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

constexpr int kBlock = 1024;

// Inclusive scan of in[0..n) chunk by chunk; block_sums[b] receives chunk b's total (if non-null).
__global__ void scan_blocks(const int* in, int* out, int* block_sums, int n)
{
    __shared__ int warp_totals[32];
    const int i = blockIdx.x * kBlock + threadIdx.x;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = (i < n) ? in[i] : 0;

    for (int d = 1; d < 32; d <<= 1) {  // inclusive warp scan
        int up = __shfl_up_sync(0xffffffff, v, d);
        if (lane >= d) v += up;
    }
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int w = warp_totals[lane];  // kBlock / 32 == 32 warps: every slot is written
        for (int d = 1; d < 32; d <<= 1) {
            int up = __shfl_up_sync(0xffffffff, w, d);
            if (lane >= d) w += up;
        }
        warp_totals[lane] = w;  // now inclusive over warps
    }
    __syncthreads();
    if (warp > 0) v += warp_totals[warp - 1];
    if (i < n) out[i] = v;
    if (block_sums && threadIdx.x == kBlock - 1) block_sums[blockIdx.x] = v;
}

__global__ void add_offsets(int* out, const int* scanned_sums, int n)
{
    const int i = blockIdx.x * kBlock + threadIdx.x;
    if (blockIdx.x > 0 && i < n) out[i] += scanned_sums[blockIdx.x - 1];
}

int main()
{
    const int n = 1000000;
    const int blocks = (n + kBlock - 1) / kBlock;  // 977 <= kBlock, so one pass over the sums suffices
    std::vector<int> h(n), result(n);
    for (int i = 0; i < n; ++i) h[i] = (i % 7 == 0) ? -3 : (i % 5);

    int *d_in, *d_out, *d_sums;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, blocks * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    scan_blocks<<<blocks, kBlock>>>(d_in, d_out, d_sums, n);
    CUDA_CHECK(cudaGetLastError());
    scan_blocks<<<1, kBlock>>>(d_sums, d_sums, nullptr, blocks);  // in place: each thread reads before any write
    CUDA_CHECK(cudaGetLastError());
    add_offsets<<<blocks, kBlock>>>(d_out, d_sums, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(result.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_in); cudaFree(d_out); cudaFree(d_sums);

    int bad = 0;
    long long running = 0;
    for (int i = 0; i < n; ++i) {
        running += h[i];
        if (result[i] != running) ++bad;
    }
    if (bad) {
        printf("FAIL: %d wrong\n", bad);
        return 1;
    }
    printf("PASS: last prefix %d\n", result[n - 1]);
    return 0;
}
