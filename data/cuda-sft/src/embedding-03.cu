/*@prompt
Backward pass of an embedding layer: given grad_out [n_tokens=20000, dim=256] and the token ids, accumulate grad_table[id] += grad_out[t] for every token. Frequent tokens appear many times, so use atomicAdd. Also explain how to make the test exact.
@explanation
The gradient of a lookup is a scatter-add: every occurrence of token v adds its output gradient row into row v of the table gradient. Rows of repeated tokens collide, so each thread adds its element with `atomicAdd`; a block per token and threads along `dim` keep the adds to a row coalesced, and contention only arises between blocks that carry the same token. Float atomics make the order of additions, and in general the rounding, nondeterministic. To make the result checkable bit for bit, the test uses gradient values that are multiples of 2^-6 with magnitude below 1, and no row receives more than a few thousand contributions, so every partial sum is an exact float and the result cannot depend on order. `grad_table` is zeroed first, since the kernel only accumulates.
@after
PyTorch's `nn.Embedding(sparse=False)` backward produces exactly this dense gradient; frameworks that need determinism sort the token ids first and reduce runs of equal ids.
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

__global__ void embedding_backward(const int* __restrict__ ids, const float* __restrict__ grad_out,
                                   float* __restrict__ grad_table, int dim)
{
    const int t = blockIdx.x;
    const size_t row = (size_t)ids[t] * dim;
    const float* g = grad_out + (size_t)t * dim;
    for (int d = threadIdx.x; d < dim; d += blockDim.x) atomicAdd(&grad_table[row + d], g[d]);
}

int main()
{
    const int vocab = 5000, dim = 256, n_tokens = 20000;
    std::vector<int> ids(n_tokens);
    std::vector<float> grad_out((size_t)n_tokens * dim), grad_table((size_t)vocab * dim);
    for (int t = 0; t < n_tokens; ++t) ids[t] = (t % 4 == 0) ? 7 : (t * 37) % vocab;  // token 7 is very frequent
    for (size_t i = 0; i < grad_out.size(); ++i) grad_out[i] = (float)((int)(i % 127) - 63) / 64.0f;

    std::vector<double> ref((size_t)vocab * dim, 0.0);
    for (int t = 0; t < n_tokens; ++t)
        for (int d = 0; d < dim; ++d) ref[(size_t)ids[t] * dim + d] += grad_out[(size_t)t * dim + d];

    int* d_ids;
    float *d_gout, *d_gtab;
    CUDA_CHECK(cudaMalloc(&d_ids, n_tokens * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_gout, grad_out.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_gtab, grad_table.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_ids, ids.data(), n_tokens * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_gout, grad_out.data(), grad_out.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_gtab, 0, grad_table.size() * sizeof(float)));

    embedding_backward<<<n_tokens, 128>>>(d_ids, d_gout, d_gtab, dim);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(grad_table.data(), d_gtab, grad_table.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_ids); cudaFree(d_gout); cudaFree(d_gtab);

    long bad = 0;
    for (size_t i = 0; i < grad_table.size(); ++i) bad += (double)grad_table[i] != ref[i];
    if (bad) {
        printf("FAIL: %ld entries\n", bad);
        return 1;
    }
    printf("PASS (grad row of token 7, col 0: %.4f)\n", grad_table[7 * dim]);
    return 0;
}
