// Depth_To_Space_Block_2: rearrange blocks of 4 channels into 2 x 2 spatial blocks (depth to space)
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

constexpr int C = 16;
constexpr int H = 12;
constexpr int W = 12;
constexpr int R = 2;

// y[c, i * r + a, j * r + b] = x[(c * r + a) * r + b, i, j]
__global__ void depth_to_space(const float* x, float* y, int c_out, int h, int w, int r) {
    const int ow = w * r, oh = h * r;
    const int X = blockIdx.x * blockDim.x + threadIdx.x;
    const int Y = blockIdx.y * blockDim.y + threadIdx.y;
    const int c = blockIdx.z;
    if (X >= ow || Y >= oh) return;
    const int i = Y / r, a = Y % r, j = X / r, b = X % r;
    y[((size_t)c * oh + Y) * ow + X] = x[(((size_t)(c * r + a) * r + b) * h + i) * w + j];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", C * H * W);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_y(4 * 24 * 24);
    float* d_y = nullptr;
    CHECK_CUDA(cudaMalloc(&d_y, h_y.size() * sizeof(float)));

    dim3 block(8, 8);
    dim3 grid((W * R + 7) / 8, (H * R + 7) / 8, C / (R * R));
    depth_to_space<<<grid, block>>>(d_x, d_y, C / (R * R), H, W, R);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_y.data(), d_y, h_y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/y.bin", h_y);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_y));
    return 0;
}
