// Key_Value_Bitonic_Sort: sort int32 keys ascending and carry a float32 payload along, in one block
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

constexpr int N = 2048;

__global__ void bitonic_pairs(const int* keys, const float* vals, int* sorted_keys, float* sorted_vals, int n) {
    __shared__ int k[2048];
    __shared__ float v[2048];
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        k[i] = keys[i];
        v[i] = vals[i];
    }
    __syncthreads();
    for (int size = 2; size <= n; size <<= 1)
        for (int j = size >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < n; i += blockDim.x) {
                const int p = i ^ j;
                if (p > i && ((k[i] > k[p]) == ((i & size) == 0))) {
                    const int tk = k[i];
                    k[i] = k[p];
                    k[p] = tk;
                    const float tv = v[i];
                    v[i] = v[p];
                    v[p] = tv;
                }
            }
            __syncthreads();
        }
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        sorted_keys[i] = k[i];
        sorted_vals[i] = v[i];
    }
}

int main() {
    std::vector<int> h_keys = load_array<int>("data/keys.bin", N);
    std::vector<float> h_vals = load_array<float>("data/vals.bin", N);
    int* d_keys = nullptr;
    CHECK_CUDA(cudaMalloc(&d_keys, h_keys.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_keys, h_keys.data(), h_keys.size() * sizeof(int), cudaMemcpyHostToDevice));
    float* d_vals = nullptr;
    CHECK_CUDA(cudaMalloc(&d_vals, h_vals.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_vals, h_vals.data(), h_vals.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<int> h_sorted_keys(N);
    int* d_sorted_keys = nullptr;
    CHECK_CUDA(cudaMalloc(&d_sorted_keys, h_sorted_keys.size() * sizeof(int)));
    std::vector<float> h_sorted_vals(N);
    float* d_sorted_vals = nullptr;
    CHECK_CUDA(cudaMalloc(&d_sorted_vals, h_sorted_vals.size() * sizeof(float)));

    bitonic_pairs<<<1, 1024>>>(d_keys, d_vals, d_sorted_keys, d_sorted_vals, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_sorted_keys.data(), d_sorted_keys, h_sorted_keys.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/sorted_keys.bin", h_sorted_keys);
    CHECK_CUDA(cudaMemcpy(h_sorted_vals.data(), d_sorted_vals, h_sorted_vals.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/sorted_vals.bin", h_sorted_vals);
    CHECK_CUDA(cudaFree(d_keys));
    CHECK_CUDA(cudaFree(d_vals));
    CHECK_CUDA(cudaFree(d_sorted_keys));
    CHECK_CUDA(cudaFree(d_sorted_vals));
    return 0;
}
