/*@prompt
Symmetric per-tensor int8 quantization on the GPU: find absmax over the whole tensor, scale = absmax / 127, q = clamp(round(x / scale), -127, 127). Then dequantize and check the round-trip error is at most scale / 2.
@explanation
Two kernels do the work. `absmax_kernel` reduces |x| over the tensor with a warp shuffle per warp and an `atomicMax` on the float's bit pattern per warp (for non-negative floats the integer order equals the float order). `quantize_kernel` reads that maximum, computes `scale = absmax / 127` on the device, and maps each value with `rintf(x / scale)`, which rounds halves to even, then clamps to [-127, 127] (symmetric, so -128 is unused). Keeping the scale on the device avoids a host round trip between the kernels. Because IEEE division and `rint` are exactly specified, the host reproduces every code bit for bit. The dequantised value `q * scale` must lie within half a quantisation step of x.
@after
Note that this two-kernel version reads x twice; for a fused single pass you need the absmax first anyway, unless the scale comes from a calibration step.
@*/
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

__global__ void absmax_kernel(const float* __restrict__ x, int n, int* absmax_bits)
{
    float m = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) m = fmaxf(m, fabsf(x[i]));
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
    if ((threadIdx.x & 31) == 0) atomicMax(absmax_bits, __float_as_int(m));
}

__global__ void quantize_kernel(const float* __restrict__ x, int8_t* __restrict__ q, int n,
                                const int* __restrict__ absmax_bits, float* __restrict__ scale_out)
{
    const float scale = __int_as_float(*absmax_bits) / 127.0f;
    if (blockIdx.x == 0 && threadIdx.x == 0) *scale_out = scale;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float r = rintf(x[i] / scale);
        q[i] = (int8_t)fminf(fmaxf(r, -127.0f), 127.0f);
    }
}

int main()
{
    const int n = 1 << 24;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = 3.0f * std::sin(0.0007f * i) * std::cos(0.13f * i);
    x[12345] = -4.75f;  // the absmax, negative

    float *dx, *dscale;
    int8_t* dq;
    int* dmax;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dq, n));
    CUDA_CHECK(cudaMalloc(&dmax, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dscale, sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dmax, 0, sizeof(int)));

    absmax_kernel<<<1024, 256>>>(dx, n, dmax);
    quantize_kernel<<<1024, 256>>>(dx, dq, n, dmax, dscale);
    CUDA_CHECK(cudaGetLastError());
    std::vector<int8_t> q(n);
    float scale = 0.0f;
    CUDA_CHECK(cudaMemcpy(q.data(), dq, n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&scale, dscale, sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dq); cudaFree(dmax); cudaFree(dscale);

    float amax = 0.0f;
    for (float v : x) amax = std::fmax(amax, std::fabs(v));
    const float ref_scale = amax / 127.0f;
    long bad = 0;
    for (int i = 0; i < n; ++i) {
        float r = std::rint(x[i] / ref_scale);
        int8_t ref_q = (int8_t)std::fmin(std::fmax(r, -127.0f), 127.0f);
        bad += q[i] != ref_q;
        // x / scale is itself rounded, hence the 1e-4 slack on the half-step bound.
        bad += !(std::fabs((double)q[i] * ref_scale - x[i]) <= 0.5 * ref_scale * (1.0 + 1e-4));
    }
    printf("scale gpu %.8g cpu %.8g\n", scale, ref_scale);
    if (bad || scale != ref_scale) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
