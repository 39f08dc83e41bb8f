/*@prompt
2D convolution of a grayscale float image (1280 x 720) with a 5x5 filter, output the same size as the input (zero padding at the borders). Filter in constant memory, one thread per output pixel.
@explanation
Output pixel (x, y) is `sum_{dy,dx} f[dy][dx] * img[y + dy - 2][x + dx - 2]` over the 5x5 window, with pixels outside the image treated as 0 ("same" size output). The 25 filter taps are uniform across threads, so they live in `__constant__` memory and are read through the broadcasting constant cache. A 2D grid of 16x16 blocks maps x to the fastest-varying thread index so each warp reads consecutive pixels of a row. Border handling is a bounds test per tap; interior threads always pass it, so divergence is limited to the blocks along the edges. The float sum of 25 products is within 25 * 2^-24 of the sum of their magnitudes, which is the tolerance.
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

#define FR 2                 // filter radius
#define FW (2 * FR + 1)      // filter width
__constant__ float c_filter[FW * FW];

__global__ void conv2d_same(const float* __restrict__ img, float* __restrict__ out, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int dy = -FR; dy <= FR; ++dy) {
        int yy = y + dy;
        if (yy < 0 || yy >= h) continue;
        for (int dx = -FR; dx <= FR; ++dx) {
            int xx = x + dx;
            if (xx < 0 || xx >= w) continue;
            acc += c_filter[(dy + FR) * FW + (dx + FR)] * img[yy * w + xx];
        }
    }
    out[y * w + x] = acc;
}

int main()
{
    const int w = 1280, h = 720;
    std::vector<float> img(w * h), out(w * h), f(FW * FW);
    for (int i = 0; i < FW * FW; ++i) f[i] = (float)((i * 7) % 11 - 5) / 20.0f;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img[y * w + x] = (float)((x * x + 3 * y) % 256) / 255.0f;

    CUDA_CHECK(cudaMemcpyToSymbol(c_filter, f.data(), f.size() * sizeof(float)));
    float *d_img, *d_out;
    CUDA_CHECK(cudaMalloc(&d_img, img.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_img, img.data(), img.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(16, 16);
    dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    conv2d_same<<<grid, block>>>(d_img, d_out, w, h);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_img);
    cudaFree(d_out);

    long bad = 0;
    const double bound = FW * FW * std::ldexp(1.0, -24);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double ref = 0.0, mag = 0.0;
            for (int dy = -FR; dy <= FR; ++dy)
                for (int dx = -FR; dx <= FR; ++dx) {
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                    double p = (double)f[(dy + FR) * FW + dx + FR] * img[yy * w + xx];
                    ref += p;
                    mag += std::fabs(p);
                }
            if (!(std::fabs(out[y * w + x] - ref) <= bound * mag + 1e-30)) ++bad;
        }
    if (bad) {
        printf("FAIL: %ld pixels\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
