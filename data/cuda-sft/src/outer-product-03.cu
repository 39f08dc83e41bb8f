/*@prompt
Batched outer products in half precision: given u of shape [B=64, M=256] and v of shape [B=64, N=384] (fp16), compute out[b][i][j] = u[b][i] * v[b][j] as fp16. Use a 3D grid (z = batch) and have each thread produce two adjacent outputs with __half2.
@explanation
`blockIdx.z` picks the batch entry, and within it a 2D grid tiles the M x N output. Each thread owns two adjacent columns, j and j+1: it broadcasts `u[b][i]` into both halves of a `__half2` with `__half2half2`, loads the `v` pair as one `__half2`, and multiplies them with a single `__hmul2`, storing both products with one 4-byte write. N must therefore be even, which the host checks. The product of two fp16 values, rounded once to fp16, is exactly what the host gets by multiplying the float conversions (the float product of two halves is exact) and rounding with `__float2half`, so the comparison is exact.
@*/
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

__global__ void batched_outer_half2(const __half* __restrict__ u, const __half* __restrict__ v,
                                    __half* __restrict__ out, int M, int N)
{
    const int b = blockIdx.z;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int jp = blockIdx.x * blockDim.x + threadIdx.x;  // pair index: columns 2*jp, 2*jp+1
    if (i >= M || 2 * jp >= N) return;
    const __half2 ui = __half2half2(u[(size_t)b * M + i]);
    const __half2 vj = reinterpret_cast<const __half2*>(v + (size_t)b * N)[jp];
    reinterpret_cast<__half2*>(out + ((size_t)b * M + i) * N)[jp] = __hmul2(ui, vj);
}

int main()
{
    const int B = 64, M = 256, N = 384;
    if (N % 2 != 0) {
        printf("FAIL: N must be even\n");
        return 1;
    }
    std::vector<__half> u((size_t)B * M), v((size_t)B * N), out((size_t)B * M * N);
    for (size_t k = 0; k < u.size(); ++k) u[k] = __float2half((float)((int)(k % 97) - 48) / 16.0f);
    for (size_t k = 0; k < v.size(); ++k) v[k] = __float2half((float)((int)(k % 89) - 44) / 10.0f);

    __half *du, *dv, *dout;
    CUDA_CHECK(cudaMalloc(&du, u.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dv, v.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dout, out.size() * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(du, u.data(), u.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv, v.data(), v.size() * sizeof(__half), cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((N / 2 + block.x - 1) / block.x, (M + block.y - 1) / block.y, B);
    batched_outer_half2<<<grid, block>>>(du, dv, dout, M, N);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    cudaFree(du); cudaFree(dv); cudaFree(dout);

    long bad = 0;
    for (int b = 0; b < B; ++b)
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                float ref = __half2float(__float2half(__half2float(u[(size_t)b * M + i]) * __half2float(v[(size_t)b * N + j])));
                bad += __half2float(out[((size_t)b * M + i) * N + j]) != ref;
            }
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
