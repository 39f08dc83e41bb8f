// Fixed_Range_Float_Histogram: 64 equal-width bins over [-3, 3), values outside the range ignored
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

constexpr int N = 32768;
constexpr int BINS = 64;

__global__ void range_histogram(const float* values, int* counts, int n, float lo, float hi, int bins) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = values[i];
    if (!(v >= lo && v < hi)) return;
    int b = (int)((v - lo) * (bins / (hi - lo)));
    if (b >= bins) b = bins - 1;
    atomicAdd(&counts[b], 1);
}

int main() {
    std::vector<float> h_values = load_array<float>("data/values.bin", N);
    float* d_values = nullptr;
    CHECK_CUDA(cudaMalloc(&d_values, h_values.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_values, h_values.data(), h_values.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<int> h_counts(BINS);
    int* d_counts = nullptr;
    CHECK_CUDA(cudaMalloc(&d_counts, h_counts.size() * sizeof(int)));

    CHECK_CUDA(cudaMemset(d_counts, 0, BINS * sizeof(int)));
    range_histogram<<<(N + 255) / 256, 256>>>(d_values, d_counts, N, -3.0f, 3.0f, BINS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_counts.data(), d_counts, h_counts.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/counts.bin", h_counts);
    CHECK_CUDA(cudaFree(d_values));
    CHECK_CUDA(cudaFree(d_counts));
    return 0;
}
