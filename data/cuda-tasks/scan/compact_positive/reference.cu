// Order_Preserving_Positive_Compaction: move the positive values to the front in their original order and count them
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

// One block of 1024 threads, 16 consecutive elements each: count the keepers per chunk, scan the
// counts in shared memory, then each chunk writes its keepers at its offset; the tail is zeroed.
__global__ void compact_positive(const float* x, float* packed, int* count, int n) {
    __shared__ int buf[2][1024];
    const int t = threadIdx.x, per = n / blockDim.x;
    int mine = 0;
    for (int k = 0; k < per; ++k) mine += x[t * per + k] > 0.0f;
    int src = 0;
    buf[0][t] = mine;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        int v = buf[src][t];
        if (t >= off) v += buf[src][t - off];
        buf[1 - src][t] = v;
        src = 1 - src;
        __syncthreads();
    }
    int at = buf[src][t] - mine;
    for (int k = 0; k < per; ++k) {
        const float v = x[t * per + k];
        if (v > 0.0f) packed[at++] = v;
    }
    const int total = buf[src][blockDim.x - 1];
    for (int i = total + t; i < n; i += blockDim.x) packed[i] = 0.0f;
    if (t == 0) *count = total;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", N);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_packed(N);
    float* d_packed = nullptr;
    CHECK_CUDA(cudaMalloc(&d_packed, h_packed.size() * sizeof(float)));
    std::vector<int> h_count(1);
    int* d_count = nullptr;
    CHECK_CUDA(cudaMalloc(&d_count, h_count.size() * sizeof(int)));

    compact_positive<<<1, 1024>>>(d_x, d_packed, d_count, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_packed.data(), d_packed, h_packed.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/packed.bin", h_packed);
    CHECK_CUDA(cudaMemcpy(h_count.data(), d_count, h_count.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/count.bin", h_count);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_packed));
    CHECK_CUDA(cudaFree(d_count));
    return 0;
}
