/*@prompt
Write a CUDA program that adds two float vectors of length 1,000,000 element by element (c[i] = a[i] + b[i]). Check the result on the CPU.
@explanation
This is the canonical one-thread-per-element map. Each thread computes its global index from `blockIdx.x * blockDim.x + threadIdx.x`, and the bounds check `i < n` guards the last, partially filled block because n is not a multiple of the block size. The grid size is the ceiling of n / 256, so every element gets exactly one thread. The host fills the inputs deterministically, copies them over, launches, copies the result back and compares it against a plain CPU loop; the comparison is exact because both sides perform the same single float addition.
@after
Build it with `nvcc -O2 -arch=sm_80 vector_add.cu -o vector_add`; the program prints PASS and exits with status 0 when every element matches.
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

__global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

int main()
{
    const int n = 1000000;
    const size_t bytes = n * sizeof(float);

    std::vector<float> h_a(n), h_b(n), h_c(n);
    for (int i = 0; i < n; ++i) {
        h_a[i] = 0.5f * (i % 1000);
        h_b[i] = 1.0f - 0.25f * (i % 37);
    }

    float *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, bytes));
    CUDA_CHECK(cudaMalloc(&d_b, bytes));
    CUDA_CHECK(cudaMalloc(&d_c, bytes));
    CUDA_CHECK(cudaMemcpy(d_a, h_a.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), bytes, cudaMemcpyHostToDevice));

    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    vector_add<<<blocks, threads>>>(d_a, d_b, d_c, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(h_c.data(), d_c, bytes, cudaMemcpyDeviceToHost));

    int mismatches = 0;
    for (int i = 0; i < n; ++i) {
        float expected = h_a[i] + h_b[i];
        if (h_c[i] != expected) {
            if (mismatches < 5) {
                fprintf(stderr, "mismatch at %d: got %f, expected %f\n", i, h_c[i], expected);
            }
            ++mismatches;
        }
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));

    if (mismatches != 0) {
        printf("FAIL: %d mismatches\n", mismatches);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
