// Seven_Point_Stencil_3d: weighted 7-point stencil on a 3D grid; boundary points are copied
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

constexpr int D = 32;
constexpr int H = 32;
constexpr int W = 32;

__global__ void stencil7(const float* u, float* v, int d, int h, int w) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const int plane = h * w;
    for (int z = 0; z < d; ++z) {  // each thread marches along z
        const int i = z * plane + y * w + x;
        if (x == 0 || y == 0 || z == 0 || x == w - 1 || y == h - 1 || z == d - 1) {
            v[i] = u[i];
            continue;
        }
        v[i] = 0.4f * u[i] + 0.1f * (u[i - plane] + u[i + plane] + u[i - w] + u[i + w] + u[i - 1] + u[i + 1]);
    }
}

int main() {
    std::vector<float> h_u = load_array<float>("data/u.bin", D * H * W);
    float* d_u = nullptr;
    CHECK_CUDA(cudaMalloc(&d_u, h_u.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_u, h_u.data(), h_u.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_v(D * H * W);
    float* d_v = nullptr;
    CHECK_CUDA(cudaMalloc(&d_v, h_v.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid((W + 15) / 16, (H + 15) / 16);
    stencil7<<<grid, block>>>(d_u, d_v, D, H, W);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_v.data(), d_v, h_v.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/v.bin", h_v);
    CHECK_CUDA(cudaFree(d_u));
    CHECK_CUDA(cudaFree(d_v));
    return 0;
}
