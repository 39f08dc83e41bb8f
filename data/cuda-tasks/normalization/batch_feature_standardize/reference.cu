// Feature_Standardization_Over_Batch: standardise each feature (column) with the mean and variance over the batch (rows)
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

constexpr int BATCH = 512;
constexpr int FEATURES = 32;

// One block per feature: 256 threads stride down the column.
__global__ void standardize_columns(const float* x, float* y, int batch, int features, float eps) {
    __shared__ float red[256];
    const int t = threadIdx.x, f = blockIdx.x;
    float s = 0.0f;
    for (int r = t; r < batch; r += blockDim.x) s += x[r * features + f];
    red[t] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        __syncthreads();
    }
    const float mean = red[0] / batch;
    __syncthreads();
    float q = 0.0f;
    for (int r = t; r < batch; r += blockDim.x) {
        const float d = x[r * features + f] - mean;
        q += d * d;
    }
    red[t] = q;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) red[t] += red[t + k];
        __syncthreads();
    }
    const float inv = rsqrtf(red[0] / batch + eps);
    for (int r = t; r < batch; r += blockDim.x) y[r * features + f] = (x[r * features + f] - mean) * inv;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", BATCH * FEATURES);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(BATCH * FEATURES);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    standardize_columns<<<FEATURES, 256>>>(d_x, d_y, BATCH, FEATURES, 1e-5f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
