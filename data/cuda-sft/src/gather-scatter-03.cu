/*@prompt
Implement scatter_add / index_add: out[index[i]] += src[i] where many i share the same index (10M sources into 1000 buckets). Use atomics and make the test deterministic even though float atomics are applied in arbitrary order.
@explanation
With only 1000 targets for 10 million sources, collisions are the norm, so the update must be an `atomicAdd`, which serialises conflicting updates in hardware. The order in which the additions land is unspecified, and float addition is not associative, so in general the result can vary in its last bits from run to run. The test sidesteps that by using source values that are multiples of 1/8 and small enough that every partial sum is exactly representable in float (each bucket total stays far below 2^21); then any order gives the same, exact answer, and the check can use `==`. A production kernel would first reduce duplicates inside a warp or block (or sort by index) to cut atomic traffic to hot buckets.
@after
If the sums must be bit-reproducible for arbitrary float data, sort the (index, value) pairs by index and use a segmented reduction instead of atomics.
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

__global__ void scatter_add(const float* __restrict__ src, const int* __restrict__ index,
                            float* __restrict__ out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&out[index[i]], src[i]);
}

int main()
{
    const int n = 10000000, buckets = 1000;
    std::vector<float> src(n), out(buckets);
    std::vector<int> index(n);
    std::vector<double> ref(buckets, 0.0);
    for (int i = 0; i < n; ++i) {
        src[i] = (float)(i % 17 - 8) * 0.125f;                 // multiples of 1/8 in [-1, 1]
        index[i] = (int)(((unsigned)i * 2654435761u) % buckets);
        ref[index[i]] += src[i];
    }

    float *d_src, *d_out;
    int* d_index;
    CUDA_CHECK(cudaMalloc(&d_src, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_index, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, buckets * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_src, src.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_index, index.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, buckets * sizeof(float)));

    scatter_add<<<1024, 256>>>(d_src, d_index, d_out, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, buckets * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_src); cudaFree(d_index); cudaFree(d_out);

    int bad = 0;
    for (int b = 0; b < buckets; ++b) bad += (double)out[b] != ref[b];
    if (bad) {
        printf("FAIL: %d buckets\n", bad);
        return 1;
    }
    printf("PASS (bucket 0 = %.3f)\n", out[0]);
    return 0;
}
