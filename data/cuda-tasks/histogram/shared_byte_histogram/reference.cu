// Privatized_Byte_Histogram: 256-bin histogram of bytes with per-block shared-memory counters
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
constexpr int BINS = 256;

__global__ void byte_histogram(const unsigned char* bytes, int* counts, int n) {
    __shared__ int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[bytes[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b]) atomicAdd(&counts[b], local[b]);
}

int main() {
    std::vector<unsigned char> h_bytes = load_array<unsigned char>("data/bytes.bin", N);
    unsigned char* d_bytes = nullptr;
    CHECK_CUDA(cudaMalloc(&d_bytes, h_bytes.size() * sizeof(unsigned char)));
    CHECK_CUDA(cudaMemcpy(d_bytes, h_bytes.data(), h_bytes.size() * sizeof(unsigned char), cudaMemcpyHostToDevice));
    std::vector<int> h_counts(BINS);
    int* d_counts = nullptr;
    CHECK_CUDA(cudaMalloc(&d_counts, h_counts.size() * sizeof(int)));

    CHECK_CUDA(cudaMemset(d_counts, 0, BINS * sizeof(int)));
    byte_histogram<<<32, 256>>>(d_bytes, d_counts, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_counts.data(), d_counts, h_counts.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/counts.bin", h_counts);
    CHECK_CUDA(cudaFree(d_bytes));
    CHECK_CUDA(cudaFree(d_counts));
    return 0;
}
