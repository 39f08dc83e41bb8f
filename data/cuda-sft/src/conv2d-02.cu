/*@prompt
Tiled 2D convolution with shared memory: 7x7 filter, 16x16 output tile per block, so each block must load a 22x22 input tile including the 3-pixel halo. Zero padding at the image borders. Image is 2000 x 1500 floats.
@explanation
With a 7x7 window each input pixel is needed by 49 outputs, so reading from global memory per tap wastes bandwidth. Each 16x16 block first loads the 22x22 region its outputs depend on (its tile plus a 3-pixel halo on every side) into shared memory. There are more tile cells (484) than threads (256), so the load is a strided loop over a flattened index; cells outside the image are written as 0, implementing the zero padding. After `__syncthreads()` every thread computes its output entirely from shared memory, with no bounds checks in the inner loops. The filter taps sit in `__constant__` memory. Threads whose output lies outside the image take part in the load (and the barrier) but skip the store. Tolerance: 49 * 2^-24 times the sum of |products|.
@after
The same tiling works for any odd filter size: only `R` changes, and the halo grows with it.
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

constexpr int R = 3, F = 2 * R + 1, TILE = 16, IN_TILE = TILE + 2 * R;
__constant__ float c_f[F * F];

__global__ void conv2d_tiled(const float* __restrict__ in, float* __restrict__ out, int w, int h)
{
    __shared__ float s[IN_TILE][IN_TILE];
    const int ox = blockIdx.x * TILE, oy = blockIdx.y * TILE;  // output tile origin
    const int tid = threadIdx.y * TILE + threadIdx.x;
    for (int k = tid; k < IN_TILE * IN_TILE; k += TILE * TILE) {
        int sy = k / IN_TILE, sx = k % IN_TILE;
        int gx = ox + sx - R, gy = oy + sy - R;
        s[sy][sx] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? in[(size_t)gy * w + gx] : 0.0f;
    }
    __syncthreads();

    const int x = ox + threadIdx.x, y = oy + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
#pragma unroll
    for (int dy = 0; dy < F; ++dy)
#pragma unroll
        for (int dx = 0; dx < F; ++dx) acc += c_f[dy * F + dx] * s[threadIdx.y + dy][threadIdx.x + dx];
    out[(size_t)y * w + x] = acc;
}

int main()
{
    const int w = 2000, h = 1500;
    std::vector<float> img((size_t)w * h), out(img.size()), f(F * F);
    double fsum = 0.0;
    for (int i = 0; i < F * F; ++i) {
        int dy = i / F - R, dx = i % F - R;
        f[i] = std::exp(-(dx * dx + dy * dy) / 4.0f);
        fsum += f[i];
    }
    for (auto& v : f) v = (float)(v / fsum);  // normalised Gaussian blur
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img[(size_t)y * w + x] = ((x / 8 + y / 8) % 2) ? 1.0f : 0.25f;

    CUDA_CHECK(cudaMemcpyToSymbol(c_f, f.data(), f.size() * sizeof(float)));
    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, img.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, img.data(), img.size() * sizeof(float), cudaMemcpyHostToDevice));
    dim3 block(TILE, TILE);
    dim3 grid((w + TILE - 1) / TILE, (h + TILE - 1) / TILE);
    conv2d_tiled<<<grid, block>>>(d_in, d_out, w, h);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);

    long bad = 0;
    const double bound = F * F * std::ldexp(1.0, -24);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double ref = 0.0, mag = 0.0;
            for (int dy = -R; dy <= R; ++dy)
                for (int dx = -R; dx <= R; ++dx) {
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                    double p = (double)f[(dy + R) * F + dx + R] * img[(size_t)yy * w + xx];
                    ref += p;
                    mag += std::fabs(p);
                }
            if (!(std::fabs(out[(size_t)y * w + x] - ref) <= bound * mag + 1e-30)) ++bad;
        }
    if (bad) {
        printf("FAIL: %ld pixels\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
