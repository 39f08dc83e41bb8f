// Column_Mean_Tall_Matrix: the mean of each column of a tall float32 matrix
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

constexpr int ROWS = 512;
constexpr int COLS = 96;

// One thread per column: neighbouring threads read neighbouring addresses (coalesced).
__global__ void column_mean(const float* x, float* mean, int rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.0f;
    for (int r = 0; r < rows; ++r) s += x[r * cols + c];
    mean[c] = s / rows;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", ROWS * COLS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_mean(COLS);
    float* d_mean = nullptr;
    CHECK_CUDA(cudaMalloc(&d_mean, h_mean.size() * sizeof(float)));

    column_mean<<<(COLS + 31) / 32, 32>>>(d_x, d_mean, ROWS, COLS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_mean.data(), d_mean, h_mean.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/mean.bin", h_mean);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_mean));
    return 0;
}
