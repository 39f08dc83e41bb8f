// Linear_Bias_Causal_Head_Softmax: add a per-head linear distance penalty to causal attention scores, then softmax each row
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

constexpr int HEADS = 4;
constexpr int SEQ = 64;

// One warp per (head, query) row; lane j holds keys j and j + 32.
__global__ void alibi_softmax(const float* scores, float* probs, int heads, int seq) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;  // head * seq + i
    const int lane = threadIdx.x & 31;
    if (row >= heads * seq) return;
    const int h = row / seq, i = row % seq;
    const float slope = 0.5f / (float)(1 << h);  // 1/2, 1/4, 1/8, 1/16
    float z[2];
    float m = -INFINITY;
    for (int k = 0; k < 2; ++k) {
        const int j = lane + 32 * k;
        z[k] = j <= i ? scores[(size_t)row * seq + j] + slope * (float)(j - i) : -INFINITY;
        m = fmaxf(m, z[k]);
    }
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    float e[2], s = 0.0f;
    for (int k = 0; k < 2; ++k) {
        e[k] = lane + 32 * k <= i ? expf(z[k] - m) : 0.0f;
        s += e[k];
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    for (int k = 0; k < 2; ++k) probs[(size_t)row * seq + lane + 32 * k] = e[k] / s;
}

int main() {
    std::vector<float> h_scores = load_array<float>("data/scores.bin", HEADS * SEQ * SEQ);
    float* d_scores = nullptr;
    CHECK_CUDA(cudaMalloc(&d_scores, h_scores.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_scores, h_scores.data(), h_scores.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_probs(HEADS * SEQ * SEQ);
    float* d_probs = nullptr;
    CHECK_CUDA(cudaMalloc(&d_probs, h_probs.size() * sizeof(float)));

    alibi_softmax<<<HEADS * SEQ * 32 / 128, 128>>>(d_scores, d_probs, HEADS, SEQ);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_probs.data(), d_probs, h_probs.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/probs.bin", h_probs);
    CHECK_CUDA(cudaFree(d_scores));
    CHECK_CUDA(cudaFree(d_probs));
    return 0;
}
