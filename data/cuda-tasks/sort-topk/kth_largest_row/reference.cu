// Tenth_Largest_Per_Row: the 10th largest value of each row
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

constexpr int ROWS = 256;
constexpr int COLS = 100;

// One block per row, one thread per element: the element with exactly 9 larger values is the answer.
__global__ void kth_largest(const float* x, float* kth, int cols, int k) {
    __shared__ float row[128];
    const int t = threadIdx.x;
    if (t < cols) row[t] = x[blockIdx.x * cols + t];
    __syncthreads();
    if (t >= cols) return;
    int larger = 0;
    for (int j = 0; j < cols; ++j) larger += row[j] > row[t];
    if (larger == k - 1) kth[blockIdx.x] = row[t];
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", ROWS * COLS);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_kth(ROWS);
    float* d_kth = nullptr;
    CHECK_CUDA(cudaMalloc(&d_kth, h_kth.size() * sizeof(float)));

    kth_largest<<<ROWS, 128>>>(d_x, d_kth, COLS, 10);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_kth.data(), d_kth, h_kth.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/kth.bin", h_kth);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_kth));
    return 0;
}
