// Depthwise_Valid_Conv2d: depthwise 3 x 3 valid convolution: each channel has its own filter
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

constexpr int C = 8;
constexpr int H = 32;
constexpr int W = 32;
constexpr int OH = 30;
constexpr int OW = 30;

// One block per (channel, 16 x 16 output tile); the 18 x 18 input patch is staged in shared memory.
__global__ void depthwise3x3(const float* x, const float* w, float* y, int h, int wd) {
    __shared__ float patch[18][18];
    __shared__ float k[9];
    const int c = blockIdx.z;
    const int oh = h - 2, ow = wd - 2;
    const int bx = blockIdx.x * 16, by = blockIdx.y * 16;
    const int tid = threadIdx.y * 16 + threadIdx.x;
    if (tid < 9) k[tid] = w[c * 9 + tid];
    for (int e = tid; e < 18 * 18; e += 256) {
        const int py = by + e / 18, px = bx + e % 18;
        patch[e / 18][e % 18] = (py < h && px < wd) ? x[((size_t)c * h + py) * wd + px] : 0.0f;
    }
    __syncthreads();
    const int ox = bx + threadIdx.x, oy = by + threadIdx.y;
    if (ox >= ow || oy >= oh) return;
    float acc = 0.0f;
    for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx) acc += k[dy * 3 + dx] * patch[threadIdx.y + dy][threadIdx.x + dx];
    y[((size_t)c * oh + oy) * ow + ox] = acc;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", C * H * W);
    std::vector<float> h_w = load_array<float>("data/w.bin", C * 3 * 3);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_w = nullptr;
    CHECK_CUDA(cudaMalloc(&d_w, h_w.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_w, h_w.data(), h_w.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(C * OH * OW);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((OW + 15) / 16, (OH + 15) / 16, C);
    depthwise3x3<<<grid, block>>>(d_x, d_w, d_y, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_w));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
