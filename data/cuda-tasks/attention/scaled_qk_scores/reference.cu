// Scaled_Query_Key_Scores: attention scores Q K^T / sqrt(d) for one head
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

#define TILE 16
__global__ void qk_scores(const float* q, const float* k, float* scores, int seq, int d, float scale) {
    __shared__ float qs[TILE][TILE];
    __shared__ float ks[TILE][TILE + 1];
    const int i = blockIdx.y * TILE + threadIdx.y;  // query
    const int j = blockIdx.x * TILE + threadIdx.x;  // key
    float acc = 0.0f;
    for (int d0 = 0; d0 < d; d0 += TILE) {
        qs[threadIdx.y][threadIdx.x] = q[(blockIdx.y * TILE + threadIdx.y) * d + d0 + threadIdx.x];
        ks[threadIdx.y][threadIdx.x] = k[(blockIdx.x * TILE + threadIdx.y) * d + d0 + threadIdx.x];
        __syncthreads();
        for (int t = 0; t < TILE; ++t) acc += qs[threadIdx.y][t] * ks[threadIdx.x][t];
        __syncthreads();
    }
    if (i < seq && j < seq) scores[i * seq + j] = acc * scale;
}

int main() {
    std::vector<float> h_q = load_array<float>("data/q.bin", SEQ * D);
    std::vector<float> h_k = load_array<float>("data/k.bin", SEQ * D);
    float* d_q = nullptr;
    CHECK_CUDA(cudaMalloc(&d_q, h_q.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_q, h_q.data(), h_q.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_k = nullptr;
    CHECK_CUDA(cudaMalloc(&d_k, h_k.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_k, h_k.data(), h_k.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_scores(SEQ * SEQ);
    float* d_scores = nullptr;
    CHECK_CUDA(cudaMalloc(&d_scores, h_scores.size() * sizeof(float)));

    dim3 block(TILE, TILE);
    dim3 grid(SEQ / TILE, SEQ / TILE);
    qk_scores<<<grid, block>>>(d_q, d_k, d_scores, SEQ, D, 0.125f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_scores.data(), d_scores, h_scores.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/scores.bin", h_scores);
    CHECK_CUDA(cudaFree(d_q));
    CHECK_CUDA(cudaFree(d_k));
    CHECK_CUDA(cudaFree(d_scores));
    return 0;
}
