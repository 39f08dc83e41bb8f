/*@prompt
Implement the Hillis-Steele inclusive prefix sum in CUDA for rows of 1024 ints (many rows, one block per row, one thread per element). Use double-buffered shared memory.
@explanation
Hillis-Steele performs log2(n) steps; in the step with offset d every element adds the value d positions to its left, so after step k each element holds the sum of the 2^k elements ending at it. It does O(n log n) additions, more than a sequential scan, but every step is fully parallel, which is a good trade for a 1024-element row held in shared memory. Reading and writing the same array within a step would race (a thread could read a neighbour's already-updated value), so the kernel ping-pongs between two buffers and swaps their roles after each `__syncthreads()`. Integer sums are exact, so the CPU comparison is exact.
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

constexpr int kRowLen = 1024;

__global__ void hillis_steele_rows(const int* __restrict__ in, int* __restrict__ out)
{
    __shared__ int buf[2][kRowLen];
    const int t = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * kRowLen;

    int cur = 0;
    buf[cur][t] = in[base + t];
    __syncthreads();
    for (int offset = 1; offset < kRowLen; offset <<= 1) {
        const int nxt = 1 - cur;
        buf[nxt][t] = (t >= offset) ? buf[cur][t] + buf[cur][t - offset] : buf[cur][t];
        __syncthreads();
        cur = nxt;
    }
    out[base + t] = buf[cur][t];
}

int main()
{
    const int rows = 2000;
    std::vector<int> in((size_t)rows * kRowLen), out(in.size());
    for (size_t i = 0; i < in.size(); ++i) in[i] = (int)(i % 11) - 4;

    int *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));

    hillis_steele_rows<<<rows, kRowLen>>>(d_in, d_out);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);

    long bad = 0;
    for (int r = 0; r < rows; ++r) {
        int running = 0;
        for (int c = 0; c < kRowLen; ++c) {
            running += in[(size_t)r * kRowLen + c];
            if (out[(size_t)r * kRowLen + c] != running) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %ld wrong prefix sums\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
