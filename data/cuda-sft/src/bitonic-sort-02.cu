/*@prompt
Sort 4M (2^22) unsigned 32-bit keys on the GPU with a bitonic sorting network in global memory: the host loops over the stages and launches one kernel per compare-exchange step.
@explanation
For an array whose length is a power of two, bitonic sort runs stages k = 2, 4, ..., n and within each stage steps j = k/2, ..., 1. In a step every element i is paired with `i ^ j`; the thread for the lower index of the pair compares the two and swaps them so that the pair is ascending when bit k of i is 0 and descending otherwise. Every step must see the complete result of the previous one across the whole array, which a single block cannot synchronise, so each step is its own launch (22 * 23 / 2 = 253 launches for 2^22 keys); launches on one stream execute in order. Only half the threads do work in each step; the shared-memory and hybrid variants reduce both the launches and the global traffic. The result must equal `std::sort`.
@*/
#include <algorithm>
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

__global__ void bitonic_step(uint32_t* keys, unsigned j, unsigned k)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned partner = i ^ j;
    if (partner > i) {
        const uint32_t a = keys[i], b = keys[partner];
        const bool ascending = (i & k) == 0;
        if ((a > b) == ascending) {
            keys[i] = b;
            keys[partner] = a;
        }
    }
}

int main()
{
    const unsigned n = 1u << 22;  // must be a power of two
    std::vector<uint32_t> keys(n), out(n);
    uint32_t s = 123456789u;
    for (auto& k : keys) { s ^= s << 13; s ^= s >> 17; s ^= s << 5; k = s % 1000000u; }

    uint32_t* d;
    CUDA_CHECK(cudaMalloc(&d, n * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemcpy(d, keys.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    const int threads = 256;
    const unsigned blocks = n / threads;
    int launches = 0;
    for (unsigned k = 2; k <= n; k <<= 1)
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            bitonic_step<<<blocks, threads>>>(d, j, k);
            ++launches;
        }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    cudaFree(d);

    std::sort(keys.begin(), keys.end());
    printf("%d launches\n", launches);
    if (out != keys) {
        printf("FAIL: output is not the sorted input\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
