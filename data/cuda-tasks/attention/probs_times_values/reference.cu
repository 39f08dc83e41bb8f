// Attention_Probability_Value_Product: the attention output P V from a row-stochastic probability matrix and the values
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
__global__ void probs_values(const float* p, const float* v, float* out, int seq, int d) {
    __shared__ float ps[TILE][TILE];
    __shared__ float vs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < seq; k0 += TILE) {
        ps[threadIdx.y][threadIdx.x] = p[row * seq + k0 + threadIdx.x];
        vs[threadIdx.y][threadIdx.x] = v[(k0 + threadIdx.y) * d + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += ps[threadIdx.y][k] * vs[k][threadIdx.x];
        __syncthreads();
    }
    out[row * d + col] = acc;
}

int main() {
    std::vector<float> h_p = load_array<float>("data/p.bin", SEQ * SEQ);
    std::vector<float> h_v = load_array<float>("data/v.bin", SEQ * D);
    float* d_p = nullptr;
    CHECK_CUDA(cudaMalloc(&d_p, h_p.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_p, h_p.data(), h_p.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_v = nullptr;
    CHECK_CUDA(cudaMalloc(&d_v, h_v.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_v, h_v.data(), h_v.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_out(SEQ * D);
    float* d_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_out, h_out.size() * sizeof(float)));

    dim3 block(TILE, TILE);
    dim3 grid(D / TILE, SEQ / TILE);
    probs_values<<<grid, block>>>(d_p, d_v, d_out, SEQ, D);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/out.bin", h_out);
    CHECK_CUDA(cudaFree(d_p));
    CHECK_CUDA(cudaFree(d_v));
    CHECK_CUDA(cudaFree(d_out));
    return 0;
}
