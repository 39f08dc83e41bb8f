/*@prompt
Price a European call option by Monte Carlo on the GPU (S0 = 100, K = 105, r = 5%, sigma = 20%, T = 1 year) using geometric Brownian motion with Box-Muller normal variates from a counter-based hash RNG. Compare with the Black-Scholes closed form.
@explanation
Under the risk-neutral measure the terminal price is `S_T = S0 * exp((r - sigma^2/2) T + sigma sqrt(T) Z)` with Z standard normal, and the option value is `exp(-rT) * E[max(S_T - K, 0)]`. Each thread draws pairs of uniforms from a stateless hash of (thread, sample) and converts them to two independent normals with Box-Muller (`sqrt(-2 ln u1) * cos/sin(2 pi u2)`), using both as antithetic-free samples; `u1` is shifted away from 0 so the logarithm stays finite. Every thread accumulates its payoff sum and sum of squares in double, a block reduction in shared memory combines them, and one `atomicAdd` per block and quantity adds them up globally. The host computes the estimate, its standard error from the sample variance, and the Black-Scholes price; the check requires agreement within four standard errors (about 0.01 here).
@*/
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

constexpr int THREADS = 256, BLOCKS = 512, PAIRS_PER_THREAD = 256;  // 2^26 paths

__device__ inline float u01(uint32_t a, uint32_t b)
{
    uint32_t h = a * 0x9E3779B9u ^ (b + 0x632BE5ABu) * 0x85EBCA6Bu;
    h ^= h >> 16; h *= 0x7FEB352Du; h ^= h >> 15; h *= 0x846CA68Bu; h ^= h >> 16;
    return ((h >> 8) + 0.5f) * (1.0f / 16777216.0f);  // (0, 1): never exactly 0
}

__global__ void price_call(float S0, float K, float r, float sigma, float T, double* sums)
{
    __shared__ double s_pay[THREADS], s_sq[THREADS];
    const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    const float drift = (r - 0.5f * sigma * sigma) * T, vol = sigma * sqrtf(T);
    double pay = 0.0, sq = 0.0;
    for (int k = 0; k < PAIRS_PER_THREAD; ++k) {
        float u1 = u01(tid, 2 * k), u2 = u01(tid, 2 * k + 1);
        float rad = sqrtf(-2.0f * logf(u1));
        float z[2] = {rad * cospif(2.0f * u2), rad * sinpif(2.0f * u2)};
        for (float zi : z) {
            double p = fmaxf(S0 * expf(drift + vol * zi) - K, 0.0f);
            pay += p;
            sq += p * p;
        }
    }
    s_pay[threadIdx.x] = pay;
    s_sq[threadIdx.x] = sq;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            s_pay[threadIdx.x] += s_pay[threadIdx.x + s];
            s_sq[threadIdx.x] += s_sq[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(&sums[0], s_pay[0]);
        atomicAdd(&sums[1], s_sq[0]);
    }
}

static double norm_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

int main()
{
    const float S0 = 100.0f, K = 105.0f, r = 0.05f, sigma = 0.2f, T = 1.0f;
    double* d_sums;
    CUDA_CHECK(cudaMalloc(&d_sums, 2 * sizeof(double)));
    CUDA_CHECK(cudaMemset(d_sums, 0, 2 * sizeof(double)));
    price_call<<<BLOCKS, THREADS>>>(S0, K, r, sigma, T, d_sums);
    CUDA_CHECK(cudaGetLastError());
    double sums[2];
    CUDA_CHECK(cudaMemcpy(sums, d_sums, sizeof(sums), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_sums));

    const double n = (double)BLOCKS * THREADS * PAIRS_PER_THREAD * 2;
    const double mean = sums[0] / n, var = sums[1] / n - mean * mean;
    const double disc = std::exp(-(double)r * T);
    const double price = disc * mean, stderr_ = disc * std::sqrt(var / n);

    const double d1 = (std::log((double)S0 / K) + (r + 0.5 * sigma * sigma) * T) / (sigma * std::sqrt((double)T));
    const double d2 = d1 - sigma * std::sqrt((double)T);
    const double bs = S0 * norm_cdf(d1) - K * std::exp(-(double)r * T) * norm_cdf(d2);
    printf("Monte Carlo %.4f +- %.4f, Black-Scholes %.4f\n", price, stderr_, bs);
    if (!(std::fabs(price - bs) < 4.0 * stderr_)) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
