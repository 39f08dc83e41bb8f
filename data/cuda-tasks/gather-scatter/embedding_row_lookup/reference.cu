// Embedding_Table_Row_Lookup: gather rows of an embedding table by token id
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

constexpr int VOCAB = 512;
constexpr int DIM = 64;
constexpr int TOKENS = 1024;

__global__ void embed_lookup(const float* table, const int* ids, float* vectors, int dim) {
    const int token = blockIdx.x;
    const int row = ids[token];
    for (int d = threadIdx.x; d < dim; d += blockDim.x)
        vectors[(size_t)token * dim + d] = table[(size_t)row * dim + d];
}

int main() {
    std::vector<float> h_table = load_array<float>("data/table.bin", VOCAB * DIM);
    std::vector<int> h_ids = load_array<int>("data/ids.bin", TOKENS);
    float* d_table = nullptr;
    CHECK_CUDA(cudaMalloc(&d_table, h_table.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_table, h_table.data(), h_table.size() * sizeof(float), cudaMemcpyHostToDevice));
    int* d_ids = nullptr;
    CHECK_CUDA(cudaMalloc(&d_ids, h_ids.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_ids, h_ids.data(), h_ids.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_vectors(TOKENS * DIM);
    float* d_vectors = nullptr;
    CHECK_CUDA(cudaMalloc(&d_vectors, h_vectors.size() * sizeof(float)));

    embed_lookup<<<TOKENS, 64>>>(d_table, d_ids, d_vectors, DIM);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_vectors.data(), d_vectors, h_vectors.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/vectors.bin", h_vectors);
    CHECK_CUDA(cudaFree(d_table));
    CHECK_CUDA(cudaFree(d_ids));
    CHECK_CUDA(cudaFree(d_vectors));
    return 0;
}
