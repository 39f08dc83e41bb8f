/*@prompt
Fused RoPE for q and k in fp16 during decoding with grouped-query attention: q is [tokens=4096, 32 heads, 128], k is [4096, 8 heads, 128], each token has an arbitrary position id (int32), and there is a float cos/sin cache of shape [max_pos=8192, 64]. NeoX rotate_half layout. Rotate both tensors in one launch, in place, using __half2 loads.
@explanation
One launch covers both tensors: the grid enumerates (token, head) slots over `32 + 8` heads, and a slot with head index >= 32 refers to k. Within a head, each thread handles two neighbouring rotation pairs, (i, i + 64) and (i + 1, i + 65) for even i, which lets it load `x[i..i+1]` and `x[i+64..i+65]` as two `__half2` values, i.e. 4-byte accesses where scalar halves would need 2-byte ones. The angle comes from the cache row of the token's position id rather than from the token index, which is what decoding with a KV cache and packed or padded batches requires. The rotation is computed in float and rounded to half once. The host repeats the computation in double from the same half inputs and accepts differences up to 2e-3 relative plus 1e-4 absolute, about one half-precision ulp.
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

constexpr int D = 128, HALF = D / 2;

__global__ void rope_qk_half(__half* __restrict__ q, __half* __restrict__ k, const int* __restrict__ pos_ids,
                             const float* __restrict__ cos_c, const float* __restrict__ sin_c,
                             int tokens, int hq, int hk)
{
    const int slot = blockIdx.x;  // (token, head) over hq + hk heads
    const int token = slot / (hq + hk), head = slot % (hq + hk);
    if (token >= tokens) return;
    __half* x = (head < hq) ? q + ((size_t)token * hq + head) * D : k + ((size_t)token * hk + (head - hq)) * D;
    const int pos = pos_ids[token];
    const int i = 2 * threadIdx.x;  // blockDim.x == HALF / 2
    const float2 c = make_float2(cos_c[pos * HALF + i], cos_c[pos * HALF + i + 1]);
    const float2 s = make_float2(sin_c[pos * HALF + i], sin_c[pos * HALF + i + 1]);
    __half2* lo = reinterpret_cast<__half2*>(x + i);
    __half2* hi = reinterpret_cast<__half2*>(x + i + HALF);
    const float2 a = __half22float2(*lo), b = __half22float2(*hi);
    *lo = __floats2half2_rn(a.x * c.x - b.x * s.x, a.y * c.y - b.y * s.y);
    *hi = __floats2half2_rn(b.x * c.x + a.x * s.x, b.y * c.y + a.y * s.y);
}

int main()
{
    const int tokens = 4096, hq = 32, hk = 8, max_pos = 8192;
    std::vector<__half> q((size_t)tokens * hq * D), k((size_t)tokens * hk * D);
    std::vector<float> cos_c((size_t)max_pos * HALF), sin_c(cos_c.size());
    std::vector<int> pos(tokens);
    for (int p = 0; p < max_pos; ++p)
        for (int i = 0; i < HALF; ++i) {
            double a = p * std::pow(500000.0, -2.0 * i / D);
            cos_c[(size_t)p * HALF + i] = (float)std::cos(a);
            sin_c[(size_t)p * HALF + i] = (float)std::sin(a);
        }
    for (int t = 0; t < tokens; ++t) pos[t] = (t * 37 + 5) % max_pos;  // arbitrary positions
    for (size_t e = 0; e < q.size(); ++e) q[e] = __float2half(std::sin(0.01f * (float)(e % 9973)));
    for (size_t e = 0; e < k.size(); ++e) k[e] = __float2half(1.5f * std::cos(0.02f * (float)(e % 7919)));
    const std::vector<__half> q0 = q, k0 = k;

    __half *dq, *dk;
    float *dc, *ds;
    int* dp;
    CUDA_CHECK(cudaMalloc(&dq, q.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dk, k.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&dc, cos_c.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ds, sin_c.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dp, tokens * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dq, q.data(), q.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dk, k.data(), k.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc, cos_c.data(), cos_c.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(ds, sin_c.data(), sin_c.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dp, pos.data(), tokens * sizeof(int), cudaMemcpyHostToDevice));

    rope_qk_half<<<tokens * (hq + hk), HALF / 2>>>(dq, dk, dp, dc, ds, tokens, hq, hk);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(q.data(), dq, q.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(k.data(), dk, k.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    cudaFree(dq); cudaFree(dk); cudaFree(dc); cudaFree(ds); cudaFree(dp);

    long bad = 0;
    auto check = [&](const std::vector<__half>& in, const std::vector<__half>& out, int heads) {
        for (int t = 0; t < tokens; ++t)
            for (int h = 0; h < heads; ++h)
                for (int i = 0; i < HALF; ++i) {
                    size_t b = ((size_t)t * heads + h) * D;
                    double c = cos_c[(size_t)pos[t] * HALF + i], s = sin_c[(size_t)pos[t] * HALF + i];
                    double x0 = __half2float(in[b + i]), x1 = __half2float(in[b + i + HALF]);
                    double r0 = x0 * c - x1 * s, r1 = x1 * c + x0 * s;
                    bad += !(std::fabs(__half2float(out[b + i]) - r0) <= 2e-3 * std::fabs(r0) + 1e-4);
                    bad += !(std::fabs(__half2float(out[b + i + HALF]) - r1) <= 2e-3 * std::fabs(r1) + 1e-4);
                }
    };
    check(q0, q, hq);
    check(k0, k, hk);
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
