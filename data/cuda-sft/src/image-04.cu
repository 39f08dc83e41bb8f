/*@prompt
Sobel edge detection on a float grayscale image (1024x1024): compute gx and gy with the 3x3 Sobel kernels and output the gradient magnitude sqrt(gx^2 + gy^2). Border pixels output 0.
@explanation
The Sobel operator estimates the horizontal derivative with `[-1 0 1; -2 0 2; -1 0 1]` and the vertical one with its transpose; the magnitude `sqrt(gx^2 + gy^2)` is large across edges. Each thread handles one interior pixel and reads its eight neighbours directly from global memory (neighbouring threads share most of them through the L1 cache); border pixels, where the window would leave the image, are set to 0 as the task specifies. The test image is a bright square on a dark background, so the magnitude is non-zero only along its outline, and the check also counts edge pixels. The CPU computes the same expression in double; the tolerance is 1e-5 relative plus 1e-6 absolute.
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

__global__ void sobel_magnitude(const float* __restrict__ img, float* __restrict__ mag, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
        mag[y * w + x] = 0.0f;
        return;
    }
    const float* p = img + y * w + x;
    float gx = (p[-w + 1] + 2.0f * p[1] + p[w + 1]) - (p[-w - 1] + 2.0f * p[-1] + p[w - 1]);
    float gy = (p[w - 1] + 2.0f * p[w] + p[w + 1]) - (p[-w - 1] + 2.0f * p[-w] + p[-w + 1]);
    mag[y * w + x] = sqrtf(gx * gx + gy * gy);
}

int main()
{
    const int w = 1024, h = 1024;
    std::vector<float> img(w * h), mag(w * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img[y * w + x] = (x >= 300 && x < 700 && y >= 200 && y < 800) ? 0.9f : 0.1f;

    float *d_img, *d_mag;
    CUDA_CHECK(cudaMalloc(&d_img, w * h * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_mag, w * h * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_img, img.data(), w * h * sizeof(float), cudaMemcpyHostToDevice));
    dim3 block(16, 16);
    dim3 grid((w + 15) / 16, (h + 15) / 16);
    sobel_magnitude<<<grid, block>>>(d_img, d_mag, w, h);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(mag.data(), d_mag, w * h * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_img);
    cudaFree(d_mag);

    long bad = 0, edges = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double ref = 0.0;
            if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
                auto I = [&](int dx, int dy) { return (double)img[(y + dy) * w + x + dx]; };
                double gx = I(1, -1) + 2 * I(1, 0) + I(1, 1) - I(-1, -1) - 2 * I(-1, 0) - I(-1, 1);
                double gy = I(-1, 1) + 2 * I(0, 1) + I(1, 1) - I(-1, -1) - 2 * I(0, -1) - I(1, -1);
                ref = std::sqrt(gx * gx + gy * gy);
            }
            edges += ref > 0.5;
            bad += !(std::fabs(mag[y * w + x] - ref) <= 1e-5 * ref + 1e-6);
        }
    printf("%ld edge pixels\n", edges);
    if (bad) {
        printf("FAIL: %ld pixels\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
