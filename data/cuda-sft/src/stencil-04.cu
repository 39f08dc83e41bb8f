/*@prompt
Conway's Game of Life on a 512x512 torus (wrap-around edges) in CUDA. Each generation should load a 16x16 tile plus a one-cell halo into shared memory. Run 60 generations and verify against a CPU implementation.
@explanation
A cell's next state depends on its 3x3 neighbourhood, so a 16x16 block stages an 18x18 tile in shared memory: the 256 threads fill the 324 cells with a strided loop, each computing the global coordinates of its tile cell with wrap-around (`(x + n) % n`), which implements the torus without special edge cases. After `__syncthreads()` every thread counts its eight neighbours from shared memory and applies the rules (a live cell with 2 or 3 neighbours survives, a dead cell with exactly 3 is born). Generations ping-pong between two buffers, so a launch never reads cells it is overwriting. The board starts from a deterministic pseudo-random pattern plus a glider; the state is discrete, so after 60 generations it must match the CPU exactly.
@*/
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                         \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

constexpr int B = 16;

__global__ void life_step(const unsigned char* __restrict__ cur, unsigned char* __restrict__ next, int n)
{
    __shared__ unsigned char tile[B + 2][B + 2];
    const int x0 = blockIdx.x * B - 1, y0 = blockIdx.y * B - 1;  // global coords of tile[0][0]
    const int tid = threadIdx.y * B + threadIdx.x;
    for (int k = tid; k < (B + 2) * (B + 2); k += B * B) {
        int ty = k / (B + 2), tx = k % (B + 2);
        int gx = (x0 + tx + n) % n, gy = (y0 + ty + n) % n;
        tile[ty][tx] = cur[gy * n + gx];
    }
    __syncthreads();

    const int x = blockIdx.x * B + threadIdx.x, y = blockIdx.y * B + threadIdx.y;
    if (x >= n || y >= n) return;
    const int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    int live = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            if (dx || dy) live += tile[ly + dy][lx + dx];
    unsigned char alive = tile[ly][lx];
    next[y * n + x] = (live == 3 || (alive && live == 2)) ? 1 : 0;
}

static void life_cpu(const std::vector<unsigned char>& cur, std::vector<unsigned char>& next, int n)
{
    for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
            int live = 0;
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx)
                    if (dx || dy) live += cur[((y + dy + n) % n) * n + (x + dx + n) % n];
            next[y * n + x] = (live == 3 || (cur[y * n + x] && live == 2)) ? 1 : 0;
        }
}

int main()
{
    const int n = 512, generations = 60;
    std::vector<unsigned char> board(n * n);
    unsigned s = 2024u;
    for (auto& c : board) { s = s * 1664525u + 1013904223u; c = (s >> 28) < 5 ? 1 : 0; }
    const int glider[5][2] = {{1, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};
    for (int y = 250; y < 260; ++y) for (int x = 250; x < 260; ++x) board[y * n + x] = 0;
    for (auto& g : glider) board[(251 + g[1]) * n + 251 + g[0]] = 1;

    unsigned char *d_a, *d_b;
    CUDA_CHECK(cudaMalloc(&d_a, n * n));
    CUDA_CHECK(cudaMalloc(&d_b, n * n));
    CUDA_CHECK(cudaMemcpy(d_a, board.data(), n * n, cudaMemcpyHostToDevice));
    dim3 block(B, B);
    dim3 grid((n + B - 1) / B, (n + B - 1) / B);
    for (int g = 0; g < generations; ++g) {
        life_step<<<grid, block>>>(d_a, d_b, n);
        std::swap(d_a, d_b);
    }
    CUDA_CHECK(cudaGetLastError());
    std::vector<unsigned char> gpu(n * n);
    CUDA_CHECK(cudaMemcpy(gpu.data(), d_a, n * n, cudaMemcpyDeviceToHost));
    cudaFree(d_a);
    cudaFree(d_b);

    std::vector<unsigned char> next(n * n);
    for (int g = 0; g < generations; ++g) {
        life_cpu(board, next, n);
        std::swap(board, next);
    }
    long diff = 0, alive = 0;
    for (int i = 0; i < n * n; ++i) { diff += gpu[i] != board[i]; alive += board[i]; }
    printf("%ld live cells after %d generations\n", alive, generations);
    if (diff) {
        printf("FAIL: %ld cells differ\n", diff);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
