/*@prompt
Overlap transfers and compute for a big SAXPY (y = a*x + y, 16M floats): split the vectors into chunks, use several CUDA streams, pinned host memory and cudaMemcpyAsync so copies of one chunk overlap the kernel of another.
@explanation
Asynchronous copies only overlap with kernels when the host buffers are page-locked, so the vectors are allocated with `cudaMallocHost`. The work is cut into chunks and chunk `c` goes to stream `c % n_streams`; within a stream the three operations (copy in, kernel, copy out) stay ordered, while different streams run concurrently, so the copy engine moves one chunk while the SMs compute another. The kernel launch names its stream as the fourth launch parameter (`<<<grid, block, 0, stream>>>`). A final `cudaDeviceSynchronize` waits for every stream before the host checks the result.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess) {                                             \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                        \
                    cudaGetErrorString(err_), __FILE__, __LINE__);             \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

__global__ void saxpy_chunk(int n, float a, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main()
{
    const int n = 1 << 24;
    const int n_streams = 4;
    const int n_chunks = 16;
    const int chunk = (n + n_chunks - 1) / n_chunks;
    const float a = 0.5f;

    float *hx, *hy;
    CUDA_CHECK(cudaMallocHost(&hx, n * sizeof(float)));
    CUDA_CHECK(cudaMallocHost(&hy, n * sizeof(float)));
    for (int i = 0; i < n; ++i) {
        hx[i] = (float)(i % 1024);
        hy[i] = 1.0f;
    }

    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));

    cudaStream_t streams[n_streams];
    for (int s = 0; s < n_streams; ++s) CUDA_CHECK(cudaStreamCreate(&streams[s]));

    const int block = 256;
    for (int c = 0; c < n_chunks; ++c) {
        int offset = c * chunk;
        int len = (offset + chunk <= n) ? chunk : n - offset;
        if (len <= 0) break;
        cudaStream_t st = streams[c % n_streams];
        size_t bytes = (size_t)len * sizeof(float);
        CUDA_CHECK(cudaMemcpyAsync(dx + offset, hx + offset, bytes, cudaMemcpyHostToDevice, st));
        CUDA_CHECK(cudaMemcpyAsync(dy + offset, hy + offset, bytes, cudaMemcpyHostToDevice, st));
        int grid = (len + block - 1) / block;
        saxpy_chunk<<<grid, block, 0, st>>>(len, a, dx + offset, dy + offset);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpyAsync(hy + offset, dy + offset, bytes, cudaMemcpyDeviceToHost, st));
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    // x values are small integers and a = 0.5, so every result is exact in float.
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        float ref = a * (float)(i % 1024) + 1.0f;
        if (hy[i] != ref) ++bad;
    }

    for (int s = 0; s < n_streams; ++s) CUDA_CHECK(cudaStreamDestroy(streams[s]));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    CUDA_CHECK(cudaFreeHost(hx));
    CUDA_CHECK(cudaFreeHost(hy));

    if (bad) {
        printf("FAIL: %d mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
