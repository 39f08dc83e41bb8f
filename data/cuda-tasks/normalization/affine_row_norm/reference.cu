// Affine_Row_Standardization: normalise each row to zero mean and unit variance, then scale and shift per column
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

constexpr int ROWS = 64;
constexpr int COLS = 512;

__global__ void row_standardize(const float* x, const float* gamma, const float* beta, float* y, int cols, float eps) {
    __shared__ float red[256];
    const int t = threadIdx.x;
    const float* row = x + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = t; c < cols; c += blockDim.x) s += row[c];
    red[t] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        __syncthreads();
    }
    const float mean = red[0] / cols;
    __syncthreads();
    float q = 0.0f;
    for (int c = t; c < cols; c += blockDim.x) q += (row[c] - mean) * (row[c] - mean);
    red[t] = q;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        __syncthreads();
    }
    const float inv = rsqrtf(red[0] / cols + eps);
    for (int c = t; c < cols; c += blockDim.x)
        y[(size_t)blockIdx.x * cols + c] = (row[c] - mean) * inv * gamma[c] + beta[c];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", ROWS * COLS);
    std::vector<float> h_gamma = load_array<float>("data/gamma.bin", COLS);
    std::vector<float> h_beta = load_array<float>("data/beta.bin", COLS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_gamma = nullptr;
    CHECK_CUDA(cudaMalloc(&d_gamma, h_gamma.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_gamma, h_gamma.data(), h_gamma.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_beta = nullptr;
    CHECK_CUDA(cudaMalloc(&d_beta, h_beta.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_beta, h_beta.data(), h_beta.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(ROWS * COLS);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    row_standardize<<<ROWS, 256>>>(d_x, d_gamma, d_beta, d_y, COLS, 1e-5f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_gamma));
    CHECK_CUDA(cudaFree(d_beta));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
