// Atomic_Scatter_Add_Weights: add each weight into the output slot its index names, with atomics
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
constexpr int SLOTS = 256;

__global__ void scatter_add(const float* weights, const int* index, float* sums, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&sums[index[i]], weights[i]);
}

int main() {
    std::vector<float> h_weights = load_array<float>("data/weights.bin", N);
    std::vector<int> h_index = load_array<int>("data/index.bin", N);
    float* d_weights = nullptr;
    CHECK_CUDA(cudaMalloc(&d_weights, h_weights.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_weights, h_weights.data(), h_weights.size() * sizeof(float), cudaMemcpyHostToDevice));
    int* d_index = nullptr;
    CHECK_CUDA(cudaMalloc(&d_index, h_index.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_index, h_index.data(), h_index.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_sums(SLOTS);
    float* d_sums = nullptr;
    CHECK_CUDA(cudaMalloc(&d_sums, h_sums.size() * sizeof(float)));

    CHECK_CUDA(cudaMemset(d_sums, 0, SLOTS * sizeof(float)));
    scatter_add<<<(N + 255) / 256, 256>>>(d_weights, d_index, d_sums, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_sums.data(), d_sums, h_sums.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/sums.bin", h_sums);
    CHECK_CUDA(cudaFree(d_weights));
    CHECK_CUDA(cudaFree(d_index));
    CHECK_CUDA(cudaFree(d_sums));
    return 0;
}
