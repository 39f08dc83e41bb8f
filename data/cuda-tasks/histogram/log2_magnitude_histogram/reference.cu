// Bit_Length_Histogram: histogram of the bit length (floor of log2) of non-zero 32-bit words
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

constexpr int N = 32768;
constexpr int BINS = 32;

__global__ void bit_length_hist(const unsigned int* words, int* counts, int n) {
    __shared__ int local[32];
    if (threadIdx.x < 32) local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[31 - __clz((int)words[i])], 1);  // index of the highest set bit
    __syncthreads();
    if (threadIdx.x < 32) atomicAdd(&counts[threadIdx.x], local[threadIdx.x]);
}

int main() {
    std::vector<unsigned int> h_words = load_array<unsigned int>("data/words.bin", N);
    unsigned int* d_words = nullptr;
    CHECK_CUDA(cudaMalloc(&d_words, h_words.size() * sizeof(unsigned int)));
    CHECK_CUDA(cudaMemcpy(d_words, h_words.data(), h_words.size() * sizeof(unsigned int), cudaMemcpyHostToDevice));
    std::vector<int> h_counts(BINS);
    int* d_counts = nullptr;
    CHECK_CUDA(cudaMalloc(&d_counts, h_counts.size() * sizeof(int)));

    CHECK_CUDA(cudaMemset(d_counts, 0, BINS * sizeof(int)));
    bit_length_hist<<<16, 256>>>(d_words, d_counts, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_counts.data(), d_counts, h_counts.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/counts.bin", h_counts);
    CHECK_CUDA(cudaFree(d_words));
    CHECK_CUDA(cudaFree(d_counts));
    return 0;
}
