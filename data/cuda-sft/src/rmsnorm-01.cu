/*@prompt
RMSNorm kernel (as in LLaMA): y = x / sqrt(mean(x^2) + eps) * weight, for x of shape [2048, 4096] float, eps = 1e-6. One block per row.
@explanation
RMSNorm drops LayerNorm's mean subtraction and bias: it only rescales each row by the reciprocal root-mean-square of its entries. Each 512-thread block handles one row: threads accumulate squares over a strided slice, a shared-memory tree reduction produces the row's sum of squares, and thread 0 converts it to `rsqrt(sum / cols + eps)` and stores it in a shared variable. After a barrier every thread multiplies its slice by that factor and by the per-column `weight`. The CPU reference uses double; outputs are of order 1, so the tolerance is 1e-5 relative plus 1e-6 absolute.
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

#define BLOCK 512

__global__ void rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ weight,
                               float* __restrict__ y, int cols, float eps)
{
    __shared__ float partial[BLOCK];
    __shared__ float inv_rms;
    const size_t off = (size_t)blockIdx.x * cols;

    float ss = 0.0f;
    for (int c = threadIdx.x; c < cols; c += BLOCK) ss += x[off + c] * x[off + c];
    partial[threadIdx.x] = ss;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) inv_rms = rsqrtf(partial[0] / cols + eps);
    __syncthreads();

    for (int c = threadIdx.x; c < cols; c += BLOCK) y[off + c] = x[off + c] * inv_rms * weight[c];
}

int main()
{
    const int rows = 2048, cols = 4096;
    const float eps = 1e-6f;
    std::vector<float> x((size_t)rows * cols), w(cols), y(x.size());
    for (int c = 0; c < cols; ++c) w[c] = 0.8f + 0.4f * (float)(c % 7) / 6.0f;
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.02f * (float)((int)((i * 40503u) % 401u) - 200);

    float *dx, *dw, *dy;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dw, w.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));

    rmsnorm_kernel<<<rows, BLOCK>>>(dx, dw, dy, cols, eps);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dw); cudaFree(dy);

    long bad = 0;
    for (int r = 0; r < rows; ++r) {
        double ss = 0.0;
        for (int c = 0; c < cols; ++c) ss += (double)x[(size_t)r * cols + c] * x[(size_t)r * cols + c];
        double inv = 1.0 / std::sqrt(ss / cols + eps);
        for (int c = 0; c < cols; ++c) {
            double ref = x[(size_t)r * cols + c] * inv * w[c];
            if (!(std::fabs(y[(size_t)r * cols + c] - ref) <= 1e-5 * std::fabs(ref) + 1e-6)) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
