// Sorted_Segment_Id_Sum: sum values by segment id, where the ids are sorted, without atomics
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
constexpr int SEGMENTS = 512;

// One thread per segment: binary searches find where the segment starts and ends.
__device__ int lower_bound_id(const int* seg, int n, int key) {
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (seg[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

__global__ void segment_sum(const float* values, const int* seg, float* sums, int n, int segments) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= segments) return;
    const int begin = lower_bound_id(seg, n, s), end = lower_bound_id(seg, n, s + 1);
    float acc = 0.0f;
    for (int i = begin; i < end; ++i) acc += values[i];
    sums[s] = acc;
}

int main() {
    std::vector<float> h_values = load_array<float>("data/values.bin", N);
    std::vector<int> h_seg = load_array<int>("data/seg.bin", N);
    float* d_values = nullptr;
    CHECK_CUDA(cudaMalloc(&d_values, h_values.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_values, h_values.data(), h_values.size() * sizeof(float), cudaMemcpyHostToDevice));
    int* d_seg = nullptr;
    CHECK_CUDA(cudaMalloc(&d_seg, h_seg.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_seg, h_seg.data(), h_seg.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_sums(SEGMENTS);
    float* d_sums = nullptr;
    CHECK_CUDA(cudaMalloc(&d_sums, h_sums.size() * sizeof(float)));

    segment_sum<<<(SEGMENTS + 127) / 128, 128>>>(d_values, d_seg, d_sums, N, SEGMENTS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_sums.data(), d_sums, h_sums.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/sums.bin", h_sums);
    CHECK_CUDA(cudaFree(d_values));
    CHECK_CUDA(cudaFree(d_seg));
    CHECK_CUDA(cudaFree(d_sums));
    return 0;
}
