/*@prompt
fp16 embedding lookup with a padding index and output scaling (as in the original Transformer, which multiplies embeddings by sqrt(d_model)). ids are int64 [16, 512], table is half [50000, 768], padding_idx = 0 must produce an all-zero row. Use __half2 for the copies.
@explanation
Each token gets one block of 128 threads, which moves its 768-wide row as 384 `__half2` pairs, three per thread. The scaling is done in float, `__half2float(v) * scale`, and rounded back to half once; the same expression on the host gives bit-identical results, so the check is exact. Padding tokens (`id == padding_idx`) skip the table read entirely and write zeros, which is what `nn.Embedding(padding_idx=0)` returns regardless of what that table row holds (the test deliberately fills row 0 with non-zero values). The ids are 64-bit, as PyTorch's `LongTensor`, and the row offset is formed in 64-bit arithmetic.
@*/
#include <cmath>
#include <cstdint>
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

__global__ void embed_half_scaled(const int64_t* __restrict__ ids, const __half2* __restrict__ table,
                                  __half2* __restrict__ out, int dim2, int64_t padding_idx, float scale)
{
    const int64_t id = ids[blockIdx.x];
    __half2* dst = out + (size_t)blockIdx.x * dim2;
    if (id == padding_idx) {
        for (int j = threadIdx.x; j < dim2; j += blockDim.x) dst[j] = __float2half2_rn(0.0f);
        return;
    }
    const __half2* src = table + id * dim2;
    for (int j = threadIdx.x; j < dim2; j += blockDim.x) {
        float2 v = __half22float2(src[j]);
        dst[j] = __floats2half2_rn(v.x * scale, v.y * scale);
    }
}

int main()
{
    const int vocab = 50000, dim = 768, batch = 16, seq = 512;
    const int n_tokens = batch * seq;
    const int64_t padding_idx = 0;
    const float scale = std::sqrt((float)dim);

    std::vector<__half> table((size_t)vocab * dim), out((size_t)n_tokens * dim);
    std::vector<int64_t> ids(n_tokens);
    for (size_t i = 0; i < table.size(); ++i) table[i] = __float2half(0.01f * (float)((int)(i % 301) - 150));
    for (int t = 0; t < n_tokens; ++t) ids[t] = (t % seq >= 400) ? padding_idx : (int64_t)((t * 104729LL) % vocab);

    int64_t* d_ids;
    __half *d_table, *d_out;
    CUDA_CHECK(cudaMalloc(&d_ids, n_tokens * sizeof(int64_t)));
    CUDA_CHECK(cudaMalloc(&d_table, table.size() * sizeof(__half)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(d_ids, ids.data(), n_tokens * sizeof(int64_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_table, table.data(), table.size() * sizeof(__half), cudaMemcpyHostToDevice));

    embed_half_scaled<<<n_tokens, 128>>>(d_ids, reinterpret_cast<const __half2*>(d_table),
                                         reinterpret_cast<__half2*>(d_out), dim / 2, padding_idx, scale);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    cudaFree(d_ids); cudaFree(d_table); cudaFree(d_out);

    long bad = 0, padded = 0;
    for (int t = 0; t < n_tokens; ++t) {
        padded += ids[t] == padding_idx;
        for (int d = 0; d < dim; ++d) {
            float ref = (ids[t] == padding_idx)
                            ? 0.0f
                            : __half2float(__float2half(__half2float(table[(size_t)ids[t] * dim + d]) * scale));
            bad += __half2float(out[(size_t)t * dim + d]) != ref;
        }
    }
    printf("%ld padding tokens\n", padded);
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
