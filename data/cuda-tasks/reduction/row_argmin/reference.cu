// Row_Argmin_Position: the column index of the smallest value of each row
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

constexpr int ROWS = 256;
constexpr int COLS = 200;

__global__ void row_argmin(const float* x, int* idx, int cols) {
    __shared__ float bv[128];
    __shared__ int bi[128];
    const int t = threadIdx.x;
    const float* row = x + (size_t)blockIdx.x * cols;
    float v = INFINITY;
    int at = -1;
    for (int c = t; c < cols; c += blockDim.x)
        if (row[c] < v) {
            v = row[c];
            at = c;
        }
    bv[t] = v;
    bi[t] = at;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            const float ov = bv[t + s];
            const int oi = bi[t + s];
            if (ov < bv[t] || (ov == bv[t] && oi >= 0 && oi < bi[t])) {
                bv[t] = ov;
                bi[t] = oi;
            }
        }
        __syncthreads();
    }
    if (t == 0) idx[blockIdx.x] = bi[0];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", ROWS * COLS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<int> h_idx(ROWS);
    int* d_idx = nullptr;
    CHECK_CUDA(cudaMalloc(&d_idx, h_idx.size() * sizeof(int)));

    row_argmin<<<ROWS, 128>>>(d_x, d_idx, COLS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_idx.data(), d_idx, h_idx.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/idx.bin", h_idx);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_idx));
    return 0;
}
