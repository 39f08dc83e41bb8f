// Two_Pass_Min_And_Max: the minimum and the maximum of a vector, with per-block partials and a second pass
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

constexpr int N = 50000;
constexpr int BLOCKS = 50;

// Pass 1 (BLOCKS blocks): each block writes its min and max to partial[2*b], partial[2*b+1].
// Pass 2 (one block): reduces the partials into extrema = {min, max}.
__global__ void min_max(const float* x, float* out, int n, int stride_in) {
    __shared__ float lo[256], hi[256];
    const int t = threadIdx.x;
    float a = INFINITY, b = -INFINITY;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) {
        a = fminf(a, x[i * stride_in]);
        b = fmaxf(b, x[i * stride_in + (stride_in - 1)]);
    }
    lo[t] = a;
    hi[t] = b;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            lo[t] = fminf(lo[t], lo[t + s]);
            hi[t] = fmaxf(hi[t], hi[t + s]);
        }
        __syncthreads();
    }
    if (t == 0) {
        out[2 * blockIdx.x] = lo[0];
        out[2 * blockIdx.x + 1] = hi[0];
    }
}

int main() {
    std::vector<float> h_x = load_array<float>("data/x.bin", N);
    float* d_x = nullptr;
    CHECK_CUDA(cudaMalloc(&d_x, h_x.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_x, h_x.data(), h_x.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_extrema(2);
    float* d_extrema = nullptr;
    CHECK_CUDA(cudaMalloc(&d_extrema, h_extrema.size() * sizeof(float)));

    float* d_partial = nullptr;
    CHECK_CUDA(cudaMalloc(&d_partial, 2 * BLOCKS * sizeof(float)));
    min_max<<<BLOCKS, 256>>>(d_x, d_partial, N, 1);        // a single value is both min and max
    min_max<<<1, 256>>>(d_partial, d_extrema, BLOCKS, 2);  // pairs (min, max)
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaFree(d_partial));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_extrema.data(), d_extrema, h_extrema.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/extrema.bin", h_extrema);
    CHECK_CUDA(cudaFree(d_x));
    CHECK_CUDA(cudaFree(d_extrema));
    return 0;
}
