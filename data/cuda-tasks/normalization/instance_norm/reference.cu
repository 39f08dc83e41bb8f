// Per_Channel_Instance_Normalization: normalise every (sample, channel) plane to zero mean and unit variance
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

constexpr int NB = 4;
constexpr int C = 16;
constexpr int HW = 256;

// One warp per plane of 256 values: a lane holds 8 values in registers, two shuffle reductions.
__global__ void instance_norm(const float* x, float* y, int planes, int hw, float eps) {
    const int plane = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (plane >= planes) return;
    const float* p = x + (size_t)plane * hw;
    float v[8];
    float s = 0.0f;
    for (int k = 0; k < 8; ++k) {
        v[k] = p[lane + 32 * k];
        s += v[k];
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    const float mean = s / hw;
    float q = 0.0f;
    for (int k = 0; k < 8; ++k) q += (v[k] - mean) * (v[k] - mean);
    for (int off = 16; off > 0; off >>= 1) q += __shfl_xor_sync(0xffffffffu, q, off);
    const float inv = rsqrtf(q / hw + eps);
    for (int k = 0; k < 8; ++k) y[(size_t)plane * hw + lane + 32 * k] = (v[k] - mean) * inv;
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", NB * C * 16 * 16);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(NB * C * 16 * 16);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    instance_norm<<<NB * C * 32 / 128, 128>>>(d_x, d_y, NB * C, HW, 1e-5f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
