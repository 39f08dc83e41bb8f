// Five_Point_Laplacian_Grid: discrete 5-point Laplacian of a 2D grid, zero on the border
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

constexpr int H = 128;
constexpr int W = 128;

__global__ void laplacian5(const float* u, float* lap, int h, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        lap[y * w + x] = 0.0f;
        return;
    }
    const int i = y * w + x;
    lap[i] = u[i - w] + u[i + w] + u[i - 1] + u[i + 1] - 4.0f * u[i];
}

int main() {
    std::vector<float> h_u = load_array<float>("data/u.bin", H * W);
    float* d_u = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u, h_u.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_u, h_u.data(), h_u.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_lap(H * W);
    float* d_lap = nullptr;
    CHECK_CUDA(cudaMalloc(&d_lap, h_lap.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((W + 15) / 16, (H + 15) / 16);
    laplacian5<<<grid, block>>>(d_u, d_lap, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_lap.data(), d_lap, h_lap.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/lap.bin", h_lap);
    CHECK_CUDA(cudaFree(d_u));
    CHECK_CUDA(cudaFree(d_lap));
    return 0;
}
