/*@prompt
Apply a permutation on the GPU by scattering: out[perm[i]] = in[i]. Then undo it with a gather using the same permutation (back[i] = out[perm[i]]) and check that we get the original array. Use double values and a grid-stride loop.
@explanation
A scatter writes to data-dependent locations, so two threads writing the same slot would race; for a permutation every target is distinct, which makes the plain store safe without atomics. Scattering by `perm` places element i at position `perm[i]`; gathering through the same `perm` reads it back from there, so the round trip must reproduce the input exactly, and the host also checks the scattered array directly. The permutation is a Fisher-Yates shuffle with a fixed seed. Both kernels use grid-stride loops, so the launch uses a modest fixed number of blocks.
@*/
#include <cstdio>
#include <cstdlib>
#include <utility>
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

__global__ void scatter_perm(const double* in, const int* perm, double* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[perm[i]] = in[i];
}

__global__ void gather_perm(const double* in, const int* perm, double* out, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[perm[i]];
}

int main()
{
    const int n = 3000000;
    std::vector<double> in(n), scattered(n), back(n);
    std::vector<int> perm(n);
    for (int i = 0; i < n; ++i) { in[i] = 1.0 / (i + 1); perm[i] = i; }
    unsigned long long s = 88172645463325252ull;
    for (int i = n - 1; i > 0; --i) {  // Fisher-Yates with xorshift64
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        std::swap(perm[i], perm[s % (unsigned long long)(i + 1)]);
    }

    double *d_in, *d_mid, *d_back;
    int* d_perm;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_mid, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_back, n * sizeof(double)));
    CUDA_CHECK(cudaMalloc(&d_perm, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_perm, perm.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    const int threads = 256, blocks = 512;
    scatter_perm<<<blocks, threads>>>(d_in, d_perm, d_mid, n);
    CUDA_CHECK(cudaGetLastError());
    gather_perm<<<blocks, threads>>>(d_mid, d_perm, d_back, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(scattered.data(), d_mid, n * sizeof(double), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back.data(), d_back, n * sizeof(double), cudaMemcpyDeviceToHost));
    cudaFree(d_in); cudaFree(d_mid); cudaFree(d_back); cudaFree(d_perm);

    long bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += scattered[perm[i]] != in[i];
        bad += back[i] != in[i];
    }
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
