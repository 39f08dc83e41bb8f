// Padded_Tile_Rect_Transpose: transpose a rectangular float32 matrix through padded shared-memory tiles
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

constexpr int ROWS = 96;
constexpr int COLS = 160;

#define TILE 32
__global__ void transpose_tiled(const float* a, float* at, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];  // +1 column: no bank conflicts on the transposed read
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = a[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)
        if (x < rows && y + j < cols) at[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
    std::vector<float> h_a = load_array<float>("data/a.bin", ROWS * COLS);
    float* d_a = nullptr;
    CHECK_CUDA(cudaMalloc(&d_a, h_a.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_a, h_a.data(), h_a.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_at(COLS * ROWS);
    float* d_at = nullptr;
    CHECK_CUDA(cudaMalloc(&d_at, h_at.size() * sizeof(float)));

    dim3 block(TILE, 8);
    dim3 grid((COLS + TILE - 1) / TILE, (ROWS + TILE - 1) / TILE);
    transpose_tiled<<<grid, block>>>(d_a, d_at, ROWS, COLS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_at.data(), d_at, h_at.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/at.bin", h_at);
    CHECK_CUDA(cudaFree(d_a));
    CHECK_CUDA(cudaFree(d_at));
    return 0;
}
