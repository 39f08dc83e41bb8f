// Count_Values_Above_Threshold: the number of elements greater than 0.5, counted with a block vote
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

constexpr int N = 65536;

__global__ void count_above(const float* x, int* count, int n, float threshold) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int hit = (i < n && x[i] > threshold) ? 1 : 0;
    const int block_hits = __syncthreads_count(hit);  // every thread of the block takes part
    if (threadIdx.x == 0) atomicAdd(count, block_hits);
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", N);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<int> h_count(1);
    int* d_count = nullptr;
    CHECK_CUDA(cudaMalloc(&d_count, h_count.size() * sizeof(int)));

    CHECK_CUDA(cudaMemset(d_count, 0, sizeof(int)));
    count_above<<<(N + 255) / 256, 256>>>(d_x, d_count, N, 0.5f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_count.data(), d_count, h_count.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/count.bin", h_count);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_count));
    return 0;
}
