/*@prompt
Compute the total softened gravitational potential energy U = -sum_{i<j} m_i m_j / sqrt(|r_i - r_j|^2 + eps^2) of 12,000 bodies in double precision on the GPU. Each thread should handle one body i, the result has to be reduced across the whole grid.
@explanation
Summing only over j > i would give thread i a workload of N - i - 1 pairs, so early threads would do almost everything while late ones idle. Instead every thread sums over all j != i, which balances the work perfectly, and the total is halved at the end because each pair is then counted twice. The kernel is marked `__launch_bounds__(256)` to tell the compiler the block size it must fit in registers; with doubles this keeps register pressure predictable. Per-thread partial energies are reduced per warp with `__shfl_down_sync` (a double is shuffled as two 32-bit halves by the intrinsic), then across the block in shared memory, and one `atomicAdd` on a double per block accumulates the grid total. The CPU sums the i < j pairs directly; the two results must agree to a relative 1e-10, the only difference being summation order.
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

constexpr int THREADS = 256;

struct Body { double x, y, z, m; };  // 32 bytes; double4 is deprecated in CUDA 13

__global__ void __launch_bounds__(THREADS)
potential_energy(const Body* __restrict__ body, int n, double eps2, double* __restrict__ total)
{
    __shared__ double warp_sum[THREADS / 32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    double u = 0.0;
    if (i < n) {
        const Body bi = body[i];
        for (int j = 0; j < n; ++j) {
            if (j == i) continue;
            const Body bj = body[j];
            const double dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
            u -= bi.m * bj.m * rsqrt(dx * dx + dy * dy + dz * dz + eps2);
        }
    }
    for (int off = 16; off > 0; off >>= 1) u += __shfl_down_sync(0xffffffff, u, off);
    if ((threadIdx.x & 31) == 0) warp_sum[threadIdx.x >> 5] = u;
    __syncthreads();
    if (threadIdx.x == 0) {
        double block_total = 0.0;
        for (int w = 0; w < THREADS / 32; ++w) block_total += warp_sum[w];
        atomicAdd(total, 0.5 * block_total);  // every pair was counted twice
    }
}

int main()
{
    const int n = 12000;
    const double eps2 = 1e-4;
    std::vector<Body> body(n);
    for (int i = 0; i < n; ++i) {
        double t = 0.37 * i;
        body[i] = Body{std::cos(t) * (1 + 0.001 * (i % 3)), std::sin(1.3 * t), std::sin(0.7 * t) * std::cos(t),
                       1.0 + (i % 10) * 0.1};
    }
    Body* d_body;
    double* d_total;
    CUDA_CHECK(cudaMalloc(&d_body, n * sizeof(Body)));
    CUDA_CHECK(cudaMalloc(&d_total, sizeof(double)));
    CUDA_CHECK(cudaMemcpy(d_body, body.data(), n * sizeof(Body), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_total, 0, sizeof(double)));
    potential_energy<<<(n + THREADS - 1) / THREADS, THREADS>>>(d_body, n, eps2, d_total);
    CUDA_CHECK(cudaGetLastError());
    double gpu = 0.0;
    CUDA_CHECK(cudaMemcpy(&gpu, d_total, sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(d_body);
    cudaFree(d_total);

    double ref = 0.0;
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
            double dx = body[j].x - body[i].x, dy = body[j].y - body[i].y, dz = body[j].z - body[i].z;
            ref -= body[i].m * body[j].m / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
        }
    printf("U gpu %.12e cpu %.12e\n", gpu, ref);
    if (!(std::fabs(gpu - ref) <= 1e-10 * std::fabs(ref))) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
