/*@prompt
Stream compaction: copy all elements of a float array that are greater than a threshold into an output array. Order of the output doesn't matter. Use a global atomic counter to hand out output slots.
@explanation
When output order is irrelevant, compaction is a single pass: every thread that keeps its element reserves a slot with `atomicAdd(&count, 1)`, which returns the counter's previous value, and writes the element there. The final counter value is the number of kept elements, copied back to size the result. Because slots are handed out in whatever order the atomics execute, the output is a permutation of the expected elements; the check sorts both the GPU output and the CPU reference and compares them. Contention on the single counter limits throughput when most elements pass; aggregating the reservation per warp (one atomic per warp) is the usual remedy.
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

__global__ void filter_greater(const float* __restrict__ in, float* __restrict__ out, int n, float threshold,
                               unsigned int* count)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = in[i];
        if (v > threshold) out[atomicAdd(count, 1u)] = v;
    }
}

int main()
{
    const int n = 4000000;
    const float threshold = 0.7f;
    std::vector<float> in(n);
    for (int i = 0; i < n; ++i) in[i] = std::sin(0.001f * i) * std::cos(0.00037f * i * i);

    float *d_in, *d_out;
    unsigned int* d_count;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_count, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_count, 0, sizeof(unsigned int)));

    filter_greater<<<1024, 256>>>(d_in, d_out, n, threshold, d_count);
    CUDA_CHECK(cudaGetLastError());
    unsigned int count = 0;
    CUDA_CHECK(cudaMemcpy(&count, d_count, sizeof(count), cudaMemcpyDeviceToHost));
    std::vector<float> out(count);
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_in); cudaFree(d_out); cudaFree(d_count);

    std::vector<float> ref;
    for (float v : in) if (v > threshold) ref.push_back(v);
    std::sort(out.begin(), out.end());
    std::sort(ref.begin(), ref.end());
    printf("kept %u of %d\n", count, n);
    if (out != ref) {
        printf("FAIL: output is not the expected set (expected %zu elements)\n", ref.size());
        return 1;
    }
    printf("PASS\n");
    return 0;
}
