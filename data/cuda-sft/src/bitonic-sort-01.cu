/*@prompt
Sort each row of a [4096, 1024] float matrix ascending using bitonic sort in shared memory: one block per row, 512 threads, each thread doing one compare-exchange per step.
@explanation
Bitonic sort is a sorting network: the sequence of comparisons does not depend on the data, so all threads stay in lockstep and only `__syncthreads()` is needed between steps. For stage sizes k = 2, 4, ..., 1024 and strides j = k/2, ..., 1 the array is split into 512 disjoint pairs (i, i + j) with bit j of i clear; thread t takes the pair starting at `i = 2t - (t & (j - 1))`. A pair is put in ascending order when bit k of i is 0 and descending otherwise, which builds ever longer bitonic runs until the final stage (k = 1024) leaves the whole row ascending. The row is loaded into shared memory once (two elements per thread) and written back once; the 55 steps in between touch only shared memory. The result must equal `std::sort` of the row exactly.
@*/
#include <algorithm>
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

constexpr int N = 1024;  // row length, a power of two; blockDim.x == N / 2

__global__ void bitonic_sort_rows(float* data)
{
    __shared__ float s[N];
    float* row = data + (size_t)blockIdx.x * N;
    const int t = threadIdx.x;
    s[t] = row[t];
    s[t + N / 2] = row[t + N / 2];
    __syncthreads();

    for (int k = 2; k <= N; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            const int i = 2 * t - (t & (j - 1));  // bit j of i is clear
            const int p = i + j;
            const bool ascending = (i & k) == 0;
            const float a = s[i], b = s[p];
            if ((a > b) == ascending) {
                s[i] = b;
                s[p] = a;
            }
            __syncthreads();
        }
    }
    row[t] = s[t];
    row[t + N / 2] = s[t + N / 2];
}

int main()
{
    const int rows = 4096;
    std::vector<float> data((size_t)rows * N), sorted(data.size());
    for (size_t i = 0; i < data.size(); ++i) data[i] = std::sin(0.7f * (float)i) * 1000.0f + (float)(i % 7);

    float* d;
    CUDA_CHECK(cudaMalloc(&d, data.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d, data.data(), data.size() * sizeof(float), cudaMemcpyHostToDevice));
    bitonic_sort_rows<<<rows, N / 2>>>(d);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(sorted.data(), d, sorted.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d);

    long bad = 0;
    for (int r = 0; r < rows; ++r) {
        std::vector<float> ref(data.begin() + (size_t)r * N, data.begin() + (size_t)(r + 1) * N);
        std::sort(ref.begin(), ref.end());
        for (int c = 0; c < N; ++c) bad += sorted[(size_t)r * N + c] != ref[c];
    }
    if (bad) {
        printf("FAIL: %ld misplaced values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
