/*@prompt
Filter the indices of all nonzero entries of a sparse-ish int array (like torch.nonzero on a 1D tensor, but order may differ) using warp-aggregated atomics: one atomicAdd per warp instead of one per element. Use __ballot_sync and __popc.
@explanation
Within a warp, `__ballot_sync(0xffffffff, pred)` returns a 32-bit mask with bit l set when lane l keeps its element, so `__popc(mask)` is the number of slots the whole warp needs. Lane 0 reserves them with a single `atomicAdd` on the global counter and broadcasts the base with `__shfl_sync`; each keeping lane then takes `base + __popc(mask & lanes_below_me)`, its rank among the warp's keepers. Global atomic traffic drops by up to 32x and indices stay ordered within each warp. Every lane must reach the ballot and the shuffle, so the grid-stride loop runs for a warp-uniform number of iterations (the loop bound is rounded up to a multiple of 32 and out-of-range lanes vote false). Across warps the order is arbitrary, so the check sorts the result before comparing with the CPU's list of nonzero indices.
@after
Warp aggregation keeps the order only within each warp; when the output must preserve the input order, use the scan-based compaction instead.
@*/
#include <algorithm>
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

__global__ void nonzero_indices(const int* __restrict__ x, int n, int* __restrict__ idx_out, unsigned int* count)
{
    const int lane = threadIdx.x & 31;
    const unsigned lanes_below = (1u << lane) - 1u;
    const int n_padded = (n + 31) & ~31;  // same trip count for every lane of a warp
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_padded; i += gridDim.x * blockDim.x) {
        const bool keep = i < n && x[i] != 0;
        const unsigned mask = __ballot_sync(0xffffffffu, keep);
        unsigned base = 0;
        if (lane == 0 && mask) base = atomicAdd(count, (unsigned)__popc(mask));
        base = __shfl_sync(0xffffffffu, base, 0);
        if (keep) idx_out[base + __popc(mask & lanes_below)] = i;
    }
}

int main()
{
    const int n = 10000019;
    std::vector<int> x(n, 0);
    for (int i = 0; i < n; ++i)
        if ((i * 2654435761u) % 100u < 7u) x[i] = 1 + i % 5;  // about 7% nonzero

    int *d_x, *d_idx;
    unsigned int* d_count;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_idx, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_count, sizeof(unsigned int)));
    CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_count, 0, sizeof(unsigned int)));

    nonzero_indices<<<2048, 256>>>(d_x, n, d_idx, d_count);  // blockDim must be a multiple of 32
    CUDA_CHECK(cudaGetLastError());
    unsigned int count = 0;
    CUDA_CHECK(cudaMemcpy(&count, d_count, sizeof(count), cudaMemcpyDeviceToHost));
    std::vector<int> idx(count);
    CUDA_CHECK(cudaMemcpy(idx.data(), d_idx, count * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_x); cudaFree(d_idx); cudaFree(d_count);

    std::vector<int> ref;
    for (int i = 0; i < n; ++i) if (x[i] != 0) ref.push_back(i);
    std::sort(idx.begin(), idx.end());
    printf("%u nonzeros\n", count);
    if (idx != ref) {
        printf("FAIL: expected %zu indices\n", ref.size());
        return 1;
    }
    printf("PASS\n");
    return 0;
}
