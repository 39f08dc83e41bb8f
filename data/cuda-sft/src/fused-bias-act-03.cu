/*@prompt
Fused SwiGLU for a LLaMA-style MLP: the up-projection GEMM produced H of shape [tokens=4096, 2*inter] (first half = gate, second half = up) without bias; add the two bias vectors and compute out = silu(gate + b_gate) * (up + b_up), out is [4096, inter=5504]. One kernel, float.
@explanation
SwiGLU multiplies a SiLU-gated half of the projection with the other half. With the gate and up halves stored side by side in each row of H, output (t, j) needs `H[t][j]` and `H[t][inter + j]`; a 2D launch with j on `threadIdx.x` makes both reads coalesced, since consecutive threads read consecutive columns of each half. Doing bias, activation and product in one pass reads H once and writes the smaller output once, instead of materialising `silu(gate)` separately. `inter = 5504` is not a multiple of the 256-thread block width, so the column index is bounds-checked. The reference is computed in double; the tolerance is 1e-5 relative plus 1e-6 absolute.
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

__global__ void swiglu_bias(const float* __restrict__ H, const float* __restrict__ b_gate,
                            const float* __restrict__ b_up, float* __restrict__ out, int tokens, int inter)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int t = blockIdx.y;
    if (j >= inter || t >= tokens) return;
    const float* h = H + (size_t)t * 2 * inter;
    const float g = h[j] + b_gate[j];
    const float u = h[inter + j] + b_up[j];
    out[(size_t)t * inter + j] = g / (1.0f + expf(-g)) * u;
}

int main()
{
    const int tokens = 4096, inter = 5504;
    std::vector<float> H((size_t)tokens * 2 * inter), bg(inter), bu(inter), out((size_t)tokens * inter);
    for (size_t i = 0; i < H.size(); ++i) H[i] = 3.0f * std::sin(0.0021f * (float)(i % 99991));
    for (int j = 0; j < inter; ++j) { bg[j] = 0.01f * (j % 13) - 0.06f; bu[j] = 0.02f * (j % 5); }

    float *dH, *dbg, *dbu, *dout;
    CUDA_CHECK(cudaMalloc(&dH, H.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dbg, inter * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dbu, inter * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dH, H.data(), H.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dbg, bg.data(), inter * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dbu, bu.data(), inter * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(256);
    dim3 grid((inter + block.x - 1) / block.x, tokens);
    swiglu_bias<<<grid, block>>>(dH, dbg, dbu, dout, tokens, inter);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dH); cudaFree(dbg); cudaFree(dbu); cudaFree(dout);

    long bad = 0;
    for (int t = 0; t < tokens; ++t)
        for (int j = 0; j < inter; ++j) {
            double g = (double)H[(size_t)t * 2 * inter + j] + bg[j];
            double u = (double)H[(size_t)t * 2 * inter + inter + j] + bu[j];
            double ref = g / (1.0 + std::exp(-g)) * u;
            bad += !(std::fabs(out[(size_t)t * inter + j] - ref) <= 1e-5 * std::fabs(ref) + 1e-6);
        }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
