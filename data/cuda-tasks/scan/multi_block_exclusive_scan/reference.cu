// Three_Phase_Exclusive_Scan: exclusive prefix sum of a long int32 vector with block scans, a scan of block totals and a fix-up
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
constexpr int BLOCK = 256;

// Phase 1: each block scans its 256 elements (exclusive) and records its total.
__global__ void block_scan(const int* x, int* y, int* totals, int n) {
    __shared__ int buf[2][256];
    const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    const int v = i < n ? x[i] : 0;
    int src = 0;
    buf[0][t] = v;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        int s = buf[src][t];
        if (t >= off) s += buf[src][t - off];
        buf[1 - src][t] = s;
        src = 1 - src;
        __syncthreads();
    }
    if (i < n) y[i] = buf[src][t] - v;
    if (t == blockDim.x - 1) totals[blockIdx.x] = buf[src][t];
}

// Phase 2: one thread scans the (256) block totals into exclusive offsets, in place.
__global__ void scan_totals(int* totals, int blocks) {
    int run = 0;
    for (int b = 0; b < blocks; ++b) {
        const int v = totals[b];
        totals[b] = run;
        run += v;
    }
}

// Phase 3: every element adds its block's offset.
__global__ void add_offsets(int* y, const int* offsets, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += offsets[blockIdx.x];
}

int main() {
    std::vector<int> h_x = load_array<int>("data/x.bin", N);
    int* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<int> h_y(N);
    int* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(int)));

    const int blocks = (N + BLOCK - 1) / BLOCK;
    int* d_totals = nullptr;
    CHECK_CUDA(cudaMalloc(&d_totals, blocks * sizeof(int)));
    block_scan<<<blocks, BLOCK>>>(d_x, d_y, d_totals, N);
    scan_totals<<<1, 1>>>(d_totals, blocks);
    add_offsets<<<blocks, BLOCK>>>(d_y, d_totals, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaFree(d_totals));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
