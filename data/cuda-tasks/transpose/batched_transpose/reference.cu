// Batched_Tile_Transpose: transpose each matrix of a batch of 8 rectangular matrices
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

constexpr int BATCH = 8;
constexpr int ROWS = 48;
constexpr int COLS = 40;

#define TILE 16
__global__ void batched_transpose(const float* x, float* xt, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    const size_t off = (size_t)blockIdx.z * rows * cols;
    int c = blockIdx.x * TILE + threadIdx.x, r = blockIdx.y * TILE + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = x[off + r * cols + c];
    __syncthreads();
    c = blockIdx.y * TILE + threadIdx.x;  // column of the output = row of the input
    r = blockIdx.x * TILE + threadIdx.y;
    if (r < cols && c < rows) xt[off + r * rows + c] = tile[threadIdx.x][threadIdx.y];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", BATCH * ROWS * COLS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_xt(BATCH * COLS * ROWS);
    float* d_xt = nullptr;
    CHECK_CUDA(cudaMalloc(&d_xt, h_xt.size() * sizeof(float)));

    dim3 block(TILE, TILE);
    dim3 grid((COLS + TILE - 1) / TILE, (ROWS + TILE - 1) / TILE, BATCH);
    batched_transpose<<<grid, block>>>(d_x, d_xt, ROWS, COLS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_xt.data(), d_xt, h_xt.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/xt.bin", h_xt);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_xt));
    return 0;
}
