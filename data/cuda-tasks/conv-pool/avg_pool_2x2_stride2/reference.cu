// Channel_Avg_Pool_2x2_Stride_2: 2 x 2 average pooling with stride 2 over a stack of channels
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

constexpr int C = 4;
constexpr int H = 64;
constexpr int W = 64;
constexpr int OH = 32;
constexpr int OW = 32;

__global__ void avg_pool2(const float* image, float* pooled, int h, int w) {
    const int oh = h / 2, ow = w / 2;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int c = blockIdx.z;
    if (x >= ow || y >= oh) return;
    const float* p = image + ((size_t)c * h + 2 * y) * w + 2 * x;
    pooled[((size_t)c * oh + y) * ow + x] = 0.25f * (p[0] + p[1] + p[w] + p[w + 1]);
}

int main() {
    std::vector<float> h_image = load_array<float>("data/image.bin", C * H * W);
    float* d_image = nullptr;
    CHECK_CUDA(cudaMalloc(&d_image, h_image.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_image, h_image.data(), h_image.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_pooled(C * OH * OW);
    float* d_pooled = nullptr;
    CHECK_CUDA(cudaMalloc(&d_pooled, h_pooled.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((OW + 15) / 16, (OH + 15) / 16, C);
    avg_pool2<<<grid, block>>>(d_image, d_pooled, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_pooled.data(), d_pooled, h_pooled.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/pooled.bin", h_pooled);
    CHECK_CUDA(cudaFree(d_image));
    CHECK_CUDA(cudaFree(d_pooled));
    return 0;
}
