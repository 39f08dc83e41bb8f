// Life_Automaton_Step_On_Torus: one generation of Conway's Game of Life on a wrap-around grid
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

constexpr int H = 128;
constexpr int W = 128;

__global__ void life_step(const int* cells, int* next_cells, int h, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int n = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            if (dy || dx) n += cells[((y + dy + h) % h) * w + (x + dx + w) % w];
    const int alive = cells[y * w + x];
    next_cells[y * w + x] = (n == 3 || (alive && n == 2)) ? 1 : 0;
}

int main() {
    std::vector<int> h_cells = load_array<int>("data/cells.bin", H * W);
    int* d_cells = nullptr;
    CHECK_CUDA(cudaMalloc(&d_cells, h_cells.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_cells, h_cells.data(), h_cells.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> h_next_cells(H * W);
    int* d_next_cells = nullptr;
    CHECK_CUDA(cudaMalloc(&d_next_cells, h_next_cells.size() * sizeof(int)));

    dim3 block(16, 16);
    dim3 grid((W + 15) / 16, (H + 15) / 16);
    life_step<<<grid, block>>>(d_cells, d_next_cells, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_next_cells.data(), d_next_cells, h_next_cells.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/next_cells.bin", h_next_cells);
    CHECK_CUDA(cudaFree(d_cells));
    CHECK_CUDA(cudaFree(d_next_cells));
    return 0;
}
