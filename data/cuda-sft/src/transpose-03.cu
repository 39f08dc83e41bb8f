/*@prompt
Batched transpose: I have a tensor of shape [batch=64, H=500, W=300] of ints and need [64, 300, 500] (swap the last two axes). Use a 3D grid with blockIdx.z as the batch index and the shared-memory tile approach.
@explanation
Each batch entry is an independent H x W matrix, so the grid gets a third dimension: `blockIdx.z` selects the matrix and offsets both pointers by `z * H * W`, while `x` and `y` tile that matrix exactly as in a 2D tiled transpose. A 32x33 `int` tile in shared memory (the extra column avoids bank conflicts on the column-wise read) makes both the load and the store coalesced. Neither 500 nor 300 is a multiple of 32, so every global access is bounds-checked. The grid's z dimension allows up to 65535 batches; larger batches would need a loop over z.
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

#define TILE 32
#define ROWS_PER_PASS 8

__global__ void batched_transpose(const int* __restrict__ in, int* __restrict__ out, int H, int W)
{
    __shared__ int tile[TILE][TILE + 1];
    const size_t plane = (size_t)H * W;
    const int* src = in + blockIdx.z * plane;
    int* dst = out + blockIdx.z * plane;

    int col = blockIdx.x * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS_PER_PASS)
        if (row + k < H && col < W) tile[threadIdx.y + k][threadIdx.x] = src[(size_t)(row + k) * W + col];
    __syncthreads();

    int out_col = blockIdx.y * TILE + threadIdx.x;  // index along H
    int out_row = blockIdx.x * TILE + threadIdx.y;  // index along W
    for (int k = 0; k < TILE; k += ROWS_PER_PASS)
        if (out_row + k < W && out_col < H)
            dst[(size_t)(out_row + k) * H + out_col] = tile[threadIdx.x][threadIdx.y + k];
}

int main()
{
    const int batch = 64, H = 500, W = 300;
    const size_t n = (size_t)batch * H * W;
    std::vector<int> in(n), out(n);
    for (size_t i = 0; i < n; ++i) in[i] = (int)i;

    int *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    dim3 block(TILE, ROWS_PER_PASS);
    dim3 grid((W + TILE - 1) / TILE, (H + TILE - 1) / TILE, batch);
    batched_transpose<<<grid, block>>>(d_in, d_out, H, W);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);

    long bad = 0;
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < H; ++h)
            for (int w = 0; w < W; ++w) {
                size_t src = ((size_t)b * H + h) * W + w;
                size_t dst = ((size_t)b * W + w) * H + h;
                if (out[dst] != in[src]) ++bad;
            }
    if (bad) {
        printf("FAIL: %ld\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
