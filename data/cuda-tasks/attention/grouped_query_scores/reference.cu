// Grouped_Query_Shared_Key_Scores: attention scores where groups of 4 query heads share one key head
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

constexpr int QH = 8;
constexpr int KVH = 2;
constexpr int SEQ = 32;
constexpr int D = 32;

// blockIdx.z = query head; it reads key head z / (QH / KVH). The key head is staged in shared memory.
__global__ void gqa_scores(const float* q, const float* k, float* scores, int qh, int kvh, int seq, int d, float scale) {
    __shared__ float ks[32][33];
    const int h = blockIdx.z, g = h / (qh / kvh);
    const int i = threadIdx.y, j = threadIdx.x;  // 32 x 32 threads: query i, key j
    ks[i][j] = k[((size_t)g * seq + i) * d + j];  // row i of the key head, feature j
    __syncthreads();
    const float* qi = q + ((size_t)h * seq + i) * d;
    float acc = 0.0f;
    for (int e = 0; e < d; ++e) acc += qi[e] * ks[j][e];
    scores[((size_t)h * seq + i) * seq + j] = acc * scale;
}

int main() {
    std::vector<float> h_q = load_array<float>("data/q.bin", QH * SEQ * D);
    std::vector<float> h_k = load_array<float>("data/k.bin", KVH * SEQ * D);
    float* d_q = nullptr;
    CHECK_CUDA(cudaMalloc(&d_q, h_q.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_q, h_q.data(), h_q.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_k = nullptr;
    CHECK_CUDA(cudaMalloc(&d_k, h_k.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_k, h_k.data(), h_k.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_scores(QH * SEQ * SEQ);
    float* d_scores = nullptr;
    CHECK_CUDA(cudaMalloc(&d_scores, h_scores.size() * sizeof(float)));

    dim3 block(SEQ, SEQ);
    dim3 grid(1, 1, QH);
    gqa_scores<<<grid, block>>>(d_q, d_k, d_scores, QH, KVH, SEQ, D, 0.17677669529663687f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_scores.data(), d_scores, h_scores.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/scores.bin", h_scores);
    CHECK_CUDA(cudaFree(d_q));
    CHECK_CUDA(cudaFree(d_k));
    CHECK_CUDA(cudaFree(d_scores));
    return 0;
}
