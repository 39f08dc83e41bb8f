/*@prompt
Estimate pi with a Monte Carlo simulation on the GPU: sample points in the unit square, count how many fall inside the quarter circle. 2^26 samples in total. Make the count exactly reproducible so it can be verified on the CPU.
@explanation
Each thread owns an independent xorshift32 stream seeded from a hash of its global index and draws `kSamplesPerThread` points. To make the count bit-reproducible, the coordinates are 16-bit integers x, y in [0, 65536) and a point is inside when `x^2 + y^2 < 2^32` (computed in 64-bit integers), which is the quarter-circle test scaled by 2^16; floating point with fused multiply-adds could flip points on the boundary. Counts are reduced per warp with `__shfl_down_sync`, then per block in shared memory, and one `atomicAdd` on an `unsigned long long` per block accumulates the total. The CPU replays every thread's stream and must find the same count; the estimate `4 * hits / samples` must also be within 1e-3 of pi (the standard error at 2^26 samples is about 2e-4).
@after
Doubling the number of samples reduces the statistical error only by a factor of sqrt(2); the count itself stays exactly reproducible because of the integer test.
@*/
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

constexpr int kThreads = 256, kBlocks = 256, kSamplesPerThread = 1024;  // 2^26 samples

__host__ __device__ inline uint32_t seed_for(uint32_t tid)
{
    uint32_t h = tid * 0x9E3779B9u + 0x7F4A7C15u;
    h ^= h >> 16; h *= 0x85EBCA6Bu; h ^= h >> 13; h *= 0xC2B2AE35u; h ^= h >> 16;
    return h ? h : 1u;  // xorshift state must be non-zero
}

__host__ __device__ inline uint32_t xorshift32(uint32_t& s)
{
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    return s;
}

__host__ __device__ inline uint32_t hits_for_thread(uint32_t tid)
{
    uint32_t s = seed_for(tid), hits = 0;
    for (int k = 0; k < kSamplesPerThread; ++k) {
        uint64_t x = xorshift32(s) >> 16, y = xorshift32(s) >> 16;
        hits += (x * x + y * y < (1ull << 32));
    }
    return hits;
}

__global__ void count_hits(unsigned long long* total)
{
    __shared__ uint32_t warp_hits[kThreads / 32];
    uint32_t h = hits_for_thread(blockIdx.x * blockDim.x + threadIdx.x);
    for (int o = 16; o > 0; o >>= 1) h += __shfl_down_sync(0xffffffff, h, o);
    if ((threadIdx.x & 31) == 0) warp_hits[threadIdx.x >> 5] = h;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long block_hits = 0;
        for (int w = 0; w < kThreads / 32; ++w) block_hits += warp_hits[w];
        atomicAdd(total, block_hits);
    }
}

int main()
{
    unsigned long long* d_total;
    CUDA_CHECK(cudaMalloc(&d_total, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(d_total, 0, sizeof(unsigned long long)));
    count_hits<<<kBlocks, kThreads>>>(d_total);
    CUDA_CHECK(cudaGetLastError());
    unsigned long long hits = 0;
    CUDA_CHECK(cudaMemcpy(&hits, d_total, sizeof(hits), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_total));

    unsigned long long ref = 0;
    for (uint32_t t = 0; t < (uint32_t)(kBlocks * kThreads); ++t) ref += hits_for_thread(t);

    const double samples = (double)kBlocks * kThreads * kSamplesPerThread;
    const double pi_est = 4.0 * (double)hits / samples;
    printf("hits gpu %llu cpu %llu, pi ~ %.6f\n", hits, ref, pi_est);
    if (hits != ref || !(std::fabs(pi_est - 3.14159265358979) <= 1e-3)) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
