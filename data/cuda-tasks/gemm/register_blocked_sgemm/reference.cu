// Register_Blocked_Sgemm_4x4: 128 x 128 matrix product, 64 x 64 block tiles, each thread computing a 4 x 4 sub-tile
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

constexpr int M = 128;
constexpr int K = 64;
constexpr int N = 128;

#define BT 64  // block tile (BT x BT of C)
#define KT 16  // depth of a shared-memory stage
// 16 x 16 threads per block; thread (tx, ty) owns rows ty + 16 i and columns tx + 16 j (i, j < 4).
__global__ void sgemm_reg4x4(const float* A, const float* B, float* C, int m, int n, int k) {
    __shared__ float As[BT][KT + 1];
    __shared__ float Bs[KT][BT];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const int row0 = blockIdx.y * BT, col0 = blockIdx.x * BT;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < k; k0 += KT) {
        for (int e = tid; e < BT * KT; e += 256) {  // 1024 elements of each tile, 4 per thread
            As[e / KT][e % KT] = A[(row0 + e / KT) * k + k0 + e % KT];
            Bs[e / BT][e % BT] = B[(k0 + e / BT) * n + col0 + e % BT];
        }
        __syncthreads();
        for (int kk = 0; kk < KT; ++kk) {
            float a[4], b[4];
            for (int i = 0; i < 4; ++i) a[i] = As[ty + 16 * i][kk];
            for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) C[(row0 + ty + 16 * i) * n + col0 + tx + 16 * j] = acc[i][j];
}

int main() {
    std::vector<float> h_A = load_array<float>("data/A.bin", M * K);
    std::vector<float> h_B = load_array<float>("data/B.bin", K * N);
    float* d_A = nullptr;
    CHECK_CUDA(cudaMalloc(&d_A, h_A.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_A, h_A.data(), h_A.size() * sizeof(float), cudaMemcpyHostToDevice));
    float* d_B = nullptr;
    CHECK_CUDA(cudaMalloc(&d_B, h_B.size() * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_B, h_B.data(), h_B.size() * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> h_C(M * N);
    float* d_C = nullptr;
    CHECK_CUDA(cudaMalloc(&d_C, h_C.size() * sizeof(float)));

    dim3 block(16, 16);
    dim3 grid(N / BT, M / BT);
    sgemm_reg4x4<<<grid, block>>>(d_A, d_B, d_C, M, N, K);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());

    CHECK_CUDA(cudaMemcpy(h_C.data(), d_C, h_C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    store_array("data/C.bin", h_C);
    CHECK_CUDA(cudaFree(d_A));
    CHECK_CUDA(cudaFree(d_B));
    CHECK_CUDA(cudaFree(d_C));
    return 0;
}
