// Magnitude_Weighted_Orientation_Bins: 8 orientation bins of 2D gradient vectors, each weighted by the vector's length
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

constexpr int N = 4096;
constexpr int BINS = 8;

__global__ void orientation_hist(const float* gx, const float* gy, float* hist, int n, int bins) {
    __shared__ float local[8];
    if (threadIdx.x < bins) local[threadIdx.x] = 0.0f;
    __syncthreads();
    const float scale = bins / (2.0f * 3.14159265358979f);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float a = atan2f(gy[i], gx[i]);  // (-pi, pi]
        int b = (int)((a + 3.14159265358979f) * scale);
        b = b < 0 ? 0 : (b >= bins ? bins - 1 : b);
        atomicAdd(&local[b], sqrtf(gx[i] * gx[i] + gy[i] * gy[i]));
    }
    __syncthreads();
    if (threadIdx.x < bins) atomicAdd(&hist[threadIdx.x], local[threadIdx.x]);
}

int main() {
    std::vector<float> h_gx = load_array<float>("data/gx.bin", N);
    std::vector<float> h_gy = load_array<float>("data/gy.bin", N);
    float* d_gx = nullptr;
    CHECK_CUDA(cudaMalloc(&d_gx, h_gx.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_gx, h_gx.data(), h_gx.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_gy = nullptr;
    CHECK_CUDA(cudaMalloc(&d_gy, h_gy.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_gy, h_gy.data(), h_gy.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_hist(BINS);
    float* d_hist = nullptr;
    CHECK_CUDA(cudaMalloc(&d_hist, h_hist.size() * sizeof(float)));

    CHECK_CUDA(cudaMemset(d_hist, 0, BINS * sizeof(float)));
    orientation_hist<<<8, 256>>>(d_gx, d_gy, d_hist, N, BINS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_hist.data(), d_hist, h_hist.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/hist.bin", h_hist);
    CHECK_CUDA(cudaFree(d_gx));
    CHECK_CUDA(cudaFree(d_gy));
    CHECK_CUDA(cudaFree(d_hist));
    return 0;
}
