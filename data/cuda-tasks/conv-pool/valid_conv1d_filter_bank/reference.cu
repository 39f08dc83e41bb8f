// Valid_Conv1d_Filter_Bank: valid 1D correlation of one signal with a bank of 8 filters of 9 taps
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

constexpr int LEN = 4096;
constexpr int FILTERS = 8;
constexpr int TAPS = 9;
constexpr int OUT_LEN = 4088;

__global__ void conv1d_bank(const float* signal, const float* filters, float* response, int out_len, int taps) {
    extern __shared__ float w[];  // this block's filter
    const int f = blockIdx.y;
    for (int k = threadIdx.x; k < taps; k += blockDim.x) w[k] = filters[f * taps + k];
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= out_len) return;
    float acc = 0.0f;
    for (int k = 0; k < taps; ++k) acc += signal[i + k] * w[k];
    response[(size_t)f * out_len + i] = acc;
}

int main() {
    std::vector<float> h_signal = load_array<float>("data/signal.bin", LEN);
    std::vector<float> h_filters = load_array<float>("data/filters.bin", FILTERS * TAPS);
    float* d_signal = nullptr;
    CHECK_CUDA(cudaMalloc(&d_signal, h_signal.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_signal, h_signal.data(), h_signal.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_filters = nullptr;
    CHECK_CUDA(cudaMalloc(&d_filters, h_filters.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_filters, h_filters.data(), h_filters.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_response(FILTERS * OUT_LEN);
    float* d_response = nullptr;
    CHECK_CUDA(cudaMalloc(&d_response, h_response.size() * sizeof(float)));

    const int block = 256;
    dim3 grid((OUT_LEN + block - 1) / block, FILTERS);
    conv1d_bank<<<grid, block, TAPS * sizeof(float)>>>(d_signal, d_filters, d_response, OUT_LEN, TAPS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_response.data(), d_response, h_response.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/response.bin", h_response);
    CHECK_CUDA(cudaFree(d_signal));
    CHECK_CUDA(cudaFree(d_filters));
    CHECK_CUDA(cudaFree(d_response));
    return 0;
}
