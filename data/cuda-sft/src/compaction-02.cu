/*@prompt
I need a stable stream compaction (keep even integers, preserve their original order) for 500,000 ints. Show the scan-based three-kernel approach: count per block, scan the counts, then each block scatters its kept elements to the right offsets.
@explanation
Stability requires that each kept element's output index equals the number of kept elements before it, which is an exclusive prefix sum of the keep flags:
- `count_kept` lets each 512-thread block count its kept elements with `__syncthreads_count(flag)`, a barrier that also returns how many threads passed a non-zero predicate.
- `scan_counts` runs as one 1024-thread block and turns the per-block counts into exclusive offsets with a Hillis-Steele scan in shared memory (977 blocks fit), also writing the total.
- `scatter_kept` recomputes each thread's flag, scans the flags within the block (again Hillis-Steele, in shared memory) to get the element's rank among the block's kept elements, and writes it to `offset[block] + rank`.

Everything is integer, so the output must equal a CPU `copy_if` exactly, in order.
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

constexpr int BLOCK = 512;
constexpr int SCAN_BLOCK = 1024;

__device__ __forceinline__ bool keep(int v) { return (v & 1) == 0; }

__global__ void count_kept(const int* in, int n, int* counts)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    int c = __syncthreads_count(i < n && keep(in[i]));
    if (threadIdx.x == 0) counts[blockIdx.x] = c;
}

// Exclusive scan of counts[0..nb) into offsets[0..nb], offsets[nb] = total. One block, nb <= SCAN_BLOCK.
__global__ void scan_counts(const int* counts, int* offsets, int nb)
{
    __shared__ int s[2][SCAN_BLOCK];
    const int t = threadIdx.x;
    int cur = 0;
    s[cur][t] = (t < nb) ? counts[t] : 0;
    __syncthreads();
    for (int d = 1; d < SCAN_BLOCK; d <<= 1) {
        s[1 - cur][t] = s[cur][t] + (t >= d ? s[cur][t - d] : 0);
        __syncthreads();
        cur = 1 - cur;
    }
    int inclusive = s[cur][t];
    if (t < nb) offsets[t] = inclusive - ((t < nb) ? counts[t] : 0);
    if (t == nb - 1) offsets[nb] = inclusive;
}

__global__ void scatter_kept(const int* in, int n, const int* offsets, int* out)
{
    __shared__ int s[2][BLOCK];
    const int t = threadIdx.x;
    const int i = blockIdx.x * BLOCK + t;
    const int v = (i < n) ? in[i] : 1;
    const int flag = (i < n && keep(v)) ? 1 : 0;
    int cur = 0;
    s[cur][t] = flag;
    __syncthreads();
    for (int d = 1; d < BLOCK; d <<= 1) {
        s[1 - cur][t] = s[cur][t] + (t >= d ? s[cur][t - d] : 0);
        __syncthreads();
        cur = 1 - cur;
    }
    if (flag) out[offsets[blockIdx.x] + s[cur][t] - 1] = v;  // inclusive rank - 1
}

int main()
{
    const int n = 500000;
    const int nb = (n + BLOCK - 1) / BLOCK;
    if (nb > SCAN_BLOCK) {
        printf("FAIL: too many blocks for the single-block scan\n");
        return 1;
    }
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i) in[i] = (int)((i * 2654435761u) >> 7) % 1000 - 500;

    int *d_in, *d_counts, *d_offsets, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_counts, nb * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_offsets, (nb + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    count_kept<<<nb, BLOCK>>>(d_in, n, d_counts);
    scan_counts<<<1, SCAN_BLOCK>>>(d_counts, d_offsets, nb);
    scatter_kept<<<nb, BLOCK>>>(d_in, n, d_offsets, d_out);
    CUDA_CHECK(cudaGetLastError());

    int total = 0;
    CUDA_CHECK(cudaMemcpy(&total, d_offsets + nb, sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<int> out(total);
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, total * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_in); cudaFree(d_counts); cudaFree(d_offsets); cudaFree(d_out);

    std::vector<int> ref;
    for (int v : in) if ((v & 1) == 0) ref.push_back(v);
    printf("kept %d of %d\n", total, n);
    if (out != ref) {
        printf("FAIL: output differs from the stable CPU compaction\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
