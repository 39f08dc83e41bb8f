/*@prompt
Convert an interleaved RGB8 image (3 bytes per pixel, 3840x2160) to 8-bit grayscale with the BT.601 luma weights. Use integer fixed-point math so the GPU and CPU give identical bytes.
@explanation
Luma is `0.299 R + 0.587 G + 0.114 B`. In 8.8 fixed point the weights become 77, 150 and 29 (they sum to 256), so `(77 R + 150 G + 29 B + 128) >> 8` computes the weighted sum with rounding to nearest and always fits in a byte. Integer arithmetic gives exactly the same result on every device, which floating point with fused multiply-adds would not guarantee at the .5 rounding boundaries. The image is interleaved, so each thread reads three consecutive bytes as a `uchar3`; a 2D grid of 32x8 blocks maps x to columns so a warp reads 96 contiguous bytes.
@*/
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

__host__ __device__ inline unsigned char luma_bt601(unsigned r, unsigned g, unsigned b)
{
    return (unsigned char)((77u * r + 150u * g + 29u * b + 128u) >> 8);
}

__global__ void rgb_to_gray(const uchar3* __restrict__ rgb, unsigned char* __restrict__ gray, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        uchar3 p = rgb[(size_t)y * width + x];
        gray[(size_t)y * width + x] = luma_bt601(p.x, p.y, p.z);
    }
}

int main()
{
    const int width = 3840, height = 2160;
    const size_t n = (size_t)width * height;
    std::vector<uchar3> rgb(n);
    std::vector<unsigned char> gray(n);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            rgb[(size_t)y * width + x] = make_uchar3((unsigned char)(x & 255), (unsigned char)(y & 255),
                                                     (unsigned char)((x * y) & 255));

    uchar3* d_rgb;
    unsigned char* d_gray;
    CUDA_CHECK(cudaMalloc(&d_rgb, n * sizeof(uchar3)));
    CUDA_CHECK(cudaMalloc(&d_gray, n));
    CUDA_CHECK(cudaMemcpy(d_rgb, rgb.data(), n * sizeof(uchar3), cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    rgb_to_gray<<<grid, block>>>(d_rgb, d_gray, width, height);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(gray.data(), d_gray, n, cudaMemcpyDeviceToHost));
    cudaFree(d_rgb);
    cudaFree(d_gray);

    long bad = 0;
    for (size_t i = 0; i < n; ++i) bad += gray[i] != luma_bt601(rgb[i].x, rgb[i].y, rgb[i].z);
    if (bad) {
        printf("FAIL: %ld pixels\n", bad);
        return 1;
    }
    printf("PASS (white maps to %d)\n", luma_bt601(255, 255, 255));
    return 0;
}
