// Gemm_Bias_Relu_Epilogue: matrix product plus a per-column bias, followed by ReLU
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

constexpr int M = 96;
constexpr int K = 80;
constexpr int N = 48;

#define TILE 16
__global__ void gemm_bias_relu(const float* A, const float* W, const float* bias, float* Y, int m, int n, int k) {
    __shared__ float As[TILE][TILE];
    __shared__ float Ws[TILE][TILE + 1];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < m && k0 + threadIdx.x < k) ? A[row * k + k0 + threadIdx.x] : 0.0f;
        Ws[threadIdx.y][threadIdx.x] = (col < n && k0 + threadIdx.y < k) ? W[(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; ++kk) acc += As[threadIdx.y][kk] * Ws[kk][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) Y[row * n + col] = fmaxf(acc + bias[col], 0.0f);
}

int main() {
    std::vector<float> h_A = load_array<float>("data/A.bin", M * K);
    std::vector<float> h_W = load_array<float>("data/W.bin", K * N);
    std::vector<float> h_bias = load_array<float>("data/bias.bin", N);
    float* d_A = nullptr;
    CHECK_CUDA(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_W = nullptr;
    CHECK_CUDA(cudaMalloc(&d_W, h_W.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_W, h_W.data(), h_W.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_bias = nullptr;
    CHECK_CUDA(cudaMalloc(&d_bias, h_bias.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_bias, h_bias.data(), h_bias.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_Y(M * N);
    float* d_Y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_Y, h_Y.size() * sizeof(float)));

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    gemm_bias_relu<<<grid, block>>>(d_A, d_W, d_bias, d_Y, M, N, K);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_Y.data(), d_Y, h_Y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/Y.bin", h_Y);
    CHECK_CUDA(cudaFree(d_A));
    CHECK_CUDA(cudaFree(d_W));
    CHECK_CUDA(cudaFree(d_bias));
    CHECK_CUDA(cudaFree(d_Y));
    return 0;
}
