// Sobel_Edge_Strength: the Sobel gradient magnitude of an image, zero on the border
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

constexpr int H = 64;
constexpr int W = 64;

__global__ void sobel(const float* img, float* mag, int h, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        mag[y * w + x] = 0.0f;
        return;
    }
    const float* p = img + y * w + x;
    const float gx = (p[-w + 1] + 2.0f * p[1] + p[w + 1]) - (p[-w - 1] + 2.0f * p[-1] + p[w - 1]);
    const float gy = (p[w - 1] + 2.0f * p[w] + p[w + 1]) - (p[-w - 1] + 2.0f * p[-w] + p[-w + 1]);
    mag[y * w + x] = sqrtf(gx * gx + gy * gy);
}

int main() {
    std::vector<float> h_img = load_array<float>("data/img.bin", H * W);
    float* d_img = nullptr;
    CHECK_CUDA(cudaMalloc(&d_img, h_img.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_img, h_img.data(), h_img.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_mag(H * W);
    float* d_mag = nullptr;
    CHECK_CUDA(cudaMalloc(&d_mag, h_mag.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((W + 15) / 16, (H + 15) / 16);
    sobel<<<grid, block>>>(d_img, d_mag, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_mag.data(), d_mag, h_mag.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/mag.bin", h_mag);
    CHECK_CUDA(cudaFree(d_img));
    CHECK_CUDA(cudaFree(d_mag));
    return 0;
}
