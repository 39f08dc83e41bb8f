// Quarter_Turn_Clockwise: rotate a matrix by 90 degrees clockwise
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
constexpr int W = 96;

__global__ void rotate_cw(const float* img, float* rot, int h, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;  // output column, 0..h-1
    const int y = blockIdx.y * blockDim.y + threadIdx.y;  // output row, 0..w-1
    if (x >= h || y >= w) return;
    rot[y * h + x] = img[(h - 1 - x) * w + y];
}

int main() {
    std::vector<float> h_img = load_array<float>("data/img.bin", H * W);
    float* d_img = nullptr;
    CHECK_CUDA(cudaMalloc(&d_img, h_img.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_img, h_img.data(), h_img.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_rot(W * H);
    float* d_rot = nullptr;
    CHECK_CUDA(cudaMalloc(&d_rot, h_rot.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((H + 15) / 16, (W + 15) / 16);
    rotate_cw<<<grid, block>>>(d_img, d_rot, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_rot.data(), d_rot, h_rot.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/rot.bin", h_rot);
    CHECK_CUDA(cudaFree(d_img));
    CHECK_CUDA(cudaFree(d_rot));
    return 0;
}
