/*@prompt
Token embedding lookup for a language model: token ids [batch*seq = 8192] (int32), embedding table [vocab=32000, dim=1024] float, output [8192, 1024]. Use one block per token and vectorized float4 copies.
@explanation
Embedding lookup is a row gather: output row t is a copy of table row `ids[t]`. One 256-thread block per token copies the 1024-float row as 256 `float4` values, so each thread moves exactly one 16-byte chunk and every warp reads and writes 512 contiguous bytes. The table row offset is computed in `size_t`, since `vocab * dim` reaches 32.8 million elements and a larger table could overflow 32-bit arithmetic. The row length must be a multiple of 4 for the `float4` view, which the host asserts. The token ids include repeats and both ends of the vocabulary; the check is exact because nothing is computed.
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

__global__ void embedding_lookup(const int* __restrict__ ids, const float4* __restrict__ table,
                                 float4* __restrict__ out, int dim4)
{
    const int t = blockIdx.x;
    const size_t src = (size_t)ids[t] * dim4;
    const size_t dst = (size_t)t * dim4;
    for (int j = threadIdx.x; j < dim4; j += blockDim.x) out[dst + j] = table[src + j];
}

int main()
{
    const int vocab = 32000, dim = 1024, n_tokens = 8192;
    if (dim % 4 != 0) {
        printf("FAIL: dim must be a multiple of 4\n");
        return 1;
    }
    std::vector<float> table((size_t)vocab * dim), out((size_t)n_tokens * dim);
    std::vector<int> ids(n_tokens);
    for (size_t i = 0; i < table.size(); ++i) table[i] = (float)(i % 999983) * 1e-3f;
    for (int t = 0; t < n_tokens; ++t) ids[t] = (t * 7919 + t / 3) % vocab;
    ids[0] = 0;
    ids[1] = vocab - 1;

    int* d_ids;
    float *d_table, *d_out;
    CUDA_CHECK(cudaMalloc(&d_ids, n_tokens * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_table, table.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_ids, ids.data(), n_tokens * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_table, table.data(), table.size() * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 256;
    embedding_lookup<<<n_tokens, threads>>>(d_ids, reinterpret_cast<const float4*>(d_table),
                                            reinterpret_cast<float4*>(d_out), dim / 4);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_ids); cudaFree(d_table); cudaFree(d_out);

    long bad = 0;
    for (int t = 0; t < n_tokens; ++t)
        for (int d = 0; d < dim; ++d) bad += out[(size_t)t * dim + d] != table[(size_t)ids[t] * dim + d];
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
