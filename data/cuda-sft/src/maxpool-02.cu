/*@prompt
Average pooling like nn.AvgPool2d(kernel_size=3, stride=2, padding=1, count_include_pad=False) for NCHW input [8, 32, 75, 75]. Compute the output size correctly and divide only by the number of real (non-padding) elements in each window.
@explanation
The output size is `floor((H + 2*pad - k) / stride) + 1`, which is 38 for H = 75. Output (oy, ox) covers input rows `oy*stride - pad ... + k - 1`, and likewise for columns; the kernel clamps that window to the image, sums the valid elements and divides by their count, which is what `count_include_pad=False` means (with `True` the divisor would always be 9). Windows on the border therefore average 4 or 6 values, interior windows 9. Each thread computes one output from the flattened index. The CPU reference uses the same summation order and divisor, and the results are compared with a 1e-6 relative tolerance.
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

constexpr int KS = 3, STRIDE = 2, PAD = 1;

__global__ void avgpool_exclude_pad(const float* __restrict__ in, float* __restrict__ out,
                                    int NC, int H, int W, int OH, int OW)
{
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (size_t)NC * OH * OW) return;
    const int ox = (int)(idx % OW), oy = (int)((idx / OW) % OH);
    const size_t nc = idx / ((size_t)OH * OW);
    const int y0 = max(oy * STRIDE - PAD, 0), y1 = min(oy * STRIDE - PAD + KS, H);
    const int x0 = max(ox * STRIDE - PAD, 0), x1 = min(ox * STRIDE - PAD + KS, W);
    const float* plane = in + nc * H * W;
    float sum = 0.0f;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) sum += plane[y * W + x];
    out[idx] = sum / (float)((y1 - y0) * (x1 - x0));
}

int main()
{
    const int N = 8, C = 32, H = 75, W = 75;
    const int OH = (H + 2 * PAD - KS) / STRIDE + 1, OW = (W + 2 * PAD - KS) / STRIDE + 1;
    std::vector<float> in((size_t)N * C * H * W), out((size_t)N * C * OH * OW);
    for (size_t i = 0; i < in.size(); ++i) in[i] = (float)((i * 17) % 101) * 0.1f;

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, in.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
    const int threads = 128;
    avgpool_exclude_pad<<<(unsigned)((out.size() + threads - 1) / threads), threads>>>(d_in, d_out, N * C, H, W, OH, OW);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);

    long bad = 0;
    for (int nc = 0; nc < N * C; ++nc)
        for (int oy = 0; oy < OH; ++oy)
            for (int ox = 0; ox < OW; ++ox) {
                int y0 = std::max(oy * STRIDE - PAD, 0), y1 = std::min(oy * STRIDE - PAD + KS, H);
                int x0 = std::max(ox * STRIDE - PAD, 0), x1 = std::min(ox * STRIDE - PAD + KS, W);
                float sum = 0.0f;
                for (int y = y0; y < y1; ++y)
                    for (int x = x0; x < x1; ++x) sum += in[(size_t)nc * H * W + y * W + x];
                float ref = sum / (float)((y1 - y0) * (x1 - x0));
                float got = out[((size_t)nc * OH + oy) * OW + ox];
                bad += !(std::fabs(got - ref) <= 1e-6f * std::fabs(ref));
            }
    printf("output %dx%d\n", OH, OW);
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
