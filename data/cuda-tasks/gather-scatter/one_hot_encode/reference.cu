// Class_Label_One_Hot: expand integer class labels into one-hot float32 rows
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

constexpr int N = 2048;
constexpr int CLASSES = 32;

__global__ void one_hot(const int* labels, float* onehot, int n, int classes) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;  // one thread per output element
    if (i >= n * classes) return;
    onehot[i] = (labels[i / classes] == i % classes) ? 1.0f : 0.0f;
}

int main() {
    std::vector<int> h_labels = load_array<int>("data/labels.bin", N);
    int* d_labels = nullptr;
    CHECK_CUDA(cudaMalloc(&d_labels, h_labels.size() * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(d_labels, h_labels.data(), h_labels.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::vector<float> h_onehot(N * CLASSES);
    float* d_onehot = nullptr;
    CHECK_CUDA(cudaMalloc(&d_onehot, h_onehot.size() * sizeof(float)));

    one_hot<<<(N * CLASSES + 255) / 256, 256>>>(d_labels, d_onehot, N, CLASSES);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_onehot.data(), d_onehot, h_onehot.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/onehot.bin", h_onehot);
    CHECK_CUDA(cudaFree(d_labels));
    CHECK_CUDA(cudaFree(d_onehot));
    return 0;
}
