/*@prompt
Count how many times each byte value (0-255) occurs in a 64 MB buffer using CUDA and atomicAdd on a global 256-bin histogram.
@explanation
Every thread walks the buffer with a grid-stride loop and increments the bin of each byte with `atomicAdd(&hist[byte], 1u)`. Atomics make concurrent increments of the same bin safe; the price is contention when many threads hit the same bin at once, which is why this direct version is slowest on skewed data (the shared-memory privatised histogram is the usual next step). The bins must start at zero, so the host clears them with `cudaMemset` before the launch. Counting is exact, so the result must equal a CPU count exactly, and the counts must add up to the buffer length.
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

__global__ void byte_histogram(const unsigned char* data, size_t n, unsigned int* hist)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&hist[data[i]], 1u);
}

int main()
{
    const size_t n = 64u << 20;
    std::vector<unsigned char> data(n);
    unsigned state = 12345u;
    for (size_t i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;  // LCG
        unsigned char b = (unsigned char)(state >> 24);
        data[i] = (i % 3 == 0) ? (unsigned char)('a' + b % 26) : b;  // skew towards letters
    }

    unsigned char* d_data;
    unsigned int* d_hist;
    CUDA_CHECK(cudaMalloc(&d_data, n));
    CUDA_CHECK(cudaMalloc(&d_hist, 256 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(d_data, data.data(), n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_hist, 0, 256 * sizeof(unsigned int)));

    int threads = 256;
    int blocks = 1024;
    byte_histogram<<<blocks, threads>>>(d_data, n, d_hist);
    CUDA_CHECK(cudaGetLastError());

    unsigned int hist[256];
    CUDA_CHECK(cudaMemcpy(hist, d_hist, sizeof(hist), cudaMemcpyDeviceToHost));
    cudaFree(d_data);
    cudaFree(d_hist);

    unsigned int ref[256] = {0};
    for (size_t i = 0; i < n; ++i) ref[data[i]]++;
    size_t total = 0;
    int bad = 0;
    for (int b = 0; b < 256; ++b) {
        total += hist[b];
        if (hist[b] != ref[b]) ++bad;
    }
    if (bad || total != n) {
        printf("FAIL: %d bins differ, total %zu of %zu\n", bad, total, n);
        return 1;
    }
    printf("PASS ('a' occurs %u times)\n", hist['a']);
    return 0;
}
