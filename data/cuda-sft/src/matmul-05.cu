/*@prompt
Linear layer in double precision: Y = X * W^T where X is [B=512, in=768] and W is [out=1000, in=768], both row-major (the PyTorch nn.Linear layout). Write a templated shared-memory tiled kernel (template over the element type and tile size) that reads W without transposing it first, and test the double instantiation.
@explanation
Because `W` is stored as [out, in], the element `W^T[k][n]` is `W[n][k]`: when a block loads its tile of W^T, the threads that vary fastest (`threadIdx.x`) should step along k, the contiguous dimension of W, so the global reads stay coalesced. The kernel therefore loads the W tile with `threadIdx.x` on k and writes it to shared memory transposed (`Ws[k][n]`), so the inner product loop reads `Xs[ty][k] * Ws[k][tx]` exactly like an ordinary tiled matmul. The `+1` column of padding on `Ws` keeps the transposed store from hitting one shared-memory bank 16 times. The element type and tile size are template parameters; `linear_tiled<double, 16>` is instantiated by the launch. Every 4th batch row is compared with the CPU product; the tolerance is twice the double-precision dot-product error bound, 2 * in * 2^-53 * sum |x * w|, since both the GPU and the CPU reference round.
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

// Y[b][n] = sum_k X[b][k] * W[n][k]
template <typename T, int TILE>
__global__ void linear_tiled(const T* __restrict__ X, const T* __restrict__ W, T* __restrict__ Y,
                             int batch, int in_f, int out_f)
{
    __shared__ T Xs[TILE][TILE];
    __shared__ T Ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b = blockIdx.y * TILE + ty;    // output row
    const int n = blockIdx.x * TILE + tx;    // output column
    const int n_load = blockIdx.x * TILE + ty;  // W row loaded by this thread

    T acc = 0;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        Xs[ty][tx] = (b < batch && k0 + tx < in_f) ? X[(size_t)b * in_f + k0 + tx] : T(0);
        Ws[tx][ty] = (n_load < out_f && k0 + tx < in_f) ? W[(size_t)n_load * in_f + k0 + tx] : T(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += Xs[ty][k] * Ws[k][tx];
        __syncthreads();
    }
    if (b < batch && n < out_f) Y[(size_t)b * out_f + n] = acc;
}

int main()
{
    const int batch = 512, in_f = 768, out_f = 1000;
    constexpr int TILE = 16;
    std::vector<double> X((size_t)batch * in_f), W((size_t)out_f * in_f), Y((size_t)batch * out_f);
    for (size_t i = 0; i < X.size(); ++i) X[i] = std::sin(0.001 * (double)i);
    for (size_t i = 0; i < W.size(); ++i) W[i] = 0.05 * std::cos(0.0031 * (double)i);

    double *dX, *dW, *dY;
    CUDA_CHECK(cudaMalloc(&dX, X.size() * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dW, W.size() * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dY, Y.size() * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dX, X.data(), X.size() * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dW, W.data(), W.size() * sizeof(double), cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((out_f + TILE - 1) / TILE, (batch + TILE - 1) / TILE);
    linear_tiled<double, TILE><<<grid, block>>>(dX, dW, dY, batch, in_f, out_f);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(Y.data(), dY, Y.size() * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(dX); cudaFree(dW); cudaFree(dY);

    long bad = 0;
    const double u = std::ldexp(1.0, -53);
    for (int b = 0; b < batch; b += 4)  // every 4th row of the batch
        for (int n = 0; n < out_f; ++n) {
            double ref = 0.0, mag = 0.0;
            for (int k = 0; k < in_f; ++k) {
                double p = X[(size_t)b * in_f + k] * W[(size_t)n * in_f + k];
                ref += p;
                mag += std::fabs(p);
            }
            if (!(std::fabs(Y[(size_t)b * out_f + n] - ref) <= 2.0 * in_f * u * mag)) ++bad;
        }
    if (bad) {
        printf("FAIL: %ld entries\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
