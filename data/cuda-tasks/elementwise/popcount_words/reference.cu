// Set_Bit_Count_Per_Word: the number of set bits of every 32-bit word
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

constexpr int N = 16384;

__global__ void count_bits(const unsigned int* words, int* bits, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) bits[i] = __popc(words[i]);
}

int main() {
    std::vector<unsigned int> h_words = load_array<unsigned int>("data/words.bin", N);
    unsigned int* d_words = nullptr;
    CHECK_CUDA(cudaMalloc(&d_words, h_words.size() * sizeof(unsigned int)));
    CHECK_CUDA(cudaMemcpy(d_words, h_words.data(), h_words.size() * sizeof(unsigned int), cudaMemcpyHostToDevice));
    std::vector<int> h_bits(N);
    int* d_bits = nullptr;
    CHECK_CUDA(cudaMalloc(&d_bits, h_bits.size() * sizeof(int)));

    count_bits<<<(N + 255) / 256, 256>>>(d_words, d_bits, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_bits.data(), d_bits, h_bits.size() * sizeof(int), cudaMemcpyDeviceToHost));
    store_array("data/bits.bin", h_bits);
    CHECK_CUDA(cudaFree(d_words));
    CHECK_CUDA(cudaFree(d_bits));
    return 0;
}
