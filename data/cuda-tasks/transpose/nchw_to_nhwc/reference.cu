// Nchw_To_Nhwc_Layout: convert a float32 tensor from NCHW to NHWC layout
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

constexpr int NB = 2;
constexpr int C = 16;
constexpr int H = 24;
constexpr int W = 24;

__global__ void nchw_to_nhwc(const float* src, float* dst, int nb, int c, int h, int w) {
    const int total = nb * c * h * w;
    for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += gridDim.x * blockDim.x) {
        const int ch = o % c;           // output index order: n, y, x, ch
        const int x = (o / c) % w;
        const int y = (o / (c * w)) % h;
        const int n = o / (c * w * h);
        dst[o] = src[((n * c + ch) * h + y) * w + x];
    }
}

int main() {
    std::vector<float> h_src = load_array<float>("data/src.bin", NB * C * H * W);
    float* d_src = nullptr;
    CHECK_CUDA(cudaMalloc(&d_src, h_src.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_src, h_src.data(), h_src.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_dst(NB * H * W * C);
    float* d_dst = nullptr;
    CHECK_CUDA(cudaMalloc(&d_dst, h_dst.size() * sizeof(float)));

    nchw_to_nhwc<<<64, 256>>>(d_src, d_dst, NB, C, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_dst.data(), d_dst, h_dst.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/dst.bin", h_dst);
    CHECK_CUDA(cudaFree(d_src));
    CHECK_CUDA(cudaFree(d_dst));
    return 0;
}
