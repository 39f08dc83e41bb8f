// Split_Heads_To_Head_Major: reshape a (sequence, heads * head_dim) activation into head-major (heads, sequence, head_dim)
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
constexpr int HEADS = 4;
constexpr int HD = 32;

__global__ void split_heads(const float* x, float* out, int seq, int nheads, int hd) {
    const int o = blockIdx.x * blockDim.x + threadIdx.x;  // output index (h, s, e)
    if (o >= seq * nheads * hd) return;
    const int e = o % hd, s = (o / hd) % seq, h = o / (hd * seq);
    out[o] = x[s * nheads * hd + h * hd + e];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", SEQ * 128);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_heads(HEADS * SEQ * HD);
    float* d_heads = nullptr;
    CHECK_CUDA(cudaMalloc(&d_heads, h_heads.size() * sizeof(float)));

    split_heads<<<(SEQ * HEADS * HD + 255) / 256, 256>>>(d_x, d_heads, SEQ, HEADS, HD);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_heads.data(), d_heads, h_heads.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/heads.bin", h_heads);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_heads));
    return 0;
}
