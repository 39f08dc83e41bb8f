/*@prompt
Implement softmax with the "online softmax" trick so the row is read only twice instead of three times: compute the max and the normalizer in one pass, keeping a running max and rescaling the running sum whenever the max grows. Rows are long (8192 floats), 512 rows, 256 threads per block.
@explanation
For a running pair (m, d) meaning "max so far, and sum of exp(x - m) so far", a new element x updates it to `m' = max(m, x)`, `d' = d * exp(m - m') + exp(x - m')`. Two partial pairs merge the same way: `m = max(m1, m2)`, `d = d1 * exp(m1 - m) + d2 * exp(m2 - m)`. This merge is associative, so each thread folds its strided elements into one pair, the warp merges pairs with shuffles, and warp results meet in shared memory. The first pass therefore produces both the max and the normaliser, and the second pass writes `exp(x - m) / d`. A pair that has seen nothing is (-inf, 0); the merge guards that case because `exp(-inf - (-inf))` would be NaN. The check is against a double-precision three-pass reference: 3e-5 relative plus 1e-9 absolute, a little looser than a three-pass kernel needs because each merge rescales the running sum by another `expf`.
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

struct MD {
    float m;  // running max
    float d;  // sum of exp(x - m)
};

__device__ __forceinline__ MD md_merge(MD a, MD b)
{
    if (a.m == -INFINITY) return b;
    if (b.m == -INFINITY) return a;
    float m = fmaxf(a.m, b.m);
    return {m, a.d * expf(a.m - m) + b.d * expf(b.m - m)};
}

__global__ void online_softmax(const float* __restrict__ x, float* __restrict__ y, int cols)
{
    __shared__ MD warp_md[32];
    __shared__ MD row_md;
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;

    MD acc = {-INFINITY, 0.0f};
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc = md_merge(acc, MD{xr[c], 1.0f});

    for (int off = 16; off > 0; off >>= 1) {
        MD other = {__shfl_down_sync(0xffffffff, acc.m, off), __shfl_down_sync(0xffffffff, acc.d, off)};
        acc = md_merge(acc, other);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_md[warp] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        MD total = warp_md[0];
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) total = md_merge(total, warp_md[w]);
        row_md = total;
    }
    __syncthreads();

    const float m = row_md.m, inv_d = 1.0f / row_md.d;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv_d;
}

int main()
{
    const int rows = 512, cols = 8192;
    std::vector<float> x((size_t)rows * cols), y(x.size());
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            x[(size_t)r * cols + c] = 12.0f * std::sin(0.001f * (float)c * (1 + r % 9)) + (c == r ? 30.0f : 0.0f);

    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, x.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, y.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    online_softmax<<<rows, 256>>>(dx, dy, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx);
    cudaFree(dy);

    long bad = 0;
    for (int r = 0; r < rows; ++r) {
        const float* xr = &x[(size_t)r * cols];
        double m = -INFINITY, s = 0.0;
        for (int c = 0; c < cols; ++c) m = std::fmax(m, (double)xr[c]);
        for (int c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
        for (int c = 0; c < cols; ++c) {
            double ref = std::exp(xr[c] - m) / s;
            if (!(std::fabs(y[(size_t)r * cols + c] - ref) <= 3e-5 * ref + 1e-9)) ++bad;
        }
    }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
