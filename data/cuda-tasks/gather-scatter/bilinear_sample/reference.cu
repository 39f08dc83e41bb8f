// Bilinear_Point_Sampling: sample an image at fractional coordinates with bilinear interpolation
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

constexpr int H = 64;
constexpr int W = 64;
constexpr int P = 4096;

__global__ void bilinear_sample(const float* img, const float2* pts, float* val, int h, int w, int p) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p) return;
    const float2 q = pts[i];
    const int x0 = (int)floorf(q.x), y0 = (int)floorf(q.y);
    const float fx = q.x - x0, fy = q.y - y0;
    const float* r0 = img + y0 * w + x0;
    const float* r1 = r0 + w;
    const float top = (1.0f - fx) * r0[0] + fx * r0[1];
    const float bot = (1.0f - fx) * r1[0] + fx * r1[1];
    val[i] = (1.0f - fy) * top + fy * bot;
}

int main() {
    std::vector<float> h_img = load_array<float>("data/img.bin", H * W);
    std::vector<float> h_pts = load_array<float>("data/pts.bin", P * 2);
    float* d_img = nullptr;
    CHECK_CUDA(cudaMalloc(&d_img, h_img.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_img, h_img.data(), h_img.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_pts = nullptr;
    CHECK_CUDA(cudaMalloc(&d_pts, h_pts.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_pts, h_pts.data(), h_pts.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_val(P);
    float* d_val = nullptr;
    CHECK_CUDA(cudaMalloc(&d_val, h_val.size() * sizeof(float)));

    bilinear_sample<<<(P + 255) / 256, 256>>>(d_img, reinterpret_cast<const float2*>(d_pts), d_val, H, W, P);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_val.data(), d_val, h_val.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/val.bin", h_val);
    CHECK_CUDA(cudaFree(d_img));
    CHECK_CUDA(cudaFree(d_pts));
    CHECK_CUDA(cudaFree(d_val));
    return 0;
}
