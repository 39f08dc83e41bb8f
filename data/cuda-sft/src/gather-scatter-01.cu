/*@prompt
gather kernel: out[i] = src[idx[i]] for 8M random int32 indices into a float array of 1M elements
@explanation
Each thread reads one index and then the source element it points to. The index read and the output write are coalesced; the `src[idx[i]]` read is a random access, so its speed depends on how well the 4 MB source array stays in L2 cache (it fits comfortably on recent GPUs). Loading through `__ldg` marks the data read-only for the kernel's lifetime, so it may be served by the read-only data cache path; `const __restrict__` pointers usually let the compiler do this on its own. A gather is a pure copy, so the check is exact.
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

__global__ void gather(const float* __restrict__ src, const int* __restrict__ idx, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __ldg(&src[__ldg(&idx[i])]);
}

int main()
{
    const int n_src = 1 << 20, n = 8 << 20;
    std::vector<float> src(n_src), out(n);
    std::vector<int> idx(n);
    for (int i = 0; i < n_src; ++i) src[i] = 0.5f * i;
    unsigned s = 99u;
    for (int i = 0; i < n; ++i) {
        s ^= s << 13; s ^= s >> 17; s ^= s << 5;
        idx[i] = (int)(s % (unsigned)n_src);
    }

    float *d_src, *d_out;
    int* d_idx;
    CUDA_CHECK(cudaMalloc(&d_src, n_src * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_idx, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_src, src.data(), n_src * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_idx, idx.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    int threads = 256;
    gather<<<(n + threads - 1) / threads, threads>>>(d_src, d_idx, d_out, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_src); cudaFree(d_idx); cudaFree(d_out);

    long bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != src[idx[i]];
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
