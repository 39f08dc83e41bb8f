/*@prompt
Optimise the all-pairs N-body acceleration kernel (N = 8192, float4 positions with mass in w, softening eps^2 = 1e-4) with shared-memory tiling: each block loads a tile of bodies into shared memory, all its threads compute interactions against the tile, then move to the next tile.
@explanation
With tiling, the block's threads cooperatively load `blockDim.x` bodies (one each) into shared memory, synchronise, and every thread accumulates the interactions of its own body with the whole tile from shared memory before the next tile is loaded; global loads drop by a factor of the block size, and shared-memory reads are broadcasts because all threads read the same `tile[j]`. The inner loop is unrolled by 8 to amortise loop overhead around the ~20 floating-point operations per interaction. A second `__syncthreads()` guards the tile against being overwritten while slow threads still use it. The last tile may be partial when N is not a multiple of the block size; out-of-range slots are filled with a zero-mass body, so they contribute exactly nothing and the unrolled loop needs no bounds check. Every body is checked against double precision with 1e-4 of the sum of contribution magnitudes.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

constexpr int TILE = 256;

__global__ void accelerations_tiled(const float4* __restrict__ body, float4* __restrict__ acc, int n, float eps2)
{
    __shared__ float4 tile[TILE];
    const int i = blockIdx.x * TILE + threadIdx.x;
    const float4 bi = (i < n) ? body[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float ax = 0.f, ay = 0.f, az = 0.f;
    for (int base = 0; base < n; base += TILE) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = (j < n) ? body[j] : make_float4(0.f, 0.f, 0.f, 0.f);  // zero mass: no force
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) {
            const float4 bj = tile[k];
            const float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
            const float inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
            const float f = bj.w * inv * inv * inv;
            ax += f * dx; ay += f * dy; az += f * dz;
        }
        __syncthreads();
    }
    if (i < n) acc[i] = make_float4(ax, ay, az, 0.f);
}

int main()
{
    const int n = 8192 + 100;  // not a multiple of the tile
    const float eps2 = 1e-4f;
    std::vector<float4> body(n), acc(n);
    for (int i = 0; i < n; ++i) {
        float t = 0.001f * i;
        body[i] = make_float4(std::cos(7 * t) * (1 + 0.1f * std::sin(t)), std::sin(7 * t), 0.2f * std::sin(3 * t),
                              1.0f / n);
    }
    float4 *d_body, *d_acc;
    CUDA_CHECK(cudaMalloc(&d_body, n * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&d_acc, n * sizeof(float4)));
    CUDA_CHECK(cudaMemcpy(d_body, body.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    accelerations_tiled<<<(n + TILE - 1) / TILE, TILE>>>(d_body, d_acc, n, eps2);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(acc.data(), d_acc, n * sizeof(float4), cudaMemcpyDeviceToHost));
    cudaFree(d_body);
    cudaFree(d_acc);

    long bad = 0;
    for (int i = 0; i < n; ++i) {
        double a[3] = {0, 0, 0}, m[3] = {0, 0, 0};
        for (int j = 0; j < n; ++j) {
            double d[3] = {(double)body[j].x - body[i].x, (double)body[j].y - body[i].y, (double)body[j].z - body[i].z};
            double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
            double f = body[j].w / (d2 * std::sqrt(d2));
            for (int c = 0; c < 3; ++c) { a[c] += f * d[c]; m[c] += std::fabs(f * d[c]); }
        }
        const float got[3] = {acc[i].x, acc[i].y, acc[i].z};
        for (int c = 0; c < 3; ++c) bad += !(std::fabs(got[c] - a[c]) <= 1e-4 * m[c]);
    }
    if (bad) {
        printf("FAIL: %ld components\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
