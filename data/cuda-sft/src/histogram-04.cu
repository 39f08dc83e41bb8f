/*@prompt
Compute per-channel histograms (R, G, B, 256 bins each) of a 1920x1080 RGBA8 image stored as uchar4 pixels. Use a 2D grid over the image and shared-memory privatized bins; ignore the alpha channel.
@explanation
Pixels are read as `uchar4`, so one 4-byte load brings all channels of a pixel. A 2D grid of 32x8 blocks strides over the image in both dimensions, which keeps the kernel correct for any image size and grid size. Each block holds 3 x 256 counters in shared memory: the 256 threads zero them in three strided steps, count with shared atomics (channel c goes to `bins[c * 256 + value]`), and after `__syncthreads()` merge the non-zero counters into the global `[3][256]` histogram. Counting is exact; the host compares all 768 counters with a CPU count and checks that each channel sums to the pixel count.
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

__global__ void rgb_histogram(const uchar4* __restrict__ img, int width, int height, unsigned int* __restrict__ hist)
{
    __shared__ unsigned int bins[3 * 256];
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int n_threads = blockDim.x * blockDim.y;
    for (int b = tid; b < 3 * 256; b += n_threads) bins[b] = 0;
    __syncthreads();

    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < height; y += blockDim.y * gridDim.y)
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < width; x += blockDim.x * gridDim.x) {
            uchar4 p = img[(size_t)y * width + x];
            atomicAdd(&bins[p.x], 1u);
            atomicAdd(&bins[256 + p.y], 1u);
            atomicAdd(&bins[512 + p.z], 1u);
        }
    __syncthreads();

    for (int b = tid; b < 3 * 256; b += n_threads)
        if (bins[b]) atomicAdd(&hist[b], bins[b]);
}

int main()
{
    const int width = 1920, height = 1080;
    const size_t n = (size_t)width * height;
    std::vector<uchar4> img(n);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            img[(size_t)y * width + x] = make_uchar4((unsigned char)(x * 255 / (width - 1)),
                                                     (unsigned char)(y * 255 / (height - 1)),
                                                     (unsigned char)((x ^ y) & 0xff), 255);

    uchar4* d_img;
    unsigned int* d_hist;
    CUDA_CHECK(cudaMalloc(&d_img, n * sizeof(uchar4)));
    CUDA_CHECK(cudaMalloc(&d_hist, 3 * 256 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(d_img, img.data(), n * sizeof(uchar4), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_hist, 0, 3 * 256 * sizeof(unsigned int)));

    dim3 block(32, 8);
    dim3 grid(15, 34);  // fewer blocks than tiles: the loops stride over the rest
    rgb_histogram<<<grid, block>>>(d_img, width, height, d_hist);
    CUDA_CHECK(cudaGetLastError());
    std::vector<unsigned int> hist(3 * 256), ref(3 * 256, 0);
    CUDA_CHECK(cudaMemcpy(hist.data(), d_hist, hist.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost));
    cudaFree(d_img);
    cudaFree(d_hist);

    for (size_t i = 0; i < n; ++i) {
        ref[img[i].x]++;
        ref[256 + img[i].y]++;
        ref[512 + img[i].z]++;
    }
    int bad = 0;
    for (int c = 0; c < 3; ++c) {
        size_t total = 0;
        for (int b = 0; b < 256; ++b) {
            total += hist[c * 256 + b];
            bad += hist[c * 256 + b] != ref[c * 256 + b];
        }
        bad += total != n;
    }
    if (bad) {
        printf("FAIL: %d problems\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
