/*@prompt
Write the simplest correct CUDA matrix multiplication C = A * B (row-major, A is M x K, B is K x N) with one thread per output element and a 2D grid. M = 384, N = 640, K = 512.
@explanation
Thread (x, y) of the 2D grid computes `C[row][col]` with `row` from the y dimension and `col` from the x dimension, as a dot product of row `row` of A with column `col` of B. Mapping `col` to `threadIdx.x` matters: neighbouring threads of a warp then read neighbouring elements of B's row and write neighbouring elements of C, so those accesses coalesce, while all threads of the warp read the same A element (a broadcast). Every operand is fetched from global memory K times, which is why the tiled shared-memory version is faster, but this kernel is the reference to get right first. The inputs are small integers, so every product and partial sum is exactly representable in float and the check can demand exact equality.
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

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}

int main()
{
    const int M = 384, N = 640, K = 512;
    std::vector<float> A(M * K), B(K * N), C(M * N);
    for (int i = 0; i < M * K; ++i) A[i] = (float)(i % 9 - 4);        // -4..4
    for (int i = 0; i < K * N; ++i) B[i] = (float)((i * 7) % 5 - 2);  // -2..2

    float *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dC, C.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    matmul_naive<<<grid, block>>>(dA, dB, dC, M, N, K);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dA); cudaFree(dB); cudaFree(dC);

    int bad = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float ref = 0.0f;
            for (int k = 0; k < K; ++k) ref += A[i * K + k] * B[k * N + j];
            if (C[i * N + j] != ref) ++bad;
        }
    if (bad) {
        printf("FAIL: %d entries differ\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
