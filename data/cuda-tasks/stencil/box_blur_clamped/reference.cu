// Clamped_Edge_Box_Blur_3x3: 3 x 3 mean filter with edge pixels repeated outside the image
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

constexpr int H = 96;
constexpr int W = 128;

// 16 x 16 blocks stage an 18 x 18 patch (with clamped coordinates) in shared memory.
__global__ void box_blur3(const float* img, float* blur, int h, int w) {
    __shared__ float s[18][18];
    const int bx = blockIdx.x * 16 - 1, by = blockIdx.y * 16 - 1;
    for (int e = threadIdx.y * 16 + threadIdx.x; e < 18 * 18; e += 256) {
        const int yy = min(max(by + e / 18, 0), h - 1), xx = min(max(bx + e % 18, 0), w - 1);
        s[e / 18][e % 18] = img[yy * w + xx];
    }
    __syncthreads();
    const int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx) acc += s[threadIdx.y + dy][threadIdx.x + dx];
    blur[y * w + x] = acc / 9.0f;
}

int main() {
    std::vector<float> h_img = load_array<float>("data/img.bin", H * W);
    float* d_img = nullptr;
    CHECK_CUDA(cudaMalloc(&d_img, h_img.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_img, h_img.data(), h_img.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_blur(H * W);
    float* d_blur = nullptr;
    CHECK_CUDA(cudaMalloc(&d_blur, h_blur.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((W + 15) / 16, (H + 15) / 16);
    box_blur3<<<grid, block>>>(d_img, d_blur, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_blur.data(), d_blur, h_blur.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/blur.bin", h_blur);
    CHECK_CUDA(cudaFree(d_img));
    CHECK_CUDA(cudaFree(d_blur));
    return 0;
}
