// Same_Padded_Conv2d_3x3: 3 x 3 correlation of a single-channel image with zero padding, output the size of the input
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
constexpr int W = 96;

__constant__ float c_kernel[9];

__global__ void conv3x3_same(const float* image, float* out, int h, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            const int yy = y + dy, xx = x + dx;
            if (yy >= 0 && yy < h && xx >= 0 && xx < w) acc += c_kernel[(dy + 1) * 3 + dx + 1] * image[yy * w + xx];
        }
    out[y * w + x] = acc;
}

int main() {
    std::vector<float> h_image = load_array<float>("data/image.bin", H * W);
    std::vector<float> h_kernel = load_array<float>("data/kernel.bin", 3 * 3);
    float* d_image = nullptr;
    CHECK_CUDA(cudaMalloc(&d_image, h_image.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_image, h_image.data(), h_image.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_kernel = nullptr;
    CHECK_CUDA(cudaMalloc(&d_kernel, h_kernel.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_kernel, h_kernel.data(), h_kernel.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_out(H * W);
    float* d_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_out, h_out.size() * sizeof(float)));

    CHECK_CUDA(cudaMemcpyToSymbol(c_kernel, h_kernel.data(), 9 * sizeof(float)));
    dim3 block(16, 16);
    dim3 grid((W + 15) / 16, (H + 15) / 16);
    conv3x3_same<<<grid, block>>>(d_image, d_out, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/out.bin", h_out);
    CHECK_CUDA(cudaFree(d_image));
    CHECK_CUDA(cudaFree(d_kernel));
    CHECK_CUDA(cudaFree(d_out));
    return 0;
}
