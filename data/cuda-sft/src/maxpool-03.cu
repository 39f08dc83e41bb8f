/*@prompt
Max pooling forward that also returns indices (like return_indices=True), plus the backward pass that routes each output gradient to the input position that won. Kernel 3x3, stride 2, no padding, input [16, 16, 65, 65]. Note that windows overlap.
@explanation
The forward kernel scans its 3x3 window and records both the maximum and the flat position `y * W + x` of the winner inside the (n, c) plane; on ties the first position in scan order wins (strict `>`), as in PyTorch. The backward pass gives every input position the sum of the gradients of all outputs whose window it won. With stride 2 and size 3 neighbouring windows overlap, so one input can win two or even four windows, and several threads may add into the same input gradient: the backward kernel therefore uses `atomicAdd`, after the gradient buffer has been cleared with `cudaMemset`. The test uses gradients that are multiples of 1/16, which makes every sum exact regardless of the order of the atomics, so both passes are checked exactly.
@*/
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

constexpr int K = 3, S = 2;

__global__ void maxpool_fwd_idx(const float* __restrict__ x, float* __restrict__ y, int* __restrict__ argmax,
                                int NC, int H, int W, int OH, int OW)
{
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= NC * OH * OW) return;
    const int ox = idx % OW, oy = (idx / OW) % OH, nc = idx / (OW * OH);
    const float* plane = x + (size_t)nc * H * W;
    float best = plane[(oy * S) * W + ox * S];
    int best_pos = (oy * S) * W + ox * S;
    for (int ky = 0; ky < K; ++ky)
        for (int kx = 0; kx < K; ++kx) {
            int pos = (oy * S + ky) * W + ox * S + kx;
            if (plane[pos] > best) { best = plane[pos]; best_pos = pos; }
        }
    y[idx] = best;
    argmax[idx] = best_pos;
}

__global__ void maxpool_bwd(const float* __restrict__ grad_y, const int* __restrict__ argmax, float* grad_x,
                            int NC, int H, int W, int OH, int OW)
{
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= NC * OH * OW) return;
    const int nc = idx / (OW * OH);
    atomicAdd(&grad_x[(size_t)nc * H * W + argmax[idx]], grad_y[idx]);
}

int main()
{
    const int N = 16, C = 16, H = 65, W = 65, NC = N * C;
    const int OH = (H - K) / S + 1, OW = (W - K) / S + 1;  // 32 x 32
    const int n_in = NC * H * W, n_out = NC * OH * OW;
    std::vector<float> x(n_in), gy(n_out), y(n_out), gx(n_in);
    std::vector<int> am(n_out);
    for (int i = 0; i < n_in; ++i) x[i] = (float)((i * 7919) % 1000);  // many ties on purpose
    for (int i = 0; i < n_out; ++i) gy[i] = (float)(i % 33 - 16) / 16.0f;

    float *dx, *dy, *dgy, *dgx;
    int* dam;
    CUDA_CHECK(cudaMalloc(&dx, n_in * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dgx, n_in * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n_out * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dgy, n_out * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dam, n_out * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n_in * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dgy, gy.data(), n_out * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dgx, 0, n_in * sizeof(float)));

    const int threads = 256, blocks = (n_out + threads - 1) / threads;
    maxpool_fwd_idx<<<blocks, threads>>>(dx, dy, dam, NC, H, W, OH, OW);
    maxpool_bwd<<<blocks, threads>>>(dgy, dam, dgx, NC, H, W, OH, OW);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(y.data(), dy, n_out * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(am.data(), dam, n_out * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gx.data(), dgx, n_in * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dgx); cudaFree(dy); cudaFree(dgy); cudaFree(dam);

    long bad = 0;
    std::vector<float> ref_gx(n_in, 0.0f);
    for (int nc = 0; nc < NC; ++nc)
        for (int oy = 0; oy < OH; ++oy)
            for (int ox = 0; ox < OW; ++ox) {
                const float* plane = &x[(size_t)nc * H * W];
                int best_pos = (oy * S) * W + ox * S;
                for (int ky = 0; ky < K; ++ky)
                    for (int kx = 0; kx < K; ++kx) {
                        int pos = (oy * S + ky) * W + ox * S + kx;
                        if (plane[pos] > plane[best_pos]) best_pos = pos;
                    }
                int o = (nc * OH + oy) * OW + ox;
                bad += am[o] != best_pos || y[o] != plane[best_pos];
                ref_gx[(size_t)nc * H * W + best_pos] += gy[o];
            }
    for (int i = 0; i < n_in; ++i) bad += gx[i] != ref_gx[i];
    if (bad) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
