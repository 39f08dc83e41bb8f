/*@prompt
Implement one Adam optimizer step as a CUDA kernel with PyTorch's semantics (torch.optim.Adam, no weight decay): m = b1*m + (1-b1)*g, v = b2*v + (1-b2)*g^2, p -= lr * m_hat / (sqrt(v_hat) + eps) with bias-corrected m_hat, v_hat. Run 5 steps on 10 million parameters and compare with a CPU implementation.
@explanation
The update is purely element-wise, so one thread per parameter (in a grid-stride loop) reads p, g, m and v, updates the two moments, and writes p, m and v back: seven memory accesses per parameter, which makes the kernel bandwidth-bound. The bias corrections `1 - b1^t` and `1 - b2^t` depend only on the step number, so the host computes them once per step and passes them as arguments. The formula follows PyTorch's order of operations: `denom = sqrt(v) / sqrt(1 - b2^t) + eps` and `p -= (lr / (1 - b1^t)) * m / denom`; eps is added after the bias correction, which matters early in training when v is tiny. Over 5 steps with changing gradients the CPU reference (double) and the GPU must agree to 1e-6 absolute on the parameters and 1e-5 relative on the moments (plus a small absolute floor, since a moment can cancel to nearly zero).
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

__global__ void adam_step(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m, float* __restrict__ v,
                          int n, float lr, float b1, float b2, float eps, float bc1, float bc2_sqrt)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float gi = g[i];
        const float mi = b1 * m[i] + (1.0f - b1) * gi;
        const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float denom = sqrtf(vi) / bc2_sqrt + eps;
        p[i] -= (lr / bc1) * mi / denom;
    }
}

int main()
{
    const int n = 10000000, steps = 5;
    const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    std::vector<float> p(n), g(n), m(n), v(n);
    std::vector<double> rp(n), rm(n, 0.0), rv(n, 0.0);
    for (int i = 0; i < n; ++i) rp[i] = p[i] = std::sin(0.001f * i);

    float *dp, *dg, *dm, *dv;
    CUDA_CHECK(cudaMalloc(&dp, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dg, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dm, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dv, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dp, p.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dm, 0, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(dv, 0, n * sizeof(float)));

    for (int t = 1; t <= steps; ++t) {
        for (int i = 0; i < n; ++i) g[i] = 0.01f * std::cos(0.37f * i + t) + ((i % 1000 == 0) ? 1e-6f * t : 0.0f);
        CUDA_CHECK(cudaMemcpy(dg, g.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        const double bc1 = 1.0 - std::pow((double)b1, t), bc2 = 1.0 - std::pow((double)b2, t);
        adam_step<<<1024, 256>>>(dp, dg, dm, dv, n, lr, b1, b2, eps, (float)bc1, (float)std::sqrt(bc2));
        CUDA_CHECK(cudaGetLastError());
        for (int i = 0; i < n; ++i) {  // reference in double
            rm[i] = b1 * rm[i] + (1.0 - b1) * g[i];
            rv[i] = b2 * rv[i] + (1.0 - b2) * (double)g[i] * g[i];
            rp[i] -= (lr / bc1) * rm[i] / (std::sqrt(rv[i]) / std::sqrt(bc2) + eps);
        }
    }
    CUDA_CHECK(cudaMemcpy(p.data(), dp, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(m.data(), dm, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(v.data(), dv, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dp); cudaFree(dg); cudaFree(dm); cudaFree(dv);

    long bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += !(std::fabs(p[i] - rp[i]) <= 1e-6);
        // Moments can cancel to near zero, so their floors scale with the gradient size (0.01).
        bad += !(std::fabs(m[i] - rm[i]) <= 1e-5 * std::fabs(rm[i]) + 1e-8);
        bad += !(std::fabs(v[i] - rv[i]) <= 1e-5 * std::fabs(rv[i]) + 1e-13);
    }
    if (bad) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
