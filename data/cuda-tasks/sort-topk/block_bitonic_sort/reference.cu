// Shared_Memory_Bitonic_Sort_4096: sort 4096 float32 values ascending with a bitonic network in one block
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

constexpr int N = 4096;

__global__ void bitonic_sort_block(const float* keys, float* sorted, int n) {
    extern __shared__ float s[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = keys[i];
    __syncthreads();
    for (int k = 2; k <= n; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < n; i += blockDim.x) {
                const int partner = i ^ j;
                if (partner > i) {
                    const bool ascending = (i & k) == 0;
                    const float a = s[i], b = s[partner];
                    if ((a > b) == ascending) {
                        s[i] = b;
                        s[partner] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
    for (int i = threadIdx.x; i < n; i += blockDim.x) sorted[i] = s[i];
}

int main() {
    std::vector<float> h_keys = load_array<float>("data/keys.bin", N);
    float* d_keys = nullptr;
    CHECK_CUDA(cudaMalloc(&d_keys, h_keys.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_keys, h_keys.data(), h_keys.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_sorted(N);
    float* d_sorted = nullptr;
    CHECK_CUDA(cudaMalloc(&d_sorted, h_sorted.size() * sizeof(float)));

    bitonic_sort_block<<<1, 1024, N * sizeof(float)>>>(d_keys, d_sorted, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_sorted.data(), d_sorted, h_sorted.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/sorted.bin", h_sorted);
    CHECK_CUDA(cudaFree(d_keys));
    CHECK_CUDA(cudaFree(d_sorted));
    return 0;
}
