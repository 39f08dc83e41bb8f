// Binomial_Five_Tap_Smoothing: 1D smoothing with the binomial weights (1, 4, 6, 4, 1) / 16 and zero padding, via a shared-memory halo
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

constexpr int N = 16384;

// Blocks of 256 threads load their 256 samples plus 2 on each side (zero outside the signal).
__global__ void binomial5(const float* x, float* y, int n) {
    __shared__ float s[256 + 4];
    const int base = blockIdx.x * blockDim.x;
    for (int e = threadIdx.x; e < 256 + 4; e += blockDim.x) {
        const int g = base + e - 2;
        s[e] = (g >= 0 && g < n) ? x[g] : 0.0f;
    }
    __syncthreads();
    const int i = base + threadIdx.x;
    if (i >= n) return;
    const float* c = s + threadIdx.x + 2;
    y[i] = (c[-2] + 4.0f * c[-1] + 6.0f * c[0] + 4.0f * c[1] + c[2]) * 0.0625f;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", N);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(N);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    binomial5<<<(N + 255) / 256, 256>>>(d_x, d_y, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
