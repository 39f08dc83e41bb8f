// Scaled_Gemm_Plus_Scaled_C: C_out = 1.5 A B - 0.5 C_in
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

constexpr int M = 48;
constexpr int K = 64;
constexpr int N = 56;

#define TILE 16
__global__ void gemm_alpha_beta(const float* A, const float* B, const float* C_in, float* C_out,
                                int m, int n, int k, float alpha, float beta) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < m) ? A[row * k + k0 + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (col < n) ? B[(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; ++kk) acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) C_out[row * n + col] = alpha * acc + beta * C_in[row * n + col];
}

int main() {
    std::vector<float> h_A = load_array<float>("data/A.bin", M * K);
    std::vector<float> h_B = load_array<float>("data/B.bin", K * N);
    std::vector<float> h_C_in = load_array<float>("data/C_in.bin", M * N);
    float* d_A = nullptr;
    CHECK_CUDA(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_B = nullptr;
    CHECK_CUDA(cudaMalloc(&d_B, h_B.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_B, h_B.data(), h_B.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_C_in = nullptr;
    CHECK_CUDA(cudaMalloc(&d_C_in, h_C_in.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_C_in, h_C_in.data(), h_C_in.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_C_out(M * N);
    float* d_C_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_C_out, h_C_out.size() * sizeof(float)));

    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    gemm_alpha_beta<<<grid, block>>>(d_A, d_B, d_C_in, d_C_out, M, N, K, 1.5f, -0.5f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_C_out.data(), d_C_out, h_C_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/C_out.bin", h_C_out);
    CHECK_CUDA(cudaFree(d_A));
    CHECK_CUDA(cudaFree(d_B));
    CHECK_CUDA(cudaFree(d_C_in));
    CHECK_CUDA(cudaFree(d_C_out));
    return 0;
}
