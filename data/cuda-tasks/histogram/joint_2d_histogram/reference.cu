// Joint_Pair_Histogram_16x16: 2D histogram of pairs of small integers
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
constexpr int LEVELS = 16;

__global__ void joint_hist(const int* a, const int* b, int* joint, int n, int levels) {
    __shared__ int local[256];
    for (int k = threadIdx.x; k < levels * levels; k += blockDim.x) local[k] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[a[i] * levels + b[i]], 1);
    __syncthreads();
    for (int k = threadIdx.x; k < levels * levels; k += blockDim.x) atomicAdd(&joint[k], local[k]);
}

int main() {
    std::vector<int> h_a = load_array<int>("data/a.bin", N);
    std::vector<int> h_b = load_array<int>("data/b.bin", N);
    int* d_a = nullptr;
    CHECK_CUDA(cudaMalloc(&d_a, h_a.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_a, h_a.data(), h_a.size() * sizeof(int), cudaMemcpyHostToDevice));
    int* d_b = nullptr;
    CHECK_CUDA(cudaMalloc(&d_b, h_b.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_b, h_b.data(), h_b.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> h_joint(LEVELS * LEVELS);
    int* d_joint = nullptr;
    CHECK_CUDA(cudaMalloc(&d_joint, h_joint.size() * sizeof(int)));

    CHECK_CUDA(cudaMemset(d_joint, 0, LEVELS * LEVELS * sizeof(int)));
    joint_hist<<<32, 256>>>(d_a, d_b, d_joint, N, LEVELS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_joint.data(), d_joint, h_joint.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/joint.bin", h_joint);
    CHECK_CUDA(cudaFree(d_a));
    CHECK_CUDA(cudaFree(d_b));
    CHECK_CUDA(cudaFree(d_joint));
    return 0;
}
