// Flagged_Segment_Inclusive_Scan: inclusive sum scan that restarts wherever a head flag is set
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

// One block of 1024 threads, 4 consecutive elements each. A (flag, sum) pair combines as
// (fa | fb, fb ? sb : sa + sb); the pairs of the chunks are scanned in shared memory.
__global__ void segmented_scan(const float* values, const int* heads, float* scan, int n) {
    __shared__ float sum[2][1024];
    __shared__ int flag[2][1024];
    const int t = threadIdx.x, per = n / blockDim.x;
    float run = 0.0f;
    int f = 0;
    for (int k = 0; k < per; ++k) {
        const int i = t * per + k;
        if (heads[i]) { run = 0.0f; f = 1; }
        run += values[i];
    }
    int src = 0;
    sum[0][t] = run;
    flag[0][t] = f;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        float s = sum[src][t];
        int g = flag[src][t];
        if (t >= off && !g) {
            s += sum[src][t - off];
            g = flag[src][t - off];
        }
        sum[1 - src][t] = s;
        flag[1 - src][t] = g;
        src = 1 - src;
        __syncthreads();
    }
    float carry = t > 0 ? sum[src][t - 1] : 0.0f;  // the running sum entering this chunk
    for (int k = 0; k < per; ++k) {
        const int i = t * per + k;
        if (heads[i]) carry = 0.0f;
        carry += values[i];
        scan[i] = carry;
    }
}

int main() {
    std::vector<float> h_values = load_array<float>("data/values.bin", N);
    std::vector<int> h_heads = load_array<int>("data/heads.bin", N);
    float* d_values = nullptr;
    CHECK_CUDA(cudaMalloc(&d_values, h_values.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_values, h_values.data(), h_values.size() * sizeof(float), cudaMemcpyHostToDevice));
    int* d_heads = nullptr;
    CHECK_CUDA(cudaMalloc(&d_heads, h_heads.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_heads, h_heads.data(), h_heads.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_scan(N);
    float* d_scan = nullptr;
    CHECK_CUDA(cudaMalloc(&d_scan, h_scan.size() * sizeof(float)));

    segmented_scan<<<1, 1024>>>(d_values, d_heads, d_scan, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_scan.data(), d_scan, h_scan.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/scan.bin", h_scan);
    CHECK_CUDA(cudaFree(d_values));
    CHECK_CUDA(cudaFree(d_heads));
    CHECK_CUDA(cudaFree(d_scan));
    return 0;
}
