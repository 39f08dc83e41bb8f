// Cumulative_Count_Distribution: the cumulative histogram: for each level, how many values are at or below it
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

constexpr int N = 16384;
constexpr int LEVELS = 128;

// Kernel 1: histogram with shared-memory privatisation. Kernel 2: one block scans the 128 bins.
__global__ void level_hist(const int* x, int* hist, int n, int levels) {
    __shared__ int local[128];
    for (int k = threadIdx.x; k < levels; k += blockDim.x) local[k] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[x[i]], 1);
    __syncthreads();
    for (int k = threadIdx.x; k < levels; k += blockDim.x) atomicAdd(&hist[k], local[k]);
}

__global__ void inclusive_scan_bins(int* hist, int levels) {
    __shared__ int buf[2][128];
    const int t = threadIdx.x;
    int src = 0;
    buf[0][t] = hist[t];
    __syncthreads();
    for (int off = 1; off < levels; off <<= 1) {
        int v = buf[src][t];
        if (t >= off) v += buf[src][t - off];
        buf[1 - src][t] = v;
        src = 1 - src;
        __syncthreads();
    }
    hist[t] = buf[src][t];
}

int main() {
    std::vector<int> h_x = load_array<int>("data/x.bin", N);
    int* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> h_cdf(LEVELS);
    int* d_cdf = nullptr;
    CHECK_CUDA(cudaMalloc(&d_cdf, h_cdf.size() * sizeof(int)));

    CHECK_CUDA(cudaMemset(d_cdf, 0, LEVELS * sizeof(int)));
    level_hist<<<16, 256>>>(d_x, d_cdf, N, LEVELS);
    inclusive_scan_bins<<<1, LEVELS>>>(d_cdf, LEVELS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_cdf.data(), d_cdf, h_cdf.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/cdf.bin", h_cdf);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_cdf));
    return 0;
}
