/*@prompt
Transpose a 3000 x 2000 float matrix on the GPU (out[c][r] = in[r][c]). Keep it simple: one thread per element.
@explanation
A 2D grid of 32x8 blocks covers the input: `x` walks the columns and `y` the rows, so a warp reads 32 consecutive floats of one input row, a fully coalesced load. The write `out[c * rows + r]` then scatters those 32 values to 32 different output rows, `rows` floats apart, so each store touches a different memory segment; that is the weak point of this version, and a shared-memory tile fixes it. For correctness it is enough: both bounds are checked because neither dimension is a multiple of the block shape, and the output is compared element by element.
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

__global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

int main()
{
    const int rows = 3000, cols = 2000;
    std::vector<float> in((size_t)rows * cols), out(in.size());
    for (size_t i = 0; i < in.size(); ++i) in[i] = (float)i;  // each value identifies its position

    float *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, in.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(32, 8);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    transpose_naive<<<grid, block>>>(d_in, d_out, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_in);
    cudaFree(d_out);

    long bad = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            if (out[(size_t)c * rows + r] != in[(size_t)r * cols + c]) ++bad;
    if (bad) {
        printf("FAIL: %ld misplaced elements\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
