// Symmetric_Part_Of_Square_Matrix: (A + A^T) / 2 of a square matrix, reading the transposed element through a shared tile
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

constexpr int N = 128;

#define TILE 32
// Block (bx, by) reads tile (by, bx) of A transposed through shared memory and adds tile (bx, by).
__global__ void symmetric_part(const float* A, float* S, int n) {
    __shared__ float t[TILE][TILE + 1];
    const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += blockDim.y)  // mirrored tile, coalesced: A[bx*T + ty + j][by*T + tx]
        t[threadIdx.y + j][threadIdx.x] = A[(blockIdx.x * TILE + threadIdx.y + j) * n + blockIdx.y * TILE + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < TILE; j += blockDim.y) {
        const int r = y + j;
        // A^T[r][x] = A[x][r] = t[x - bx*T][r - by*T]
        S[r * n + x] = 0.5f * (A[r * n + x] + t[threadIdx.x][threadIdx.y + j]);
    }
}

int main() {
    std::vector<float> h_A = load_array<float>("data/A.bin", N * N);
    float* d_A = nullptr;
    CHECK_CUDA(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_S(N * N);
    float* d_S = nullptr;
    CHECK_CUDA(cudaMalloc(&d_S, h_S.size() * sizeof(float)));

    dim3 block(TILE, 8);
    dim3 grid(N / TILE, N / TILE);
    symmetric_part<<<grid, block>>>(d_A, d_S, N);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_S.data(), d_S, h_S.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/S.bin", h_S);
    CHECK_CUDA(cudaFree(d_A));
    CHECK_CUDA(cudaFree(d_S));
    return 0;
}
