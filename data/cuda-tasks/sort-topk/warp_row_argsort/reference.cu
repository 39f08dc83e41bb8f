// Warp_Row_Argsort_32: the ascending order (argsort) of each row of 32 distinct values, one warp per row
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
constexpr int COLS = 32;

// Lane j holds x[r, j]; its rank is the number of lanes with a smaller value (32 shuffles);
// lane j then writes its own index j at position rank.
__global__ void row_argsort32(const float* x, int* order, int rows) {
    const int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (r >= rows) return;
    const float v = x[r * 32 + lane];
    int rank = 0;
    for (int k = 0; k < 32; ++k) rank += __shfl_sync(0xffffffffu, v, k) < v;
    order[r * 32 + rank] = lane;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", ROWS * COLS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<int> h_order(ROWS * COLS);
    int* d_order = nullptr;
    CHECK_CUDA(cudaMalloc(&d_order, h_order.size() * sizeof(int)));

    row_argsort32<<<ROWS * 32 / 128, 128>>>(d_x, d_order, ROWS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_order.data(), d_order, h_order.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/order.bin", h_order);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_order));
    return 0;
}
