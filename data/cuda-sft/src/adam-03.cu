/*@prompt
Mixed-precision Adam step: gradients arrive as fp16 multiplied by a loss scale (1024), the optimizer keeps fp32 master weights and must refresh the fp16 model copy. First unscale the gradients and detect inf/NaN (like torch.cuda.amp's GradScaler); if any gradient is non-finite, skip the whole step without a host round trip. Test one good step and one step with an overflowed gradient.
@explanation
Two kernels run back to back on the stream:
- `unscale_check` converts each fp16 gradient to float, multiplies by `1 / loss_scale`, writes the fp32 gradient, and sets a device-side `found_inf` flag with `atomicExch` when a value is not finite (overflow in the scaled fp16 backward pass shows up as inf).
- `adam_master` reads the flag first and returns immediately if it is set, so a bad step is skipped entirely on the device, with no `cudaMemcpy` of the flag and no synchronisation in between; the host only reads the flag afterwards to adjust its loss scale. Otherwise it performs the Adam update on the fp32 master weight and writes the rounded fp16 copy the model computes with.

The test takes one normal step and checks master weights against a double-precision CPU Adam and the fp16 copy against `__float2half(master)`; then it plants an inf in the gradients and checks that the flag is set and that nothing (master, fp16 copy, moments) changed.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_fp16.h>
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

__global__ void unscale_check(const __half* __restrict__ g16, float* __restrict__ g32, int n, float inv_scale, int* found_inf)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float g = __half2float(g16[i]) * inv_scale;
        if (!isfinite(g)) atomicExch(found_inf, 1);
        g32[i] = g;
    }
}

__global__ void adam_master(float* __restrict__ master, __half* __restrict__ model, const float* __restrict__ g,
                            float* __restrict__ m, float* __restrict__ v, int n, const int* __restrict__ found_inf,
                            float lr, float b1, float b2, float eps, float bc1, float bc2_sqrt)
{
    if (*found_inf) return;  // skipped step: leave every buffer untouched
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float mi = b1 * m[i] + (1.0f - b1) * g[i];
        const float vi = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        m[i] = mi;
        v[i] = vi;
        const float p = master[i] - (lr / bc1) * mi / (sqrtf(vi) / bc2_sqrt + eps);
        master[i] = p;
        model[i] = __float2half(p);
    }
}

int main()
{
    const int n = 1 << 22;
    const float scale = 1024.0f, lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    std::vector<float> master(n), g32(n);
    std::vector<__half> model(n), g16(n);
    for (int i = 0; i < n; ++i) {
        master[i] = std::sin(0.001f * i);
        model[i] = __float2half(master[i]);
        g16[i] = __float2half(scale * 0.01f * std::cos(0.01f * i));  // scaled gradient as the backward produced it
    }
    const std::vector<float> master0 = master;

    float *d_master, *d_g32, *d_m, *d_v;
    __half *d_model, *d_g16;
    int* d_inf;
    CUDA_CHECK(cudaMalloc(&d_master, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_g32, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_m, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_v, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_model, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_g16, n * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_inf, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_master, master.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_model, model.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_g16, g16.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_m, 0, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(d_v, 0, n * sizeof(float)));

    auto step = [&](int t) {
        CUDA_CHECK(cudaMemset(d_inf, 0, sizeof(int)));
        unscale_check<<<1024, 256>>>(d_g16, d_g32, n, 1.0f / scale, d_inf);
        const double bc1 = 1.0 - std::pow((double)b1, t), bc2 = 1.0 - std::pow((double)b2, t);
        adam_master<<<1024, 256>>>(d_master, d_model, d_g32, d_m, d_v, n, d_inf, lr, b1, b2, eps, (float)bc1,
                                   (float)std::sqrt(bc2));
        CUDA_CHECK(cudaGetLastError());
        int inf = 0;
        CUDA_CHECK(cudaMemcpy(&inf, d_inf, sizeof(int), cudaMemcpyDeviceToHost));
        return inf;
    };

    long bad = 0;
    bad += step(1) != 0;  // good step
    CUDA_CHECK(cudaMemcpy(master.data(), d_master, n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(model.data(), d_model, n * sizeof(__half), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        double g = (double)__half2float(g16[i]) / scale;
        double m = (1.0 - b1) * g, v = (1.0 - b2) * g * g;
        double ref = master0[i] - (lr / (1.0 - b1)) * m / (std::sqrt(v) / std::sqrt(1.0 - b2) + eps);
        bad += !(std::fabs(master[i] - ref) <= 1e-6);
        bad += __half2float(model[i]) != __half2float(__float2half(master[i]));
    }
    const std::vector<float> master1 = master;

    g16[12345] = __float2half(INFINITY);  // overflow in the scaled backward pass
    CUDA_CHECK(cudaMemcpy(d_g16, g16.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
    bad += step(2) != 1;  // must be detected and skipped
    CUDA_CHECK(cudaMemcpy(master.data(), d_master, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) bad += master[i] != master1[i];
    cudaFree(d_master); cudaFree(d_g32); cudaFree(d_m); cudaFree(d_v);
    cudaFree(d_model); cudaFree(d_g16); cudaFree(d_inf);

    if (bad) {
        printf("FAIL: %ld problems\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
