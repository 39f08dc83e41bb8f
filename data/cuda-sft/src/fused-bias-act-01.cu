/*@prompt
After a GEMM I have Y [tokens=16384, features=3072] (row-major float) and a bias vector [3072]. Write one kernel that adds the bias and applies ReLU in place, instead of two separate kernels.
@explanation
Fusing bias and activation halves the memory traffic: unfused, Y is read and written once for the bias add and once more for the ReLU. The bias is indexed by the column, `i % features`; with a flat grid-stride loop over all elements, consecutive threads touch consecutive columns, so both Y and the bias are accessed contiguously (the 12 KB bias stays in cache). The operation is exact (one float addition, then a max), so the host compares with `==`.
@*/
#include <algorithm>
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

__global__ void bias_relu_inplace(float* __restrict__ y, const float* __restrict__ bias, size_t n, int features)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fmaxf(y[i] + bias[i % features], 0.0f);
}

int main()
{
    const int tokens = 16384, features = 3072;
    const size_t n = (size_t)tokens * features;
    std::vector<float> y(n), bias(features), out(n);
    for (size_t i = 0; i < n; ++i) y[i] = (float)((int)(i % 2001) - 1000) / 500.0f;
    for (int j = 0; j < features; ++j) bias[j] = 0.25f * (float)(j % 9) - 1.0f;

    float *d_y, *d_b;
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_b, features * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, bias.data(), features * sizeof(float), cudaMemcpyHostToDevice));

    int dev, sms;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    bias_relu_inplace<<<sms * 16, 256>>>(d_y, d_b, n, features);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_y);
    cudaFree(d_b);

    long bad = 0;
    for (size_t i = 0; i < n; ++i) bad += out[i] != std::max(y[i] + bias[i % features], 0.0f);
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
