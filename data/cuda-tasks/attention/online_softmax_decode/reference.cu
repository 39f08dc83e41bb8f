// Single_Query_Online_Softmax_Decode: one decoding step of attention per head: a single query against 256 cached keys and values, with an online softmax
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

constexpr int HEADS = 8;
constexpr int CTX = 256;
constexpr int D = 64;

// One block of 64 threads per head; thread t owns output feature t. For each key the block computes
// the score with a shared-memory reduction, then every thread updates its running maximum m,
// normaliser l and accumulator with the online-softmax recurrence.
__global__ void decode_attention(const float* q, const float* k_cache, const float* v_cache, float* out,
                                 int ctx, int d, float scale) {
    __shared__ float qs[64];
    __shared__ float red[64];
    const int h = blockIdx.x, t = threadIdx.x;
    qs[t] = q[h * d + t];
    __syncthreads();
    float m = -INFINITY, l = 0.0f, acc = 0.0f;
    for (int c = 0; c < ctx; ++c) {
        const size_t row = ((size_t)h * ctx + c) * d;
        red[t] = qs[t] * k_cache[row + t];
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (t < s) red[t] += red[t + s];
            __syncthreads();
        }
        const float score = red[0] * scale;
        __syncthreads();  // red is reused by the next key
        const float m_new = fmaxf(m, score);
        const float corr = expf(m - m_new);
        const float p = expf(score - m_new);
        l = l * corr + p;
        acc = acc * corr + p * v_cache[row + t];
        m = m_new;
    }
    out[h * d + t] = acc / l;
}

int main() {
    std::vector<float> h_q = load_array<float>("data/q.bin", HEADS * D);
    std::vector<float> h_k_cache = load_array<float>("data/k_cache.bin", HEADS * CTX * D);
    std::vector<float> h_v_cache = load_array<float>("data/v_cache.bin", HEADS * CTX * D);
    float* d_q = nullptr;
    CHECK_CUDA(cudaMalloc(&d_q, h_q.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_q, h_q.data(), h_q.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_k_cache = nullptr;
    CHECK_CUDA(cudaMalloc(&d_k_cache, h_k_cache.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_k_cache, h_k_cache.data(), h_k_cache.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_v_cache = nullptr;
    CHECK_CUDA(cudaMalloc(&d_v_cache, h_v_cache.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_v_cache, h_v_cache.data(), h_v_cache.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_out(HEADS * D);
    float* d_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_out, h_out.size() * sizeof(float)));

    decode_attention<<<HEADS, D>>>(d_q, d_k_cache, d_v_cache, d_out, CTX, D, 0.125f);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/out.bin", h_out);
    CHECK_CUDA(cudaFree(d_q));
    CHECK_CUDA(cudaFree(d_k_cache));
    CHECK_CUDA(cudaFree(d_v_cache));
    CHECK_CUDA(cudaFree(d_out));
    return 0;
}
