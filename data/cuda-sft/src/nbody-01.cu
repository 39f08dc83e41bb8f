/*@prompt
Compute gravitational accelerations for an all-pairs N-body system (N = 8192) on the GPU: a_i = sum_j m_j (r_j - r_i) / (|r_j - r_i|^2 + eps^2)^(3/2), with G = 1 and softening eps = 0.01. Store positions as float4 with the mass in w. Start with the simple version where every thread reads all bodies from global memory.
@explanation
One thread computes the acceleration of one body by looping over all N bodies. The softening term `eps^2` keeps the force finite for close encounters and makes the j = i term harmless: its displacement is zero, so it contributes nothing and needs no branch. `rsqrtf` gives `1/sqrt(d2)`, which is cubed to get the `d2^(-3/2)` factor, saving a division and a `powf`. Packing the mass into the fourth component of a `float4` means each body is one 16-byte load. All threads of a warp read the same body j at the same time, a broadcast, so even this version is compute-bound rather than bandwidth-bound; the tiled variant moves the bodies through shared memory. The CPU reference uses double; the error of each component is bounded by 1e-4 times the sum of the magnitudes of the contributions.
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

__global__ void accelerations(const float4* __restrict__ body, float3* __restrict__ acc, int n, float eps2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float4 bi = body[i];
    float3 a = make_float3(0.0f, 0.0f, 0.0f);
    for (int j = 0; j < n; ++j) {
        const float4 bj = body[j];
        const float dx = bj.x - bi.x, dy = bj.y - bi.y, dz = bj.z - bi.z;
        const float inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
        const float f = bj.w * inv * inv * inv;
        a.x += f * dx;
        a.y += f * dy;
        a.z += f * dz;
    }
    acc[i] = a;
}

int main()
{
    const int n = 8192;
    const float eps = 0.01f;
    std::vector<float4> body(n);
    std::vector<float3> acc(n);
    unsigned s = 1u;
    auto uni = [&]() { s = s * 1664525u + 1013904223u; return (float)(s >> 8) / 16777216.0f; };
    for (auto& b : body) b = make_float4(2 * uni() - 1, 2 * uni() - 1, 2 * uni() - 1, 0.5f + uni());

    float4* d_body;
    float3* d_acc;
    CUDA_CHECK(cudaMalloc(&d_body, n * sizeof(float4)));
    CUDA_CHECK(cudaMalloc(&d_acc, n * sizeof(float3)));
    CUDA_CHECK(cudaMemcpy(d_body, body.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
    accelerations<<<(n + 127) / 128, 128>>>(d_body, d_acc, n, eps * eps);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(acc.data(), d_acc, n * sizeof(float3), cudaMemcpyDeviceToHost));
    cudaFree(d_body);
    cudaFree(d_acc);

    long bad = 0;
    for (int i = 0; i < n; ++i) {
        double ax = 0, ay = 0, az = 0, mx = 0, my = 0, mz = 0;
        for (int j = 0; j < n; ++j) {
            double dx = (double)body[j].x - body[i].x, dy = (double)body[j].y - body[i].y, dz = (double)body[j].z - body[i].z;
            double d2 = dx * dx + dy * dy + dz * dz + (double)eps * eps;
            double f = body[j].w / (d2 * std::sqrt(d2));
            ax += f * dx; ay += f * dy; az += f * dz;
            mx += std::fabs(f * dx); my += std::fabs(f * dy); mz += std::fabs(f * dz);
        }
        bad += !(std::fabs(acc[i].x - ax) <= 1e-4 * mx) || !(std::fabs(acc[i].y - ay) <= 1e-4 * my) ||
               !(std::fabs(acc[i].z - az) <= 1e-4 * mz);
    }
    if (bad) {
        printf("FAIL: %ld bodies\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
