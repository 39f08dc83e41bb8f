// Dilated_Valid_Conv1d: valid 1D correlation with a 5-tap filter and dilation 3
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

constexpr int LEN = 4096;
constexpr int TAPS = 5;
constexpr int DIL = 3;
constexpr int OUT_LEN = 4084;

__global__ void dilated_conv1d(const float* x, const float* w, float* y, int out_len, int taps, int dil) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= out_len) return;
    float acc = 0.0f;
    for (int j = 0; j < taps; ++j) acc += w[j] * x[i + j * dil];
    y[i] = acc;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", LEN);
    std::vector<float> h_w = load_array<float>("data/w.bin", TAPS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_w = nullptr;
    CHECK_CUDA(cudaMalloc(&d_w, h_w.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_w, h_w.data(), h_w.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(OUT_LEN);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    dilated_conv1d<<<(OUT_LEN + 255) / 256, 256>>>(d_x, d_w, d_y, OUT_LEN, TAPS, DIL);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_w));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
