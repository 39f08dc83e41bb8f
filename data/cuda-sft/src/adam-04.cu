/*@prompt
Adam with global gradient-norm clipping (like torch.nn.utils.clip_grad_norm_(params, max_norm=1.0) followed by optimizer.step()) over one flat buffer of 8M parameters. Compute the global L2 norm on the GPU and apply the clip factor inside the Adam kernel without copying the norm back to the host.
@explanation
Clipping needs the norm of the whole gradient before any parameter can be updated, so there are two launches. `grad_sq_norm` accumulates the sum of squares in double (warp shuffle, then one `atomicAdd` per warp into a device scalar). `adam_clipped` reads that scalar at the start, computes `clip = min(1, max_norm / (norm + 1e-6))` (the same formula and epsilon as PyTorch), scales each gradient by it, and performs the usual Adam update; because the norm stays on the device, the host never waits between the two kernels. The test gradient has a norm of about 10, so clipping is active and the effective gradient is scaled by roughly 0.1. The CPU reference computes the norm and the update in double; parameters must agree within 1e-6 over 2 steps.
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

__global__ void grad_sq_norm(const float* __restrict__ g, int n, double* __restrict__ sq)
{
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += (double)g[i] * g[i];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffff, acc, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(sq, acc);
}

__global__ void adam_clipped(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m, float* __restrict__ v,
                             int n, const double* __restrict__ sq, float max_norm, float lr, float b1, float b2,
                             float eps, float bc1, float bc2_sqrt)
{
    const float norm = (float)sqrt(*sq);
    const float clip = fminf(1.0f, max_norm / (norm + 1e-6f));
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float gi = g[i] * clip;
        const float mi = b1 * m[i] + (1.0f - b1) * gi;
        const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] -= (lr / bc1) * mi / (sqrtf(vi) / bc2_sqrt + eps);
    }
}

int main()
{
    const int n = 8 << 20, steps = 2;
    const float max_norm = 1.0f, lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    std::vector<float> p(n), g(n);
    std::vector<double> rp(n), rm(n, 0.0), rv(n, 0.0);
    for (int i = 0; i < n; ++i) rp[i] = p[i] = std::cos(0.0003f * i);

    float *dp, *dg, *dm, *dv;
    double* dsq;
    CUDA_CHECK(cudaMalloc(&dp, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dg, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dm, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dv, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dsq, sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dp, p.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dm, 0, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dv, 0, n * sizeof(float)));

    double clip_used = 1.0;
    for (int t = 1; t <= steps; ++t) {
        for (int i = 0; i < n; ++i) g[i] = 0.005f * std::sin(0.01f * i + t);
        CUDA_CHECK(cudaMemcpy(dg, g.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(dsq, 0, sizeof(double)));
        const double bc1 = 1.0 - std::pow((double)b1, t), bc2 = 1.0 - std::pow((double)b2, t);
        grad_sq_norm<<<512, 256>>>(dg, n, dsq);
        adam_clipped<<<1024, 256>>>(dp, dg, dm, dv, n, dsq, max_norm, lr, b1, b2, eps, (float)bc1, (float)std::sqrt(bc2));
        CUDA_CHECK(cudaGetLastError());

        double sq = 0.0;
        for (int i = 0; i < n; ++i) sq += (double)g[i] * g[i];
        const double clip = std::fmin(1.0, max_norm / (std::sqrt(sq) + 1e-6));
        clip_used = clip;
        for (int i = 0; i < n; ++i) {
            double gi = g[i] * clip;
            rm[i] = b1 * rm[i] + (1.0 - b1) * gi;
            rv[i] = b2 * rv[i] + (1.0 - b2) * gi * gi;
            rp[i] -= (lr / bc1) * rm[i] / (std::sqrt(rv[i]) / std::sqrt(bc2) + eps);
        }
    }
    CUDA_CHECK(cudaMemcpy(p.data(), dp, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dp); cudaFree(dg); cudaFree(dm); cudaFree(dv); cudaFree(dsq);

    long bad = 0;
    for (int i = 0; i < n; ++i) bad += !(std::fabs(p[i] - rp[i]) <= 1e-6);
    printf("clip factor %.4f\n", clip_used);
    if (bad || !(clip_used < 1.0)) {
        printf("FAIL: %ld parameters\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
