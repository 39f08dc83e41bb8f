/*@prompt
Segmented sum: I have 200,000 variable-length segments described by CSR-style offsets (segment s covers values[offsets[s] .. offsets[s+1])), lengths between 0 and 100. Compute one sum per segment with one warp per segment.
@explanation
Segments this short are a poor fit for one block each (most threads would idle) and a poor fit for one thread each (lengths vary, so warps diverge and loads do not coalesce). One warp per segment is the middle ground: lane l reads elements `begin + l, begin + l + 32, ...`, so each load instruction covers up to 32 consecutive values, and a five-step `__shfl_xor_sync` butterfly sums the lanes. Empty segments fall out naturally: no lane enters the loop and the sum is 0. The offsets array has `num_segments + 1` entries. Values are multiples of 1/4 with small magnitude, so all partial sums are exact in float and the result must match the CPU exactly.
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

__global__ void segment_sum_warp(const float* __restrict__ values, const int* __restrict__ offsets,
                                 float* __restrict__ sums, int num_segments)
{
    const int seg = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (seg >= num_segments) return;
    const int begin = offsets[seg], end = offsets[seg + 1];
    float acc = 0.0f;
    for (int i = begin + lane; i < end; i += 32) acc += values[i];
    for (int m = 16; m > 0; m >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, m);
    if (lane == 0) sums[seg] = acc;
}

int main()
{
    const int num_segments = 200000;
    std::vector<int> offsets(num_segments + 1);
    offsets[0] = 0;
    for (int s = 0; s < num_segments; ++s) offsets[s + 1] = offsets[s] + (s * 37 + s / 7) % 101;  // 0..100
    const int n = offsets[num_segments];
    std::vector<float> values(n), sums(num_segments);
    for (int i = 0; i < n; ++i) values[i] = 0.25f * (float)((i % 41) - 20);

    float *d_vals, *d_sums;
    int* d_offs;
    CUDA_CHECK(cudaMalloc(&d_vals, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_offs, (num_segments + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, num_segments * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_vals, values.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_offs, offsets.data(), (num_segments + 1) * sizeof(int), cudaMemcpyHostToDevice));

    const int threads = 256;
    const int blocks = (num_segments * 32 + threads - 1) / threads;
    segment_sum_warp<<<blocks, threads>>>(d_vals, d_offs, d_sums, num_segments);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, num_segments * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_vals); cudaFree(d_offs); cudaFree(d_sums);

    int bad = 0, empty = 0;
    for (int s = 0; s < num_segments; ++s) {
        float ref = 0.0f;
        for (int i = offsets[s]; i < offsets[s + 1]; ++i) ref += values[i];
        empty += offsets[s] == offsets[s + 1];
        bad += sums[s] != ref;
    }
    printf("%d values, %d empty segments\n", n, empty);
    if (bad) {
        printf("FAIL: %d segments\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
