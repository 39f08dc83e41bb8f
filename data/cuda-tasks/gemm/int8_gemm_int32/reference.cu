// Int8_Gemm_Int32_Accumulate: product of two int8 matrices accumulated in int32
// Reference solution: reads its inputs from data/, writes its outputs to data/.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(expr)                                                                     \
    do {                                                                                     \
        cudaError_t status_ = (expr);                                                        \
        if (status_ != cudaSuccess) {                                                        \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

template <class T>
static std::vector<T> load_array(const char* path, size_t count) {
    std::vector<T> values(count);
    FILE* f = std::fopen(path, "rb");
    size_t got = f ? std::fread(values.data(), sizeof(T), count, f) : 0;
    if (f) std::fclose(f);
    if (got != count) {
        std::fprintf(stderr, "%s: expected %zu values, read %zu\n", path, count, got);
        std::exit(1);
    }
    return values;
}

template <class T>
static void store_array(const char* path, const std::vector<T>& values) {
    FILE* f = std::fopen(path, "wb");
    if (!f || std::fwrite(values.data(), sizeof(T), values.size(), f) != values.size()) {
        std::fprintf(stderr, "%s: cannot write\n", path);
        std::exit(1);
    }
    std::fclose(f);
}

constexpr int M = 64;
constexpr int K = 128;
constexpr int N = 64;

#define TILE 16
__global__ void gemm_int8(const signed char* A, const signed char* B, int* C, int m, int n, int k) {
    __shared__ int As[TILE][TILE];
    __shared__ int Bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    int acc = 0;
    for (int k0 = 0; k0 < k; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = A[row * k + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + col];
        __syncthreads();
        for (int kk = 0; kk < TILE; ++kk) acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

int main() {
    std::vector<signed char> h_A = load_array<signed char>("data/A.bin", M * K);
    std::vector<signed char> h_B = load_array<signed char>("data/B.bin", K * N);
    signed char* d_A = nullptr;
    CHECK_CUDA(cudaMalloc(&d_A, h_A.size() * sizeof(signed char)));
    CHECK_CUDA(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(signed char), cudaMemcpyHostToDevice));
    signed char* d_B = nullptr;
    CHECK_CUDA(cudaMalloc(&d_B, h_B.size() * sizeof(signed char)));
    CHECK_CUDA(cudaMemcpy(d_B, h_B.data(), h_B.size() * sizeof(signed char), cudaMemcpyHostToDevice));
    std::vector<int> h_C(M * N);
    int* d_C = nullptr;
    CHECK_CUDA(cudaMalloc(&d_C, h_C.size() * sizeof(int)));

    dim3 block(TILE, TILE);
    dim3 grid(N / TILE, M / TILE);
    gemm_int8<<<grid, block>>>(d_A, d_B, d_C, M, N, K);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_C.data(), d_C, h_C.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/C.bin", h_C);
    CHECK_CUDA(cudaFree(d_A));
    CHECK_CUDA(cudaFree(d_B));
    CHECK_CUDA(cudaFree(d_C));
    return 0;
}
