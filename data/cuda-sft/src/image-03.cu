/*@prompt
Separable Gaussian blur (sigma = 2, radius 6) of a float image 1920x1080: do a horizontal pass into a temporary buffer, then a vertical pass. Clamp at the borders. Explain why separable is cheaper.
@explanation
A 2D Gaussian kernel is the outer product of two 1D Gaussians, so filtering rows with the 13-tap 1D kernel and then filtering the columns of that result gives exactly the 2D blur, with 2 x 13 = 26 multiply-adds per pixel instead of 13 x 13 = 169. The two passes are two launches of simple kernels: `blur_rows` reads neighbours along x, `blur_cols` along y; the second launch on the same stream starts only after the first has finished, so the temporary buffer is complete. The normalised taps sit in `__constant__` memory. Clamping the coordinate replicates edge pixels, which keeps the weights summing to 1 at the borders. The CPU runs the same two passes; each output involves two float 13-term sums, and the check allows 1e-5 absolute on values in [0, 1].
@*/
#include <algorithm>
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

constexpr int RAD = 6, TAPS = 2 * RAD + 1;
__constant__ float c_g[TAPS];

__global__ void blur_rows(const float* __restrict__ in, float* __restrict__ out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int k = -RAD; k <= RAD; ++k) acc += c_g[k + RAD] * in[y * w + min(max(x + k, 0), w - 1)];
    out[y * w + x] = acc;
}

__global__ void blur_cols(const float* __restrict__ in, float* __restrict__ out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int k = -RAD; k <= RAD; ++k) acc += c_g[k + RAD] * in[min(max(y + k, 0), h - 1) * w + x];
    out[y * w + x] = acc;
}

int main()
{
    const int w = 1920, h = 1080;
    const float sigma = 2.0f;
    std::vector<float> g(TAPS), img(w * h), out(w * h);
    float gsum = 0.0f;
    for (int k = -RAD; k <= RAD; ++k) gsum += (g[k + RAD] = std::exp(-(float)(k * k) / (2 * sigma * sigma)));
    for (auto& v : g) v /= gsum;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img[y * w + x] = ((x - 960) * (x - 960) + (y - 540) * (y - 540) < 300 * 300) ? 1.0f : 0.0f;

    CUDA_CHECK(cudaMemcpyToSymbol(c_g, g.data(), TAPS * sizeof(float)));
    float *d_img, *d_tmp, *d_out;
    CUDA_CHECK(cudaMalloc(&d_img, w * h * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_tmp, w * h * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, w * h * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_img, img.data(), w * h * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    blur_rows<<<grid, block>>>(d_img, d_tmp, w, h);
    blur_cols<<<grid, block>>>(d_tmp, d_out, w, h);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, w * h * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_img); cudaFree(d_tmp); cudaFree(d_out);

    std::vector<double> tmp(w * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double acc = 0.0;
            for (int k = -RAD; k <= RAD; ++k) acc += g[k + RAD] * img[y * w + std::min(std::max(x + k, 0), w - 1)];
            tmp[y * w + x] = acc;
        }
    long bad = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double acc = 0.0;
            for (int k = -RAD; k <= RAD; ++k) acc += g[k + RAD] * tmp[std::min(std::max(y + k, 0), h - 1) * w + x];
            bad += !(std::fabs(out[y * w + x] - acc) <= 1e-5);
        }
    if (bad) {
        printf("FAIL: %ld pixels\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
