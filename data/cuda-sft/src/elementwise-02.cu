/*@prompt
I need a CUDA kernel that adds two matrices C = A + B stored row-major with a pitch (use cudaMallocPitch). Use a 2D grid of 16x16 thread blocks, one thread per element. The matrices are 1000 x 1500 floats.
@explanation
With `cudaMallocPitch` every row starts at an aligned address, so a row is `pitch` bytes apart rather than `cols * sizeof(float)`. The kernel therefore addresses rows through a `char*` offset of `row * pitch` before indexing the column. A 2D launch maps `x` to columns and `y` to rows, so consecutive threads of a warp touch consecutive floats in a row (coalesced). The grid is rounded up in both dimensions and each thread checks both bounds. `cudaMemcpy2D` moves the dense host matrices into and out of the pitched allocations.
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

__global__ void matrix_add(const float* A, const float* B, float* C,
                           size_t pitch, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        const float* a_row = (const float*)((const char*)A + row * pitch);
        const float* b_row = (const float*)((const char*)B + row * pitch);
        float* c_row = (float*)((char*)C + row * pitch);
        c_row[col] = a_row[col] + b_row[col];
    }
}

int main()
{
    const int rows = 1000, cols = 1500;
    const size_t row_bytes = cols * sizeof(float);

    std::vector<float> hA(rows * cols), hB(rows * cols), hC(rows * cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            hA[r * cols + c] = (float)((r * 7 + c * 3) % 101) * 0.1f;
            hB[r * cols + c] = (float)((r + 2 * c) % 53) - 26.0f;
        }

    float *dA, *dB, *dC;
    size_t pitch;
    CUDA_CHECK(cudaMallocPitch(&dA, &pitch, row_bytes, rows));
    size_t pitchB, pitchC;
    CUDA_CHECK(cudaMallocPitch(&dB, &pitchB, row_bytes, rows));
    CUDA_CHECK(cudaMallocPitch(&dC, &pitchC, row_bytes, rows));
    if (pitchB != pitch || pitchC != pitch) {
        fprintf(stderr, "unexpected: allocations have different pitches\n");
        return 1;
    }
    CUDA_CHECK(cudaMemcpy2D(dA, pitch, hA.data(), row_bytes, row_bytes, rows, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy2D(dB, pitch, hB.data(), row_bytes, row_bytes, rows, cudaMemcpyHostToDevice));

    dim3 block(16, 16);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    matrix_add<<<grid, block>>>(dA, dB, dC, pitch, rows, cols);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy2D(hC.data(), row_bytes, dC, pitch, row_bytes, rows, cudaMemcpyDeviceToHost));

    int bad = 0;
    for (int i = 0; i < rows * cols; ++i) {
        if (hC[i] != hA[i] + hB[i]) {
            if (bad < 5) fprintf(stderr, "mismatch at (%d,%d)\n", i / cols, i % cols);
            ++bad;
        }
    }

    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    if (bad) {
        printf("FAIL (%d wrong elements)\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
