// Per_Row_Level_Counts: a separate 16-bin histogram for every row of an integer matrix
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
constexpr int COLS = 512;
constexpr int LEVELS = 16;

__global__ void row_hist(const int* x, int* counts, int cols, int levels) {
    __shared__ int local[16];
    if (threadIdx.x < levels) local[threadIdx.x] = 0;
    __syncthreads();
    const int* row = x + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) atomicAdd(&local[row[c]], 1);
    __syncthreads();
    if (threadIdx.x < levels) counts[blockIdx.x * levels + threadIdx.x] = local[threadIdx.x];
}

int main() {
    std::vector<int> h_x = load_array<int>("data/x.bin", ROWS * COLS);
    int* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> h_counts(ROWS * LEVELS);
    int* d_counts = nullptr;
    CHECK_CUDA(cudaMalloc(&d_counts, h_counts.size() * sizeof(int)));

    row_hist<<<ROWS, 128>>>(d_x, d_counts, COLS, LEVELS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_counts.data(), d_counts, h_counts.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/counts.bin", h_counts);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_counts));
    return 0;
}
