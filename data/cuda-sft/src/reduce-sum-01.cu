/*@prompt
Sum a large float array with a classic shared-memory tree reduction: each block of 256 threads loads its elements into shared memory, halves the number of active threads each step with __syncthreads() between steps, and writes one partial sum. Finish the partial sums on the host.
@explanation
Each block copies 256 elements (zero for threads past the end) into `__shared__` memory. In every step the lower half of the active threads adds the upper half's value into its own slot; the stride starts at `blockDim.x / 2` and halves, so active threads stay contiguous, warps retire completely and there are no shared-memory bank conflicts. `__syncthreads()` sits outside the `if`, so every thread of the block reaches it. Thread 0 writes the block's total to `partial[blockIdx.x]`, and the few thousand partial sums are added on the host in double.

Floating-point addition is not associative, so the GPU's tree order differs from the sequential CPU loop. The inputs are positive, so the sum has no cancellation and every value passes through at most 8 float additions in a block's tree: a relative tolerance of 1e-6 is safe, yet any lost or doubled block shows up.
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

#define BLOCK 256

__global__ void block_sum(const float* in, float* partial, int n)
{
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();

    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

int main()
{
    const int n = 10000000;
    const int blocks = (n + BLOCK - 1) / BLOCK;

    std::vector<float> h(n);
    double ref = 0.0, abs_sum = 0.0;
    for (int i = 0; i < n; ++i) {
        h[i] = (float)((i * 2654435761u) % 20001u) / 20000.0f;  // [0, 1]
        ref += h[i];
        abs_sum += std::fabs(h[i]);
    }

    float *d_in, *d_partial;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_partial, blocks * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    block_sum<<<blocks, BLOCK>>>(d_in, d_partial, n);
    CUDA_CHECK(cudaGetLastError());

    std::vector<float> partial(blocks);
    CUDA_CHECK(cudaMemcpy(partial.data(), d_partial, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    double gpu_sum = 0.0;
    for (int b = 0; b < blocks; ++b) gpu_sum += partial[b];

    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_partial));

    double err = std::fabs(gpu_sum - ref);
    printf("gpu %.6f  cpu %.6f  |diff| %.3e\n", gpu_sum, ref, err);
    if (!(err <= 1e-6 * abs_sum)) {  // also fails on NaN
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
