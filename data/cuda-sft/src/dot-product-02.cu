/*@prompt
I have a batch of 4096 pairs of double-precision vectors, each of length 300, stored as two row-major [4096, 300] matrices. Compute all 4096 dot products. Use one warp per pair with cooperative groups (thread_block_tile<32> and its shfl_down), with several warps per block.
@explanation
A length-300 dot product is too short to be worth a whole block, so one 32-thread tile handles one pair: lane l reads elements l, l + 32, l + 64, ... of its two rows (contiguous, coalesced addresses) and accumulates a double. `tile.shfl_down` reduces the 32 lanes in five steps and lane 0 writes the result. Each 256-thread block carries 8 tiles, so the grid has `ceil(4096 / 8)` blocks; a tile whose pair index is past the batch returns as a unit, which is safe because no block-wide barrier follows. Summation order differs from the CPU loop, so the check allows 1e-12 relative to the sum of |x_k * y_k| of each row.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                         \
                    cudaGetErrorString(err_), __FILE__, __LINE__);              \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

__global__ void batched_dot(const double* __restrict__ X, const double* __restrict__ Y,
                            double* __restrict__ out, int batch, int len)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const int pair = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (pair >= batch) return;  // whole tile leaves together

    const double* x = X + (size_t)pair * len;
    const double* y = Y + (size_t)pair * len;
    double acc = 0.0;
    for (int k = warp.thread_rank(); k < len; k += warp.size()) acc += x[k] * y[k];
    for (int offset = warp.size() / 2; offset > 0; offset /= 2) acc += warp.shfl_down(acc, offset);
    if (warp.thread_rank() == 0) out[pair] = acc;
}

int main()
{
    const int batch = 4096, len = 300;
    std::vector<double> X((size_t)batch * len), Y((size_t)batch * len), out(batch);
    for (int b = 0; b < batch; ++b)
        for (int k = 0; k < len; ++k) {
            X[(size_t)b * len + k] = std::sin(0.01 * (b + 3 * k));
            Y[(size_t)b * len + k] = 1.0 / (1 + ((b * 7 + k) % 29));
        }

    double *dX, *dY, *dOut;
    size_t bytes = (size_t)batch * len * sizeof(double);
    CUDA_CHECK(cudaMalloc(&dX, bytes));
    CUDA_CHECK(cudaMalloc(&dY, bytes));
    CUDA_CHECK(cudaMalloc(&dOut, batch * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dX, X.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dY, Y.data(), bytes, cudaMemcpyHostToDevice));

    const int threads = 256;  // 8 warps per block
    const int warps_per_block = threads / 32;
    const int blocks = (batch + warps_per_block - 1) / warps_per_block;
    batched_dot<<<blocks, threads>>>(dX, dY, dOut, batch, len);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), dOut, batch * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(dX); cudaFree(dY); cudaFree(dOut);

    int bad = 0;
    for (int b = 0; b < batch; ++b) {
        double ref = 0.0, mag = 0.0;
        for (int k = 0; k < len; ++k) {
            double p = X[(size_t)b * len + k] * Y[(size_t)b * len + k];
            ref += p;
            mag += std::fabs(p);
        }
        if (!(std::fabs(out[b] - ref) <= 1e-12 * mag + 1e-300)) ++bad;
    }
    if (bad) {
        printf("FAIL: %d of %d dot products wrong\n", bad, batch);
        return 1;
    }
    printf("PASS: %d dot products\n", batch);
    return 0;
}
