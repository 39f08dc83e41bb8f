/*@prompt
Compute the Euclidean (L2) norm of a float vector of 10 million elements on the GPU. Accumulate the sum of squares in double to keep precision, and take the square root at the end.
@explanation
The norm is `sqrt(sum x_i^2)`. Each thread squares and accumulates its grid-stride slice in a double register, so the long sum does not lose the small terms; a warp shuffle reduction and a shared-memory step combine the block, and one `atomicAdd` on a double (supported in hardware since compute capability 6.0) adds the block total to the global accumulator. A second, one-thread launch takes the square root on the device so the result never has to be post-processed by the host. Both sides accumulate in double, so the check is a tight relative tolerance of 1e-10 (the only difference is the order of ten million double additions).
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

__device__ double warp_reduce(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffff, v, offset);
    return v;
}

__global__ void sum_squares(const float* __restrict__ x, double* __restrict__ acc, int n)
{
    __shared__ double warp_sums[32];
    double s = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double v = x[i];
        s += v * v;
    }
    s = warp_reduce(s);  // every lane now holds the warp total
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.0;
        s = warp_reduce(s);
        if (threadIdx.x == 0) atomicAdd(acc, s);
    }
}

__global__ void finish_sqrt(const double* acc, double* norm)
{
    *norm = sqrt(*acc);
}

int main()
{
    const int n = 10000000;
    std::vector<float> x(n);
    double ref_sq = 0.0;
    for (int i = 0; i < n; ++i) {
        x[i] = 1e-3f * (float)((i * 31) % 2001 - 1000);
        ref_sq += (double)x[i] * x[i];
    }
    const double ref = std::sqrt(ref_sq);

    float* dx;
    double *dacc, *dnorm;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dacc, sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dnorm, sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dacc, 0, sizeof(double)));

    sum_squares<<<640, 256>>>(dx, dacc, n);
    CUDA_CHECK(cudaGetLastError());
    finish_sqrt<<<1, 1>>>(dacc, dnorm);
    CUDA_CHECK(cudaGetLastError());

    double got = 0.0;
    CUDA_CHECK(cudaMemcpy(&got, dnorm, sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dacc); cudaFree(dnorm);

    printf("||x|| = %.12f (cpu %.12f)\n", got, ref);
    if (!(std::fabs(got - ref) <= 1e-10 * ref)) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
