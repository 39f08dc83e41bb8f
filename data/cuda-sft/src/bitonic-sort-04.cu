/*@prompt
Implement argsort (descending, like torch.argsort(x, descending=True) with ties ordered by index) for 1,000,000 floats using a bitonic network. The length is not a power of two, so pad it. Return the permutation of indices.
@explanation
A bitonic network needs a power-of-two length, so the keys are copied into a buffer of 2^20 entries together with their indices, and the 48,576 padding slots receive key -inf and indices >= n. The comparison is lexicographic on (key descending, index ascending): it is a strict total order, which makes the network's result unique and equal to a stable descending sort, and the padding, being smaller than every real key, sinks to the end where it is simply ignored. Each global step launches one thread per compare-exchange pair (`i = 2t - (t & (j - 1))`, partner `i + j`), so no thread idles. After the last step the first n indices are the answer. The CPU reference is `std::stable_sort` of the indices by descending key, and the permutation must match exactly.
@*/
#include <algorithm>
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

__device__ __forceinline__ bool before(float ka, int ia, float kb, int ib)  // "a comes first"
{
    return ka > kb || (ka == kb && ia < ib);
}

__global__ void init_padded(const float* x, int n, float* keys, int* idx, int n_pad)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_pad) {
        keys[i] = (i < n) ? x[i] : -INFINITY;
        idx[i] = i;
    }
}

__global__ void argsort_step(float* keys, int* idx, unsigned n_pairs, unsigned k, unsigned j)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n_pairs) return;
    const unsigned i = 2 * t - (t & (j - 1)), p = i + j;
    const bool forward = (i & k) == 0;  // forward: put the "before" element at i
    const float ka = keys[i], kb = keys[p];
    const int ia = idx[i], ib = idx[p];
    if (before(kb, ib, ka, ia) == forward) {
        keys[i] = kb; keys[p] = ka;
        idx[i] = ib; idx[p] = ia;
    }
}

int main()
{
    const int n = 1000000;
    unsigned n_pad = 1;
    while (n_pad < (unsigned)n) n_pad <<= 1;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = (float)((i * 7919) % 4099) * 0.25f;  // plenty of ties

    float *dx, *dkeys;
    int* didx;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dkeys, n_pad * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&didx, n_pad * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 256;
    init_padded<<<(n_pad + threads - 1) / threads, threads>>>(dx, n, dkeys, didx, n_pad);
    const unsigned pair_blocks = (n_pad / 2 + threads - 1) / threads;
    for (unsigned k = 2; k <= n_pad; k <<= 1)
        for (unsigned j = k >> 1; j > 0; j >>= 1) argsort_step<<<pair_blocks, threads>>>(dkeys, didx, n_pad / 2, k, j);
    CUDA_CHECK(cudaGetLastError());
    std::vector<int> perm(n);
    CUDA_CHECK(cudaMemcpy(perm.data(), didx, n * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(dx); cudaFree(dkeys); cudaFree(didx);

    std::vector<int> ref(n);
    for (int i = 0; i < n; ++i) ref[i] = i;
    std::stable_sort(ref.begin(), ref.end(), [&](int a, int b) { return x[a] > x[b]; });
    if (perm != ref) {
        int first = 0;
        while (perm[first] == ref[first]) ++first;
        printf("FAIL: first difference at position %d\n", first);
        return 1;
    }
    printf("PASS (largest key %.2f at index %d)\n", x[perm[0]], perm[0]);
    return 0;
}
