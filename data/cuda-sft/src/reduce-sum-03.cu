/*@prompt
Use cooperative groups to write a block reduction: partition the block into 32-thread tiles, reduce each tile with cg::reduce, then combine the tile results. Sum an array of signed ints into a 64-bit total.
@explanation
`cg::this_thread_block()` names the block and `cg::tiled_partition<32>(block)` splits it into warp-sized tiles whose size is known at compile time, so `cg::reduce(tile, v, cg::plus<long long>())` can use hardware shuffles. Each tile's rank-0 thread writes its sum to shared memory, `block.sync()` (the cooperative-groups spelling of `__syncthreads()`) makes those writes visible, and the first tile reduces the per-tile sums. Accumulating in `long long` keeps the total of 8M ints exact. There is no `atomicAdd` for signed 64-bit integers, but two's-complement addition is the same bit operation as unsigned addition, so adding the value cast to `unsigned long long` gives the right signed result.
@*/
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                         \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

__global__ void sum_int64(const int* __restrict__ in, unsigned long long* total, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    __shared__ long long tile_sums[32];

    long long v = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        v += in[i];

    v = cg::reduce(tile, v, cg::plus<long long>());
    if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
    block.sync();

    if (tile.meta_group_rank() == 0) {
        unsigned n_tiles = tile.meta_group_size();
        long long w = tile.thread_rank() < n_tiles ? tile_sums[tile.thread_rank()] : 0;
        w = cg::reduce(tile, w, cg::plus<long long>());
        if (tile.thread_rank() == 0) atomicAdd(total, (unsigned long long)w);
    }
}

int main()
{
    const int n = 8 << 20;
    std::vector<int> h(n);
    long long ref = 0;
    for (int i = 0; i < n; ++i) {
        h[i] = (int)((i * 1103515245u + 12345u) >> 8) % 2000001 - 1000000;
        ref += h[i];
    }

    int* d_in;
    unsigned long long* d_total;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_total, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_total, 0, sizeof(unsigned long long)));

    dim3 block(256);
    dim3 grid(480);
    sum_int64<<<grid, block>>>(d_in, d_total, n);
    CUDA_CHECK(cudaGetLastError());

    unsigned long long raw = 0;
    CUDA_CHECK(cudaMemcpy(&raw, d_total, sizeof(raw), cudaMemcpyDeviceToHost));
    long long got = (long long)raw;
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_total));

    printf("gpu %lld cpu %lld\n", got, ref);
    if (got != ref) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
