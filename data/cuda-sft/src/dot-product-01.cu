/*@prompt
Dot product of two float vectors (16M elements) in CUDA. Each thread should accumulate with a grid-stride loop, then reduce inside the warp with shuffles, and the warps of a block should combine through shared memory before a single atomicAdd per block.
@explanation
Every thread multiplies and accumulates its strided slice in a register, so global memory is read exactly once with coalesced accesses. `__shfl_down_sync` then folds the 32 lanes of a warp in five steps; lane 0 of each warp parks its value in shared memory, and after `__syncthreads()` the first warp folds those per-warp values and issues one `atomicAdd` for the whole block. The output must be zeroed with `cudaMemset` before the launch because the kernel only adds to it. Floating-point sums depend on order, so the result is checked against a double-precision CPU dot product with a tolerance of 1e-4 relative to the sum of |x_i * y_i|.
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

__inline__ __device__ float warp_sum(float v)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__global__ void dot_kernel(const float* x, const float* y, float* result, int n)
{
    __shared__ float warp_partial[32];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += x[i] * y[i];

    int lane = threadIdx.x % warpSize;
    int warp_id = threadIdx.x / warpSize;
    sum = warp_sum(sum);
    if (lane == 0) warp_partial[warp_id] = sum;
    __syncthreads();

    if (warp_id == 0) {
        sum = (lane < blockDim.x / warpSize) ? warp_partial[lane] : 0.0f;
        sum = warp_sum(sum);
        if (lane == 0) atomicAdd(result, sum);
    }
}

int main()
{
    const int n = 1 << 24;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = 1.0f + 0.5f * std::cos(0.0001f * i);  // positive data: no cancellation hides errors
        y[i] = ((i % 13) + 1) * 0.1f;
    }
    double ref = 0.0, mag = 0.0;
    for (int i = 0; i < n; ++i) {
        ref += (double)x[i] * y[i];
        mag += std::fabs((double)x[i] * y[i]);
    }

    float *dx, *dy, *dres;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dres, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dres, 0, sizeof(float)));

    int threads = 256;
    int blocks = 1024;
    dot_kernel<<<blocks, threads>>>(dx, dy, dres, n);
    CUDA_CHECK(cudaGetLastError());

    float got;
    CUDA_CHECK(cudaMemcpy(&got, dres, sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dres);

    double err = std::fabs(got - ref);
    printf("dot = %f (cpu %f), err %.3e, bound %.3e\n", got, ref, err, 1e-4 * mag);
    if (!(err <= 1e-4 * mag)) {  // also fails on NaN
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
