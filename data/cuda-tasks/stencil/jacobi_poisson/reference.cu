// Jacobi_Poisson_Ten_Sweeps: ten Jacobi sweeps for the 2D Poisson equation with zero boundary values
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

constexpr int N = 64;
constexpr int SWEEPS = 10;

// One sweep: interior points average their neighbours plus h^2 f; the boundary stays 0.
__global__ void jacobi_sweep(const float* cur, const float* f, float* next, int n, float h2) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    const int i = y * n + x;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        next[i] = 0.0f;
        return;
    }
    next[i] = 0.25f * (cur[i - n] + cur[i + n] + cur[i - 1] + cur[i + 1] + h2 * f[i]);
}

int main() {
    std::vector<float> h_f = load_array<float>("data/f.bin", N * N);
    float* d_f = nullptr;
    CHECK_CUDA(cudaMalloc(&d_f, h_f.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_f, h_f.data(), h_f.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_u(N * N);
    float* d_u = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u, h_u.size() * sizeof(float)));

    float* d_tmp = nullptr;
    CHECK_CUDA(cudaMalloc(&d_tmp, N * N * sizeof(float)));
    CHECK_CUDA(cudaMemset(d_u, 0, N * N * sizeof(float)));  // u = 0 to start
    const float h2 = (1.0f / (N - 1)) * (1.0f / (N - 1));
    dim3 block(16, 16);
    dim3 grid((N + 15) / 16, (N + 15) / 16);
    float* bufs[2] = {d_u, d_tmp};  // sweep s reads bufs[s % 2]: an even count ends in d_u
    for (int s = 0; s < SWEEPS; ++s) jacobi_sweep<<<grid, block>>>(bufs[s % 2], d_f, bufs[(s + 1) % 2], N, h2);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaFree(d_tmp));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_u.data(), d_u, h_u.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/u.bin", h_u);
    CHECK_CUDA(cudaFree(d_f));
    CHECK_CUDA(cudaFree(d_u));
    return 0;
}
