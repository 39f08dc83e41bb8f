/*@prompt
Histogram of float samples: 100 equal-width bins over [-4, 4). Values outside the range should be counted in two extra counters (underflow, overflow) instead of being dropped. 20 million normally distributed-ish samples; privatize in shared memory.
@explanation
The bin of x is `floor((x - lo) * (nbins / (hi - lo)))`; values below `lo` go to an underflow slot and values at or above `hi` to an overflow slot, so every sample is counted exactly once. A rounding edge case matters: x just below `hi` can still compute to `nbins` after the multiply, so the index is clamped to `nbins - 1` whenever `x < hi`. Each block keeps `nbins + 2` counters in shared memory (allocated dynamically, since the bin count is a runtime value), counts its grid-stride slice with shared atomics, then merges non-zero counters into global memory. The CPU reference evaluates the identical float expression, so the bin of every sample agrees and the counts must match exactly.
@*/
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

// Slot layout: [0, nbins) regular bins, nbins = underflow, nbins + 1 = overflow.
__host__ __device__ inline int bin_of(float x, float lo, float hi, int nbins, float scale)
{
    if (x < lo) return nbins;
    if (!(x < hi)) return nbins + 1;
    int b = (int)((x - lo) * scale);
    return b < nbins ? b : nbins - 1;
}

__global__ void float_histogram(const float* __restrict__ x, int n, float lo, float hi, int nbins,
                                unsigned int* __restrict__ counts)
{
    extern __shared__ unsigned int local[];  // nbins + 2 counters
    const float scale = nbins / (hi - lo);
    for (int b = threadIdx.x; b < nbins + 2; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[bin_of(x[i], lo, hi, nbins, scale)], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins + 2; b += blockDim.x)
        if (local[b]) atomicAdd(&counts[b], local[b]);
}

int main()
{
    const int n = 20000000, nbins = 100;
    const float lo = -4.0f, hi = 4.0f;
    std::vector<float> x(n);
    unsigned s = 7u;
    for (int i = 0; i < n; ++i) {  // sum of 4 uniforms: roughly normal, a few samples beyond +-4
        float acc = 0.0f;
        for (int k = 0; k < 4; ++k) {
            s = s * 1103515245u + 12345u;
            acc += (float)(s >> 8) / 16777216.0f - 0.5f;
        }
        x[i] = acc * 3.5f;
    }

    float* dx;
    unsigned int* dcounts;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dcounts, (nbins + 2) * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dcounts, 0, (nbins + 2) * sizeof(unsigned int)));

    const int threads = 256, blocks = 512;
    const size_t smem = (nbins + 2) * sizeof(unsigned int);
    float_histogram<<<blocks, threads, smem>>>(dx, n, lo, hi, nbins, dcounts);
    CUDA_CHECK(cudaGetLastError());
    std::vector<unsigned int> counts(nbins + 2), ref(nbins + 2, 0);
    CUDA_CHECK(cudaMemcpy(counts.data(), dcounts, counts.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    cudaFree(dx);
    cudaFree(dcounts);

    const float scale = nbins / (hi - lo);
    for (int i = 0; i < n; ++i) ref[bin_of(x[i], lo, hi, nbins, scale)]++;
    int bad = 0;
    for (int b = 0; b < nbins + 2; ++b) bad += counts[b] != ref[b];
    printf("underflow %u, overflow %u, centre bin %u\n", counts[nbins], counts[nbins + 1], counts[nbins / 2]);
    if (bad) {
        printf("FAIL: %d counters differ\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
