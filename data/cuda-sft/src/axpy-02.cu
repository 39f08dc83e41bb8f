/*@prompt
Implement DAXPY (double precision y = alpha*x + y) in CUDA for a vector of 5 million elements. Use a grid-stride loop with 512-thread blocks and mark the kernel with __launch_bounds__ so the compiler knows the maximum block size. Size the grid from the number of SMs.
@explanation
`__launch_bounds__(512)` promises the compiler that the kernel is never launched with more than 512 threads per block, so it can budget registers for that block size instead of the 1024-thread worst case. The grid-stride loop lets a grid of a few blocks per SM (read from `cudaDevAttrMultiProcessorCount`) sweep the whole vector: each thread starts at its global index and advances by the total number of threads in the grid, keeping accesses coalesced on every pass. The launch size must respect the bound, so the host uses the same constant for both.
@after
If you raise the block size above 512 later, change `kBlock` once: the launch and the `__launch_bounds__` promise must stay in agreement, or the launch fails with an error.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess) {                                             \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                        \
                    cudaGetErrorString(err_), __FILE__, __LINE__);             \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

constexpr int kBlock = 512;

__global__ void __launch_bounds__(kBlock)
daxpy_grid_stride(long long n, double alpha, const double* __restrict__ x, double* __restrict__ y)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fma(alpha, x[i], y[i]);
    }
}

int main()
{
    const long long n = 5000000;
    const double alpha = -0.75;
    std::vector<double> x(n), y(n), out(n);
    for (long long i = 0; i < n; ++i) {
        x[i] = 1.0 / (1.0 + (double)(i % 1000));
        y[i] = (double)(i % 17) * 0.125;
    }

    double *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(double), cudaMemcpyHostToDevice));

    int dev = 0, num_sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, dev));
    int grid = 8 * num_sms;
    daxpy_grid_stride<<<grid, kBlock>>>(n, alpha, dx, dy);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), dy, n * sizeof(double), cudaMemcpyDeviceToHost));

    long long bad = 0;
    for (long long i = 0; i < n; ++i) {
        double ref = std::fma(alpha, x[i], y[i]);
        if (!(fabs(out[i] - ref) <= 1e-14 * (1.0 + fabs(ref)))) ++bad;
    }
    cudaFree(dx);
    cudaFree(dy);

    if (bad) {
        printf("FAIL: %lld mismatches\n", bad);
        return 1;
    }
    printf("PASS (grid %d x %d)\n", grid, kBlock);
    return 0;
}
