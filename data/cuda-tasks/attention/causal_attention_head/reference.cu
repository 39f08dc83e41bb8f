// Causal_Single_Head_Attention: softmax(Q K^T / sqrt(d)) V with a causal mask for one small head
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

constexpr int SEQ = 64;
constexpr int D = 32;

// One block per query row, one thread per key position.
__global__ void causal_attention(const float* q, const float* k, const float* v, float* out, int seq, int d, float scale) {
    __shared__ float p[64];
    __shared__ float red[64];
    const int i = blockIdx.x, j = threadIdx.x;
    float s = -INFINITY;
    if (j <= i) {
        s = 0.0f;
        for (int t = 0; t < d; ++t) s += q[i * d + t] * k[j * d + t];
        s *= scale;
    }
    red[j] = s;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (j < h) red[j] = fmaxf(red[j], red[j + h]);
        __syncthreads();
    }
    const float m = red[0];
    __syncthreads();
    const float e = j <= i ? expf(s - m) : 0.0f;
    p[j] = e;
    red[j] = e;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (j < h) red[j] += red[j + h];
        __syncthreads();
    }
    const float inv = 1.0f / red[0];
    if (j < d) {
        float acc = 0.0f;
        for (int t = 0; t <= i; ++t) acc += p[t] * v[t * d + j];
        out[i * d + j] = acc * inv;
    }
}

int main() {
    std::vector<float> h_q = load_array<float>("data/q.bin", SEQ * D);
    std::vector<float> h_k = load_array<float>("data/k.bin", SEQ * D);
    std::vector<float> h_v = load_array<float>("data/v.bin", SEQ * D);
    float* d_q = nullptr;
    CHECK_CUDA(cudaMalloc(&d_q, h_q.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_q, h_q.data(), h_q.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_k = nullptr;
    CHECK_CUDA(cudaMalloc(&d_k, h_k.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_k, h_k.data(), h_k.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_v = nullptr;
    CHECK_CUDA(cudaMalloc(&d_v, h_v.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_v, h_v.data(), h_v.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_out(SEQ * D);
    float* d_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_out, h_out.size() * sizeof(float)));

    causal_attention<<<SEQ, SEQ>>>(d_q, d_k, d_v, d_out, SEQ, D, 1.0f / sqrtf((float)D));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/out.bin", h_out);
    CHECK_CUDA(cudaFree(d_q));
    CHECK_CUDA(cudaFree(d_k));
    CHECK_CUDA(cudaFree(d_v));
    CHECK_CUDA(cudaFree(d_out));
    return 0;
}
