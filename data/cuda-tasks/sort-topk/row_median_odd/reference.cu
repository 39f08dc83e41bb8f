// Median_Of_63_Per_Row: the median of each row of 63 values
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

constexpr int ROWS = 128;
constexpr int COLS = 63;

// One warp per row: each lane ranks its two values (lanes 0..30) or one (lane 31) against the row.
__global__ void row_median(const float* x, float* med, int rows, int cols) {
    __shared__ float s[4][64];
    const int w = threadIdx.x / 32, lane = threadIdx.x & 31;
    const int r = blockIdx.x * 4 + w;
    if (r >= rows) return;
    for (int j = lane; j < cols; j += 32) s[w][j] = x[r * cols + j];
    __syncwarp();
    for (int j = lane; j < cols; j += 32) {
        int smaller = 0;
        for (int k = 0; k < cols; ++k) smaller += s[w][k] < s[w][j];
        if (smaller == cols / 2) med[r] = s[w][j];
    }
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", ROWS * COLS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_med(ROWS);
    float* d_med = nullptr;
    CHECK_CUDA(cudaMalloc(&d_med, h_med.size() * sizeof(float)));

    row_median<<<(ROWS + 3) / 4, 128>>>(d_x, d_med, ROWS, COLS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_med.data(), d_med, h_med.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/med.bin", h_med);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_med));
    return 0;
}
