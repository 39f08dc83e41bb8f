/*@prompt
Fused bias + exact GELU (the erf form, 0.5 * x * (1 + erf(x / sqrt(2)))) for fp16 activations [8192, 4096] with an fp16 bias. Process __half2 pairs and compute in float.
@explanation
The row length is even, so a row is 2048 `__half2` pairs and pair index p covers columns `2 * (p % 2048)` and the next one; the bias is read as a `__half2` at the same pair offset. Each thread converts both halves to float, adds the bias, evaluates the exact GELU with `erff`, and rounds back to half once with `__floats2half2_rn`; computing the transcendental in float avoids the large error half-precision arithmetic would add. The CPU reference starts from the same half inputs, computes in double and allows 1e-3 relative plus 1e-3 absolute, about one half-precision ulp at these magnitudes.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_fp16.h>
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

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

__global__ void bias_gelu_half2(__half2* __restrict__ y, const __half2* __restrict__ bias, int n_pairs, int pairs_per_row)
{
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n_pairs; p += gridDim.x * blockDim.x) {
        float2 v = __half22float2(y[p]);
        float2 b = __half22float2(bias[p % pairs_per_row]);
        y[p] = __floats2half2_rn(gelu_erf(v.x + b.x), gelu_erf(v.y + b.y));
    }
}

int main()
{
    const int rows = 8192, cols = 4096;
    const size_t n = (size_t)rows * cols;
    std::vector<__half> y(n), bias(cols), out(n);
    for (size_t i = 0; i < n; ++i) y[i] = __float2half(4.0f * std::sin(0.001f * (float)(i % 65521)));
    for (int j = 0; j < cols; ++j) bias[j] = __float2half(0.1f * (float)(j % 11) - 0.5f);

    __half *d_y, *d_b;
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_b, cols * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(d_y, y.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, bias.data(), cols * sizeof(__half), cudaMemcpyHostToDevice));

    const int n_pairs = (int)(n / 2);
    bias_gelu_half2<<<4096, 256>>>(reinterpret_cast<__half2*>(d_y), reinterpret_cast<const __half2*>(d_b),
                                   n_pairs, cols / 2);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_y, n * sizeof(__half), cudaMemcpyDeviceToHost));
    cudaFree(d_y);
    cudaFree(d_b);

    long bad = 0;
    for (size_t i = 0; i < n; ++i) {
        double v = (double)__half2float(y[i]) + __half2float(bias[i % cols]);
        double ref = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        double got = __half2float(out[i]);
        bad += !(std::fabs(got - ref) <= 1e-3 * std::fabs(ref) + 1e-3);
    }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
