// Sliding_Window_Mean_Width_8: mean of every window of 8 consecutive samples (stride 1), with a shared-memory halo
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

constexpr int LEN = 8192;
constexpr int WIN = 8;
constexpr int OUT_LEN = 8185;

// Each block loads its 256 samples plus the 7 that follow (the halo) into shared memory.
__global__ void window_mean(const float* x, float* y, int len, int out_len) {
    __shared__ float s[256 + 7];
    const int base = blockIdx.x * blockDim.x;
    for (int e = threadIdx.x; e < 256 + 7; e += blockDim.x) s[e] = base + e < len ? x[base + e] : 0.0f;
    __syncthreads();
    const int i = base + threadIdx.x;
    if (i >= out_len) return;
    float acc = 0.0f;
    for (int k = 0; k < 8; ++k) acc += s[threadIdx.x + k];
    y[i] = acc * 0.125f;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", LEN);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(OUT_LEN);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    window_mean<<<(OUT_LEN + 255) / 256, 256>>>(d_x, d_y, LEN, OUT_LEN);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
