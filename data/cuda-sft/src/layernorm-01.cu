/*@prompt
LayerNorm forward in CUDA for x of shape [4096, 1024] (float): y = (x - mean) / sqrt(var + eps) * gamma + beta over the last dimension, eps = 1e-5, biased variance as in PyTorch. One block per row.
@explanation
Each 256-thread block normalises one row. It first reduces the row sum to get the mean, then reduces the sum of squared deviations `(x - mean)^2` for the variance; this two-pass form avoids the cancellation that `E[x^2] - E[x]^2` suffers when the mean is large compared with the spread (the test rows have a large offset on purpose). Both reductions are a warp shuffle followed by a 32-entry shared array; a small helper does that and broadcasts the result to all threads through shared memory. The variance divides by the row length (biased), matching `torch.nn.LayerNorm`. The final pass applies the per-column `gamma` and `beta`. The reference runs in double. The float row sum of values near 100 is accurate to a few 1e-5 after division, and that error is amplified by rstd and gamma, so the check allows 5e-4 absolute on outputs of order 1.
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

// Sum over the block, returned to every thread. `scratch` holds 33 floats.
__device__ float block_sum(float v, float* scratch)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? scratch[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
        if (lane == 0) scratch[32] = v;
    }
    __syncthreads();
    float total = scratch[32];
    __syncthreads();  // scratch may be reused by the next call
    return total;
}

__global__ void layernorm_fwd(const float* __restrict__ x, const float* __restrict__ gamma,
                              const float* __restrict__ beta, float* __restrict__ y, int cols, float eps)
{
    __shared__ float scratch[33];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    const float mean = block_sum(s, scratch) / cols;

    float sq = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = xr[c] - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(block_sum(sq, scratch) / cols + eps);

    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
}

int main()
{
    const int rows = 4096, cols = 1024;
    const float eps = 1e-5f;
    std::vector<float> x((size_t)rows * cols), y(x.size()), gamma(cols), beta(cols);
    for (int c = 0; c < cols; ++c) {
        gamma[c] = 1.0f + 0.001f * c;
        beta[c] = 0.01f * (c % 10) - 0.05f;
    }
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            x[(size_t)r * cols + c] = 100.0f + (float)(r % 13) + std::sin(0.05f * c + r);

    float *dx, *dy, *dg, *db;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dg, cols * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&db, cols * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dg, gamma.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, beta.data(), cols * sizeof(float), cudaMemcpyHostToDevice));

    layernorm_fwd<<<rows, 256>>>(dx, dg, db, dy, cols, eps);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dy); cudaFree(dg); cudaFree(db);

    long bad = 0;
    for (int r = 0; r < rows; ++r) {
        const float* xr = &x[(size_t)r * cols];
        double mean = 0.0, var = 0.0;
        for (int c = 0; c < cols; ++c) mean += xr[c];
        mean /= cols;
        for (int c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
        var /= cols;
        double rstd = 1.0 / std::sqrt(var + eps);
        for (int c = 0; c < cols; ++c) {
            double ref = (xr[c] - mean) * rstd * gamma[c] + beta[c];
            if (!(std::fabs(y[(size_t)r * cols + c] - ref) <= 5e-4)) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
