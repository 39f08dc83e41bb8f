// Rank_One_Outer_Update: add the outer product of two vectors to a matrix
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

constexpr int M = 128;
constexpr int N = 96;

__global__ void rank1_update(const float* A, const float* u, const float* v, float* out, int m, int n) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < m && col < n) out[row * n + col] = A[row * n + col] + u[row] * v[col];
}

int main() {
    std::vector<float> h_A = load_array<float>("data/A.bin", M * N);
    std::vector<float> h_u = load_array<float>("data/u.bin", M);
    std::vector<float> h_v = load_array<float>("data/v.bin", N);
    float* d_A = nullptr;
    CHECK_CUDA(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_u = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u, h_u.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_u, h_u.data(), h_u.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_v = nullptr;
    CHECK_CUDA(cudaMalloc(&d_v, h_v.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_v, h_v.data(), h_v.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_out(M * N);
    float* d_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_out, h_out.size() * sizeof(float)));

    dim3 block(32, 8);
    dim3 grid((N + 31) / 32, (M + 7) / 8);
    rank1_update<<<grid, block>>>(d_A, d_u, d_v, d_out, M, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/out.bin", h_out);
    CHECK_CUDA(cudaFree(d_A));
    CHECK_CUDA(cudaFree(d_u));
    CHECK_CUDA(cudaFree(d_v));
    CHECK_CUDA(cudaFree(d_out));
    return 0;
}
