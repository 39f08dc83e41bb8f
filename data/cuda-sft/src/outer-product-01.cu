/*@prompt
Outer product of two float vectors: C[i][j] = x[i] * y[j], x has 3000 entries and y has 5000. Use a 2D grid.
@explanation
Every output element is independent, so a 2D grid of 32x8 blocks assigns one thread per (i, j), with j on the x dimension so each warp writes 32 consecutive elements of a row of C. The kernel is write-bound: it stores 15 million floats but reads only 8000 distinct inputs, which stay in cache. Each thread performs a single float multiplication, exactly as the CPU does, so the comparison is bit-exact.
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

__global__ void outer(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ C,
                      int m, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < m && j < n) C[(size_t)i * n + j] = x[i] * y[j];
}

int main()
{
    const int m = 3000, n = 5000;
    std::vector<float> x(m), y(n), C((size_t)m * n);
    for (int i = 0; i < m; ++i) x[i] = 0.001f * (float)i - 1.3f;
    for (int j = 0; j < n; ++j) y[j] = 1.0f / (float)(j + 1);

    float *dx, *dy, *dC;
    CUDA_CHECK(cudaMalloc(&dx, m * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), m * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((n + block.x - 1) / block.x, (m + block.y - 1) / block.y);
    outer<<<grid, block>>>(dx, dy, dC, m, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dy); cudaFree(dC);

    long bad = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) bad += C[(size_t)i * n + j] != x[i] * y[j];
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
