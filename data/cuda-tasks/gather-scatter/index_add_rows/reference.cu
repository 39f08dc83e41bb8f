// Row_Index_Add_Accumulate: add rows of a source matrix into the destination rows an index names, with atomics
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

constexpr int DST_ROWS = 64;
constexpr int SRC_ROWS = 1024;
constexpr int DIM = 32;

__global__ void index_add(const float* src, const int* index, float* out, int src_rows, int dim) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= src_rows * dim) return;
    const int r = i / dim, d = i % dim;
    atomicAdd(&out[index[r] * dim + d], src[i]);
}

int main() {
    std::vector<float> h_base = load_array<float>("data/base.bin", DST_ROWS * DIM);
    std::vector<float> h_src = load_array<float>("data/src.bin", SRC_ROWS * DIM);
    std::vector<int> h_index = load_array<int>("data/index.bin", SRC_ROWS);
    float* d_base = nullptr;
    CHECK_CUDA(cudaMalloc(&d_base, h_base.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_base, h_base.data(), h_base.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_src = nullptr;
    CHECK_CUDA(cudaMalloc(&d_src, h_src.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_src, h_src.data(), h_src.size() * sizeof(float), cudaMemcpyHostToDevice));
    int* d_index = nullptr;
    CHECK_CUDA(cudaMalloc(&d_index, h_index.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_index, h_index.data(), h_index.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_out(DST_ROWS * DIM);
    float* d_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_out, h_out.size() * sizeof(float)));

    CHECK_CUDA(cudaMemcpy(d_out, d_base, DST_ROWS * DIM * sizeof(float), cudaMemcpyDeviceToDevice));
    index_add<<<(SRC_ROWS * DIM + 255) / 256, 256>>>(d_src, d_index, d_out, SRC_ROWS, DIM);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_out.data(), d_out, h_out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/out.bin", h_out);
    CHECK_CUDA(cudaFree(d_base));
    CHECK_CUDA(cudaFree(d_src));
    CHECK_CUDA(cudaFree(d_index));
    CHECK_CUDA(cudaFree(d_out));
    return 0;
}
