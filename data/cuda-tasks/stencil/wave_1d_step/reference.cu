// Leapfrog_Wave_Step_1d: one leapfrog time step of the 1D wave equation with fixed zero ends
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

__global__ void wave_step(const float* u_prev, const float* u_cur, float* u_next, int n, float c2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i == 0 || i == n - 1) {
        u_next[i] = 0.0f;
        return;
    }
    u_next[i] = 2.0f * u_cur[i] - u_prev[i] + c2 * (u_cur[i - 1] - 2.0f * u_cur[i] + u_cur[i + 1]);
}

int main() {
    std::vector<float> h_u_prev = load_array<float>("data/u_prev.bin", N);
    std::vector<float> h_u_cur = load_array<float>("data/u_cur.bin", N);
    float* d_u_prev = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u_prev, h_u_prev.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_u_prev, h_u_prev.data(), h_u_prev.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_u_cur = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u_cur, h_u_cur.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_u_cur, h_u_cur.data(), h_u_cur.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_u_next(N);
    float* d_u_next = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u_next, h_u_next.size() * sizeof(float)));

    wave_step<<<(N + 255) / 256, 256>>>(d_u_prev, d_u_cur, d_u_next, N, 0.09f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_u_next.data(), d_u_next, h_u_next.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/u_next.bin", h_u_next);
    CHECK_CUDA(cudaFree(d_u_prev));
    CHECK_CUDA(cudaFree(d_u_cur));
    CHECK_CUDA(cudaFree(d_u_next));
    return 0;
}
