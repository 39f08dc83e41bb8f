/*@prompt
Two-pass reduction in double precision without atomics: the first launch makes one partial sum per block, the second launch (a single block) reduces the partials. Use the same kernel for both passes and size its shared memory dynamically at launch.
@explanation
The kernel reduces `n` inputs into `gridDim.x` outputs: a grid-stride loop accumulates per thread, then a shared-memory tree reduces the block. Because the shared array is declared `extern __shared__ double sdata[]`, its size comes from the third launch parameter, `block * sizeof(double)`, so the same code works for any power-of-two block size. Pass one launches many blocks and writes one partial per block; pass two launches the same kernel with one block over those partials, producing the final value with no atomics and a deterministic result from run to run. The check is relative, 1e-12 of the sum of magnitudes.
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

// blockDim.x must be a power of two; dynamic shared memory holds blockDim.x doubles.
__global__ void reduce_pass(const double* __restrict__ in, double* __restrict__ out, int n)
{
    extern __shared__ double sdata[];
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += in[i];
    sdata[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sdata[0];
}

int main()
{
    const int n = 12345678;
    std::vector<double> h(n);
    double ref = 0.0, mag = 0.0;
    for (int i = 0; i < n; ++i) {
        h[i] = std::sin(1e-3 * i) / (1.0 + (i % 100));
        ref += h[i];
        mag += std::fabs(h[i]);
    }

    const int block = 512;
    const int grid = 1024;
    const size_t smem = block * sizeof(double);

    double *d_in, *d_partial, *d_result;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_partial, grid * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_result, sizeof(double)));
    CUDA_CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(double), cudaMemcpyHostToDevice));

    reduce_pass<<<grid, block, smem>>>(d_in, d_partial, n);    // n -> grid partials
    CUDA_CHECK(cudaGetLastError());
    reduce_pass<<<1, block, smem>>>(d_partial, d_result, grid);  // grid -> 1
    CUDA_CHECK(cudaGetLastError());

    double got = 0.0;
    CUDA_CHECK(cudaMemcpy(&got, d_result, sizeof(double), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_partial));
    CUDA_CHECK(cudaFree(d_result));

    double err = std::fabs(got - ref);
    printf("gpu %.15e cpu %.15e err %.2e\n", got, ref, err);
    if (!(err <= 1e-12 * mag)) {  // also fails on NaN
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
