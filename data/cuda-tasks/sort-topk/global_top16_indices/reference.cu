// Global_Top_16_Positions: the indices of the 16 largest values of a vector, largest first
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

constexpr int N = 8192;
constexpr int K = 16;

// Thread i counts the values larger than x[i] (tiles in shared memory); if that count is below K,
// it is i's position in the result.
__global__ void top_k_positions(const float* x, int* top_idx, int n, int k) {
    __shared__ float tile[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float v = i < n ? x[i] : -INFINITY;
    int larger = 0;
    for (int t0 = 0; t0 < n; t0 += 256) {
        tile[threadIdx.x] = t0 + threadIdx.x < n ? x[t0 + threadIdx.x] : -INFINITY;
        __syncthreads();
        for (int j = 0; j < 256; ++j) larger += tile[j] > v;
        __syncthreads();
    }
    if (i < n && larger < k) top_idx[larger] = i;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", N);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<int> h_top_idx(K);
    int* d_top_idx = nullptr;
    CHECK_CUDA(cudaMalloc(&d_top_idx, h_top_idx.size() * sizeof(int)));

    top_k_positions<<<(N + 255) / 256, 256>>>(d_x, d_top_idx, N, K);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_top_idx.data(), d_top_idx, h_top_idx.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/top_idx.bin", h_top_idx);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_top_idx));
    return 0;
}
