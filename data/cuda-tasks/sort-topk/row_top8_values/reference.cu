// Warp_Row_Top_8: the 8 largest values of each row, in descending order, one warp per row
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
constexpr int COLS = 128;
constexpr int K = 8;

// One warp per row: each lane keeps 4 of the 128 values; K rounds of a warp-wide argmax, the
// winning lane retires its value.
__global__ void row_top8(const float* scores, float* top, int rows) {
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (warp >= rows) return;  // whole warps leave together
    float v[4];
    for (int j = 0; j < 4; ++j) v[j] = scores[warp * 128 + lane + 32 * j];
    for (int r = 0; r < 8; ++r) {
        int best_j = 0;
        for (int j = 1; j < 4; ++j)
            if (v[j] > v[best_j]) best_j = j;
        float best = v[best_j];
        int owner = lane;
        for (int off = 16; off > 0; off >>= 1) {
            const float other = __shfl_xor_sync(0xffffffffu, best, off);
            const int other_owner = __shfl_xor_sync(0xffffffffu, owner, off);
            if (other > best || (other == best && other_owner < owner)) {
                best = other;
                owner = other_owner;
            }
        }
        if (lane == owner) v[best_j] = -INFINITY;
        if (lane == 0) top[warp * 8 + r] = best;
    }
}

int main() {
    std::vector<float> h_scores = load_array<float>("data/scores.bin", ROWS * COLS);
    float* d_scores = nullptr;
    CHECK_CUDA(cudaMalloc(&d_scores, h_scores.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_scores, h_scores.data(), h_scores.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_top(ROWS * K);
    float* d_top = nullptr;
    CHECK_CUDA(cudaMalloc(&d_top, h_top.size() * sizeof(float)));

    row_top8<<<ROWS * 32 / 128, 128>>>(d_scores, d_top, ROWS);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_top.data(), d_top, h_top.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/top.bin", h_top);
    CHECK_CUDA(cudaFree(d_scores));
    CHECK_CUDA(cudaFree(d_top));
    return 0;
}
