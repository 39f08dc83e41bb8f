/*@prompt
Apply ReLU in place to a float array on the GPU.
@explanation
ReLU is `max(x, 0)`, applied independently to each element, so one thread per element with a bounds check is all it needs. Working in place saves a second buffer: each thread reads and writes only its own element, so there are no races. `fmaxf` maps to a single instruction. The test data contains negatives, zeros and positives, and the result is exact, so the host compares it with `==` against `std::max`.
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

__global__ void relu_inplace(float* data, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        data[idx] = fmaxf(data[idx], 0.0f);
    }
}

int main()
{
    const int n = 123457;
    std::vector<float> host(n), out(n);
    for (int i = 0; i < n; ++i) {
        host[i] = (float)((i * 37) % 199 - 99) / 8.0f;  // -12.375 .. 12.5, includes 0
    }

    float* d_data;
    CUDA_CHECK(cudaMalloc(&d_data, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_data, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int block_size = 256;
    const int num_blocks = (n + block_size - 1) / block_size;
    relu_inplace<<<num_blocks, block_size>>>(d_data, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_data, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_data));

    int mismatches = 0;
    for (int i = 0; i < n; ++i) {
        float expected = std::max(host[i], 0.0f);
        if (out[i] != expected) {
            if (mismatches < 3) fprintf(stderr, "out[%d]=%g expected %g\n", i, out[i], expected);
            ++mismatches;
        }
    }
    if (mismatches > 0) {
        printf("FAIL: %d mismatches\n", mismatches);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
