// Column_Index_Select: select a list of columns of a matrix, in the order given
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
constexpr int COLS = 256;
constexpr int PICK = 64;

__global__ void index_select_cols(const float* x, const int* cols, float* y, int rows, int ncols, int pick) {
    __shared__ int sel[64];
    if (threadIdx.x < pick) sel[threadIdx.x] = cols[threadIdx.x];
    __syncthreads();
    const int r = blockIdx.x;
    for (int j = threadIdx.x; j < pick; j += blockDim.x) y[r * pick + j] = x[r * ncols + sel[j]];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", ROWS * COLS);
    std::vector<int> h_cols = load_array<int>("data/cols.bin", PICK);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    int* d_cols = nullptr;
    CHECK_CUDA(cudaMalloc(&d_cols, h_cols.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_cols, h_cols.data(), h_cols.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_y(ROWS * PICK);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    index_select_cols<<<ROWS, 64>>>(d_x, d_cols, d_y, ROWS, COLS, PICK);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_cols));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
