/*@prompt
Bitonic sort of key-value pairs (2^21 uint32 keys with uint32 payloads) that minimises kernel launches: do all steps with stride j <= 512 inside shared memory on 1024-element chunks, and only the steps with larger strides as global-memory launches.
@explanation
A compare-exchange with stride j only pairs elements within the same aligned block of 2j elements, so every step with j <= 512 stays inside one 1024-element chunk and can run in shared memory. The sort therefore uses two kernels:
- `local_steps(k, j_start)` loads a chunk of keys and values into shared memory, runs the steps j = j_start, ..., 1 of stage k with `__syncthreads()` between them, and writes the chunk back; with `k = 2..1024` on the first call (a loop inside the kernel) it sorts each chunk into alternating bitonic runs.
- `global_step(k, j)` performs one step with j >= 1024 directly in global memory.

For each stage k > 1024 the host launches the global steps for j = k/2 down to 1024 and then one `local_steps` launch for the remaining ten strides, so a stage costs log2(k) - 9 launches instead of log2(k). The ascending/descending decision always uses the element's global index, so the local and global steps agree on directions. Values travel with their keys; the check confirms the keys are sorted and that every (key, value) pair of the input appears exactly once in the output.
@*/
#include <algorithm>
#include <cstdint>
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

constexpr unsigned CHUNK = 1024, HALF = CHUNK / 2;  // blockDim.x == HALF

__device__ __forceinline__ void cmp_swap(uint32_t& ka, uint32_t& va, uint32_t& kb, uint32_t& vb, bool ascending)
{
    if ((ka > kb) == ascending) {
        uint32_t t = ka; ka = kb; kb = t;
        t = va; va = vb; vb = t;
    }
}

// Runs stages k_first..k_last (doubling), each from stride min(k/2, j_start) down to 1, on one chunk.
__global__ void local_steps(uint32_t* keys, uint32_t* vals, unsigned k_first, unsigned k_last, unsigned j_start)
{
    __shared__ uint32_t sk[CHUNK], sv[CHUNK];
    const unsigned base = blockIdx.x * CHUNK, t = threadIdx.x;
    sk[t] = keys[base + t]; sv[t] = vals[base + t];
    sk[t + HALF] = keys[base + t + HALF]; sv[t + HALF] = vals[base + t + HALF];
    __syncthreads();
    for (unsigned k = k_first; k <= k_last; k <<= 1)
        for (unsigned j = min(k >> 1, j_start); j > 0; j >>= 1) {
            const unsigned i = 2 * t - (t & (j - 1));
            cmp_swap(sk[i], sv[i], sk[i + j], sv[i + j], ((base + i) & k) == 0);
            __syncthreads();
        }
    keys[base + t] = sk[t]; vals[base + t] = sv[t];
    keys[base + t + HALF] = sk[t + HALF]; vals[base + t + HALF] = sv[t + HALF];
}

__global__ void global_step(uint32_t* keys, uint32_t* vals, unsigned k, unsigned j)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;  // one thread per pair
    const unsigned i = 2 * t - (t & (j - 1));
    cmp_swap(keys[i], vals[i], keys[i + j], vals[i + j], (i & k) == 0);
}

int main()
{
    const unsigned n = 1u << 21;
    std::vector<uint32_t> keys(n), vals(n), ok(n), ov(n);
    uint32_t s = 777u;
    for (unsigned i = 0; i < n; ++i) { s = s * 1664525u + 1013904223u; keys[i] = s >> 12; vals[i] = i; }

    uint32_t *dk, *dv;
    CUDA_CHECK(cudaMalloc(&dk, n * sizeof(uint32_t)));
    CUDA_CHECK(cudaMalloc(&dv, n * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemcpy(dk, keys.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv, vals.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));

    const unsigned chunks = n / CHUNK, pair_blocks = (n / 2) / 256;
    local_steps<<<chunks, HALF>>>(dk, dv, 2, CHUNK, HALF);  // stages 2..1024 entirely in shared memory
    for (unsigned k = 2 * CHUNK; k <= n; k <<= 1) {
        for (unsigned j = k >> 1; j >= CHUNK; j >>= 1) global_step<<<pair_blocks, 256>>>(dk, dv, k, j);
        local_steps<<<chunks, HALF>>>(dk, dv, k, k, HALF);  // strides 512..1 of stage k
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(ok.data(), dk, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ov.data(), dv, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    cudaFree(dk); cudaFree(dv);

    long bad = 0;
    std::vector<char> seen(n, 0);
    for (unsigned i = 0; i < n; ++i) {
        if (i > 0 && ok[i - 1] > ok[i]) ++bad;                           // sorted
        if (ov[i] >= n || seen[ov[i]] || keys[ov[i]] != ok[i]) ++bad;     // a permutation of the input pairs
        else seen[ov[i]] = 1;
    }
    if (bad) {
        printf("FAIL: %ld problems\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
