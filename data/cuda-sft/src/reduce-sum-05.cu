/*@prompt
Write a templated reduction kernel where the block size and the number of items per thread are template parameters, so loops unroll at compile time. Sum 32-bit unsigned values into a 64-bit total, use __launch_bounds__ matching the template block size, and test two instantiations (128x8 and 256x4).
@explanation
With `BLOCK` and `ITEMS` as template parameters the load loop and the shared-memory tree both unroll completely, and `__launch_bounds__(BLOCK)` tells the compiler the exact block size it will run with. Each block owns a tile of `BLOCK * ITEMS` inputs; thread t loads elements t, t + BLOCK, t + 2*BLOCK, ..., so each load instruction of a warp reads 32 consecutive words. The tree in shared memory stops at 32 partial sums and the last warp finishes with `__shfl_down_sync`, which needs no `__syncthreads()`. Block totals go to a partial array that the host adds up; 64-bit integer sums are exact, so both instantiations must equal the CPU sum exactly.
@*/
#include <cstdint>
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

template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
tile_sum(const uint32_t* __restrict__ in, unsigned long long* __restrict__ partial, int n)
{
    static_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, "BLOCK: power of two >= 64");
    __shared__ unsigned long long s[BLOCK];
    const int base = blockIdx.x * BLOCK * ITEMS + threadIdx.x;

    unsigned long long acc = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int i = base + k * BLOCK;
        if (i < n) acc += in[i];
    }
    s[threadIdx.x] = acc;
    __syncthreads();

#pragma unroll
    for (int stride = BLOCK / 2; stride >= 32; stride >>= 1) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        unsigned long long v = s[threadIdx.x];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    }
}

template <int BLOCK, int ITEMS>
static unsigned long long gpu_sum(const uint32_t* d_in, int n)
{
    const int tile = BLOCK * ITEMS;
    const int grid = (n + tile - 1) / tile;
    unsigned long long* d_partial;
    CUDA_CHECK(cudaMalloc(&d_partial, grid * sizeof(unsigned long long)));
    tile_sum<BLOCK, ITEMS><<<grid, BLOCK>>>(d_in, d_partial, n);
    CUDA_CHECK(cudaGetLastError());
    std::vector<unsigned long long> partial(grid);
    CUDA_CHECK(cudaMemcpy(partial.data(), d_partial, grid * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_partial));
    unsigned long long total = 0;
    for (unsigned long long p : partial) total += p;
    return total;
}

int main()
{
    const int n = 5000011;
    std::vector<uint32_t> h(n);
    unsigned long long ref = 0;
    uint32_t state = 2463534242u;
    for (int i = 0; i < n; ++i) {
        state ^= state << 13; state ^= state >> 17; state ^= state << 5;  // xorshift32
        h[i] = state;
        ref += state;
    }

    uint32_t* d_in;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));

    unsigned long long a = gpu_sum<128, 8>(d_in, n);
    unsigned long long b = gpu_sum<256, 4>(d_in, n);
    CUDA_CHECK(cudaFree(d_in));

    printf("cpu %llu, <128,8> %llu, <256,4> %llu\n", ref, a, b);
    if (a != ref || b != ref) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
