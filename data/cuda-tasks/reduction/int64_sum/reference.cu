// Wide_Integer_Sum_To_Int64: the sum of large int32 values, accumulated in 64 bits
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

__global__ void sum_to_int64(const int* x, unsigned long long* total, int n) {
    __shared__ unsigned long long part[256];
    unsigned long long s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += (unsigned long long)x[i];  // the values are non-negative
    part[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, part[0]);
}

int main() {
    std::vector<int> h_x = load_array<int>("data/x.bin", N);
    int* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<long long> h_total(1);
    long long* d_total = nullptr;
    CHECK_CUDA(cudaMalloc(&d_total, h_total.size() * sizeof(long long)));

    CHECK_CUDA(cudaMemset(d_total, 0, sizeof(long long)));
    sum_to_int64<<<32, 256>>>(d_x, reinterpret_cast<unsigned long long*>(d_total), N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_total.data(), d_total, h_total.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    store_array("data/total.bin", h_total);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_total));
    return 0;
}
