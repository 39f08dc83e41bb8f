// Rotary_Position_Rotation_Tables: rotate consecutive feature pairs by position-dependent angles given as cos/sin tables
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

constexpr int SEQ = 128;
constexpr int D = 64;
constexpr int HALF = 32;

__global__ void rope_tables(const float* x, const float* cos_t, const float* sin_t, float* y, int seq, int half) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;  // one thread per pair
    if (i >= seq * half) return;
    const int pos = i / half, k = i % half;
    const float2 v = reinterpret_cast<const float2*>(x)[i];  // (x[pos, 2k], x[pos, 2k+1])
    const float c = cos_t[pos * half + k], s = sin_t[pos * half + k];
    reinterpret_cast<float2*>(y)[i] = make_float2(v.x * c - v.y * s, v.x * s + v.y * c);
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", SEQ * D);
    std::vector<float> h_cos_t = load_array<float>("data/cos_t.bin", SEQ * HALF);
    std::vector<float> h_sin_t = load_array<float>("data/sin_t.bin", SEQ * HALF);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_cos_t = nullptr;
    CHECK_CUDA(cudaMalloc(&d_cos_t, h_cos_t.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_cos_t, h_cos_t.data(), h_cos_t.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_sin_t = nullptr;
    CHECK_CUDA(cudaMalloc(&d_sin_t, h_sin_t.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_sin_t, h_sin_t.data(), h_sin_t.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(SEQ * D);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    rope_tables<<<(SEQ * HALF + 255) / 256, 256>>>(d_x, d_cos_t, d_sin_t, d_y, SEQ, HALF);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_cos_t));
    CHECK_CUDA(cudaFree(d_sin_t));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
