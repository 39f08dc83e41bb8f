// Strided_Batch_Small_Gemm: eight independent 32 x 24 by 24 x 40 matrix products
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

constexpr int BATCH = 8;
constexpr int M = 32;
constexpr int K = 24;
constexpr int N = 40;

// blockIdx.z selects the matrix; each thread computes one element of it.
__global__ void batched_gemm(const float* A, const float* B, float* C, int m, int k, int n) {
    const int b = blockIdx.z;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m || col >= n) return;
    const float* a = A + (size_t)b * m * k;
    const float* bb = B + (size_t)b * k * n;
    float acc = 0.0f;
    for (int kk = 0; kk < k; ++kk) acc += a[row * k + kk] * bb[kk * n + col];
    C[(size_t)b * m * n + row * n + col] = acc;
}

int main() {
    std::vector<float> h_A = load_array<float>("data/A.bin", BATCH * M * K);
    std::vector<float> h_B = load_array<float>("data/B.bin", BATCH * K * N);
    float* d_A = nullptr;
    CHECK_CUDA(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_B = nullptr;
    CHECK_CUDA(cudaMalloc(&d_B, h_B.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_B, h_B.data(), h_B.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_C(BATCH * M * N);
    float* d_C = nullptr;
    CHECK_CUDA(cudaMalloc(&d_C, h_C.size() * sizeof(float)));

    dim3 block(8, 8);
    dim3 grid((N + 7) / 8, (M + 7) / 8, BATCH);
    batched_gemm<<<grid, block>>>(d_A, d_B, d_C, M, K, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_C.data(), d_C, h_C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/C.bin", h_C);
    CHECK_CUDA(cudaFree(d_A));
    CHECK_CUDA(cudaFree(d_B));
    CHECK_CUDA(cudaFree(d_C));
    return 0;
}
