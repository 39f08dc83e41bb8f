// Explicit_Heat_1d_Four_Steps: four explicit time steps of the 1D heat equation with fixed end values
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
constexpr int STEPS = 4;

__global__ void heat_step(const float* u, float* next, int n, float alpha) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i == 0 || i == n - 1) next[i] = u[i];
    else next[i] = u[i] + alpha * (u[i - 1] - 2.0f * u[i] + u[i + 1]);
}

int main() {
    std::vector<float> h_u0 = load_array<float>("data/u0.bin", N);
    float* d_u0 = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u0, h_u0.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_u0, h_u0.data(), h_u0.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_u4(N);
    float* d_u4 = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u4, h_u4.size() * sizeof(float)));

    // Ping-pong between the output buffer and a scratch buffer; an even number of steps ends in d_u4.
    float* d_tmp = nullptr;
    CHECK_CUDA(cudaMalloc(&d_tmp, N * sizeof(float)));
    const float* src = d_u0;
    for (int s = 0; s < STEPS; ++s) {
        float* dst = (s % 2 == 0) ? d_tmp : d_u4;
        heat_step<<<(N + 255) / 256, 256>>>(src, dst, N, 0.25f);
        src = dst;
    }
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaFree(d_tmp));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_u4.data(), d_u4, h_u4.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/u4.bin", h_u4);
    CHECK_CUDA(cudaFree(d_u0));
    CHECK_CUDA(cudaFree(d_u4));
    return 0;
}
