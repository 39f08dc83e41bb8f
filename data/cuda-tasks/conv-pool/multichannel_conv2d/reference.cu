// Multi_Channel_Valid_Conv2d: valid 3 x 3 convolution from 4 input channels to 8 output channels
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

constexpr int CIN = 4;
constexpr int COUT = 8;
constexpr int H = 20;
constexpr int W = 20;
constexpr int OH = 18;
constexpr int OW = 18;

__global__ void conv2d_multi(const float* x, const float* w, const float* bias, float* y,
                             int cin, int h, int wd) {
    const int oh = h - 2, ow = wd - 2;
    const int ox = blockIdx.x * blockDim.x + threadIdx.x;
    const int oy = blockIdx.y * blockDim.y + threadIdx.y;
    const int o = blockIdx.z;
    if (ox >= ow || oy >= oh) return;
    float acc = bias[o];
    for (int i = 0; i < cin; ++i)
        for (int dy = 0; dy < 3; ++dy)
            for (int dx = 0; dx < 3; ++dx)
                acc += w[((o * cin + i) * 3 + dy) * 3 + dx] * x[((size_t)i * h + oy + dy) * wd + ox + dx];
    y[((size_t)o * oh + oy) * ow + ox] = acc;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", CIN * H * W);
    std::vector<float> h_w = load_array<float>("data/w.bin", COUT * CIN * 3 * 3);
    std::vector<float> h_bias = load_array<float>("data/bias.bin", COUT);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_w = nullptr;
    CHECK_CUDA(cudaMalloc(&d_w, h_w.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_w, h_w.data(), h_w.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_bias = nullptr;
    CHECK_CUDA(cudaMalloc(&d_bias, h_bias.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_bias, h_bias.data(), h_bias.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(COUT * OH * OW);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((OW + 15) / 16, (OH + 15) / 16, COUT);
    conv2d_multi<<<grid, block>>>(d_x, d_w, d_bias, d_y, CIN, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_w));
    CHECK_CUDA(cudaFree(d_bias));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
