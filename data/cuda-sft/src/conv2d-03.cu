/*@prompt
Forward pass of a first CNN layer: nn.Conv2d(3, 16, kernel_size=3, stride=1, padding=1) on a batch of 4 RGB images 224x224, NCHW float. Keep all 16*3*3*3 weights and the bias in constant memory and let each thread compute all 16 output channels of one pixel.
@explanation
With only 3 input channels, the 27 input values a pixel needs (3 channels x 3x3 window) are worth loading once into registers and reusing for every output channel. So each thread handles one (n, y, x) position: it gathers the 27 inputs (zero outside the image), then loops over the 16 output channels, each a 27-term dot product with weights from `__constant__` memory. All threads in a warp read the same weight at the same time, which the constant cache broadcasts. The 432 weights plus 16 biases are far below the 64 KB constant-memory limit. Outputs are written to 16 separate channel planes, each store coalesced across the warp because x is the fastest-varying thread index. Tolerance: 28 * 2^-24 times the sum of |terms|.
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

constexpr int CIN = 3, COUT = 16, KS = 3, PAD = 1;
__constant__ float c_w[COUT * CIN * KS * KS];
__constant__ float c_b[COUT];

__global__ void conv3x3_c3_c16(const float* __restrict__ x, float* __restrict__ y, int H, int W)
{
    const int ox = blockIdx.x * blockDim.x + threadIdx.x;
    const int oy = blockIdx.y * blockDim.y + threadIdx.y;
    const int n = blockIdx.z;
    if (ox >= W || oy >= H) return;

    float v[CIN * KS * KS];
    for (int ci = 0; ci < CIN; ++ci)
        for (int ky = 0; ky < KS; ++ky)
            for (int kx = 0; kx < KS; ++kx) {
                int iy = oy + ky - PAD, ix = ox + kx - PAD;
                bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
                v[(ci * KS + ky) * KS + kx] = inside ? x[(((size_t)n * CIN + ci) * H + iy) * W + ix] : 0.0f;
            }
    for (int co = 0; co < COUT; ++co) {
        float acc = c_b[co];
#pragma unroll
        for (int k = 0; k < CIN * KS * KS; ++k) acc += c_w[co * CIN * KS * KS + k] * v[k];
        y[(((size_t)n * COUT + co) * H + oy) * W + ox] = acc;
    }
}

int main()
{
    const int N = 4, H = 224, W = 224;
    std::vector<float> x((size_t)N * CIN * H * W), y((size_t)N * COUT * H * W);
    std::vector<float> w(COUT * CIN * KS * KS), b(COUT);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (float)((i * 131) % 256) / 255.0f - 0.5f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.2f * std::sin(1.3f * (float)i);
    for (int i = 0; i < COUT; ++i) b[i] = 0.05f * i;

    CUDA_CHECK(cudaMemcpyToSymbol(c_w, w.data(), w.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpyToSymbol(c_b, b.data(), b.size() * sizeof(float)));
    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((W + block.x - 1) / block.x, (H + block.y - 1) / block.y, N);
    conv3x3_c3_c16<<<grid, block>>>(dx, dy, H, W);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx);
    cudaFree(dy);

    long bad = 0;
    const double u = std::ldexp(1.0, -24);
    for (int n = 0; n < N; ++n)
        for (int co = 0; co < COUT; ++co)
            for (int oy = 0; oy < H; ++oy)
                for (int ox = 0; ox < W; ++ox) {
                    double ref = b[co], mag = std::fabs(b[co]);
                    for (int ci = 0; ci < CIN; ++ci)
                        for (int ky = 0; ky < KS; ++ky)
                            for (int kx = 0; kx < KS; ++kx) {
                                int iy = oy + ky - PAD, ix = ox + kx - PAD;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                double p = (double)w[((co * CIN + ci) * KS + ky) * KS + kx] *
                                           x[(((size_t)n * CIN + ci) * H + iy) * W + ix];
                                ref += p;
                                mag += std::fabs(p);
                            }
                    if (!(std::fabs(y[(((size_t)n * COUT + co) * H + oy) * W + ox] - ref) <= 28 * u * mag)) ++bad;
                }
    if (bad) {
        printf("FAIL: %ld outputs\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
