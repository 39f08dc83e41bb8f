// Scatter_By_Permutation: write each element to the position a permutation gives: y[perm[i]] = x[i]
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

constexpr int N = 8192;

__global__ void scatter_perm(const float* x, const int* perm, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[perm[i]] = x[i];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", N);
    std::vector<int> h_perm = load_array<int>("data/perm.bin", N);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    int* d_perm = nullptr;
    CHECK_CUDA(cudaMalloc(&d_perm, h_perm.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_perm, h_perm.data(), h_perm.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_y(N);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    scatter_perm<<<(N + 255) / 256, 256>>>(d_x, d_perm, d_y, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_perm));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
