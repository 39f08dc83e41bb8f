// Key_Masked_Row_Softmax: row softmax over the positions a mask keeps; masked positions get probability 0
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

constexpr int ROWS = 64;
constexpr int COLS = 128;

__global__ void masked_softmax(const float* x, const int* keep, float* y, int cols) {
    __shared__ float red[128];
    const int t = threadIdx.x;
    const size_t i = (size_t)blockIdx.x * cols + t;
    const bool on = keep[i] != 0;
    const float v = on ? x[i] : -INFINITY;
    red[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    const float m = red[0];
    __syncthreads();
    const float e = on ? expf(v - m) : 0.0f;
    red[t] = e;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    y[i] = e / red[0];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", ROWS * COLS);
    std::vector<int> h_keep = load_array<int>("data/keep.bin", ROWS * COLS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    int* d_keep = nullptr;
    CHECK_CUDA(cudaMalloc(&d_keep, h_keep.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_keep, h_keep.data(), h_keep.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_y(ROWS * COLS);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    masked_softmax<<<ROWS, COLS>>>(d_x, d_keep, d_y, COLS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_keep));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
