/*@prompt
Box blur a grayscale 8-bit image (2048 x 1536) with a 5x5 mean filter, clamping coordinates at the borders (replicate edge pixels). Round the mean to the nearest integer. Load a shared-memory tile with halo.
@explanation
Each 32x8 block produces a 32x8 patch of the output and needs the input patch extended by 2 pixels on every side, 36 x 12 bytes, which its 256 threads load with a strided loop into shared memory. Border handling happens during that load: coordinates are clamped into the image (`min(max(x, 0), w - 1)`), which replicates the edge pixels, so the compute phase needs no bounds checks at all. After `__syncthreads()` each thread sums its 25 neighbours as integers and rounds the mean with `(sum + 12) / 25`. Integer arithmetic makes the result exactly reproducible, so it is compared byte for byte with a CPU implementation.
@*/
#include <algorithm>
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

constexpr int R = 2, BX = 32, BY = 8, TX = BX + 2 * R, TY = BY + 2 * R;

__global__ void box_blur5(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, int w, int h)
{
    __shared__ unsigned char tile[TY][TX];
    const int x0 = blockIdx.x * BX - R, y0 = blockIdx.y * BY - R;
    for (int k = threadIdx.y * BX + threadIdx.x; k < TX * TY; k += BX * BY) {
        int ty = k / TX, tx = k % TX;
        int gx = min(max(x0 + tx, 0), w - 1);
        int gy = min(max(y0 + ty, 0), h - 1);
        tile[ty][tx] = in[gy * w + gx];
    }
    __syncthreads();

    const int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    if (x >= w || y >= h) return;
    int sum = 0;
    for (int dy = 0; dy <= 2 * R; ++dy)
        for (int dx = 0; dx <= 2 * R; ++dx) sum += tile[threadIdx.y + dy][threadIdx.x + dx];
    out[y * w + x] = (unsigned char)((sum + 12) / 25);
}

int main()
{
    const int w = 2048, h = 1536;
    std::vector<unsigned char> img(w * h), out(w * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img[y * w + x] = (unsigned char)(((x / 16 + y / 16) % 2) * 200 + (x * y) % 50);

    unsigned char *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, w * h));
    CUDA_CHECK(cudaMalloc(&d_out, w * h));
    CUDA_CHECK(cudaMemcpy(d_in, img.data(), w * h, cudaMemcpyHostToDevice));
    dim3 block(BX, BY);
    dim3 grid((w + BX - 1) / BX, (h + BY - 1) / BY);
    box_blur5<<<grid, block>>>(d_in, d_out, w, h);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, w * h, cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);

    long bad = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int sum = 0;
            for (int dy = -R; dy <= R; ++dy)
                for (int dx = -R; dx <= R; ++dx) {
                    int yy = std::min(std::max(y + dy, 0), h - 1), xx = std::min(std::max(x + dx, 0), w - 1);
                    sum += img[yy * w + xx];
                }
            bad += out[y * w + x] != (unsigned char)((sum + 12) / 25);
        }
    if (bad) {
        printf("FAIL: %ld pixels\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
