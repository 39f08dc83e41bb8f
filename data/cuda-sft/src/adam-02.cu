/*@prompt
AdamW (decoupled weight decay, as torch.optim.AdamW) for a flat fp32 parameter buffer of 2^24 elements, vectorised with float4 so each thread updates 4 parameters per iteration. lr = 3e-4, betas = (0.9, 0.95), eps = 1e-8, weight_decay = 0.1. Do 3 steps and verify.
@explanation
AdamW applies weight decay directly to the parameters, `p *= 1 - lr * wd`, before the Adam update, instead of adding `wd * p` to the gradient as classic L2-regularised Adam does; this keeps the decay independent of the adaptive scaling. The update is element-wise, so the kernel views p, g, m and v as `float4` arrays and each thread processes four consecutive parameters per iteration of a grid-stride loop, issuing 16-byte loads and stores (the buffer length is a multiple of 4, checked on the host; `cudaMalloc` alignment makes the casts safe). A small `__device__` helper updates one lane so the four components share the code. Bias corrections are computed per step on the host. The double-precision CPU reference must match the parameters within 1e-6 absolute after 3 steps.
@after
Fusing more tensors into one launch (a "multi-tensor apply") matters when a model has hundreds of small parameter tensors; the per-element math stays the same.
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

struct AdamWParams { float lr, b1, b2, eps, wd, bc1, bc2_sqrt; };

__device__ __forceinline__ void adamw_lane(float& p, float g, float& m, float& v, const AdamWParams& h)
{
    p *= 1.0f - h.lr * h.wd;  // decoupled weight decay
    m = h.b1 * m + (1.0f - h.b1) * g;
    v = h.b2 * v + (1.0f - h.b2) * g * g;
    p -= (h.lr / h.bc1) * m / (sqrtf(v) / h.bc2_sqrt + h.eps);
}

__global__ void adamw_vec4(float4* __restrict__ p, const float4* __restrict__ g, float4* __restrict__ m,
                           float4* __restrict__ v, int n4, AdamWParams h)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 pp = p[i], gg = g[i], mm = m[i], vv = v[i];
        adamw_lane(pp.x, gg.x, mm.x, vv.x, h);
        adamw_lane(pp.y, gg.y, mm.y, vv.y, h);
        adamw_lane(pp.z, gg.z, mm.z, vv.z, h);
        adamw_lane(pp.w, gg.w, mm.w, vv.w, h);
        p[i] = pp; m[i] = mm; v[i] = vv;
    }
}

int main()
{
    const int n = 1 << 24, steps = 3;
    if (n % 4 != 0) { printf("FAIL: length must be a multiple of 4\n"); return 1; }
    const float lr = 3e-4f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f;
    std::vector<float> p(n), g(n);
    std::vector<double> rp(n), rm(n, 0.0), rv(n, 0.0);
    for (int i = 0; i < n; ++i) rp[i] = p[i] = 0.02f * std::sin(0.0001f * i) + 0.5f * ((i % 7) == 0);

    float *dp, *dg, *dm, *dv;
    CUDA_CHECK(cudaMalloc(&dp, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dg, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dm, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dv, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dp, p.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dm, 0, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dv, 0, n * sizeof(float)));

    for (int t = 1; t <= steps; ++t) {
        for (int i = 0; i < n; ++i) g[i] = 0.05f * std::cos(0.001f * i * t) - 0.01f;
        CUDA_CHECK(cudaMemcpy(dg, g.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        const double bc1 = 1.0 - std::pow((double)b1, t), bc2 = 1.0 - std::pow((double)b2, t);
        AdamWParams h{lr, b1, b2, eps, wd, (float)bc1, (float)std::sqrt(bc2)};
        adamw_vec4<<<2048, 256>>>((float4*)dp, (const float4*)dg, (float4*)dm, (float4*)dv, n / 4, h);
        CUDA_CHECK(cudaGetLastError());
        for (int i = 0; i < n; ++i) {
            rp[i] *= 1.0 - (double)lr * wd;
            rm[i] = b1 * rm[i] + (1.0 - b1) * g[i];
            rv[i] = b2 * rv[i] + (1.0 - b2) * (double)g[i] * g[i];
            rp[i] -= (lr / bc1) * rm[i] / (std::sqrt(rv[i]) / std::sqrt(bc2) + eps);
        }
    }
    CUDA_CHECK(cudaMemcpy(p.data(), dp, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dp); cudaFree(dg); cudaFree(dm); cudaFree(dv);

    long bad = 0;
    for (int i = 0; i < n; ++i) bad += !(std::fabs(p[i] - rp[i]) <= 1e-6);
    if (bad) {
        printf("FAIL: %ld parameters\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
