/*@prompt
saxpy in cuda, n = 2^22, with a check against the cpu
@explanation
SAXPY computes `y = a * x + y` in single precision. Each thread updates one element; 256-thread blocks and a rounded-up grid cover all 2^22 elements, and the `i < n` test keeps the code correct for lengths that are not a multiple of the block size. The device compiler fuses `a * x[i] + y[i]` into one FMA instruction, which rounds once instead of twice, so the CPU reference (computed in double) is compared with a small tolerance relative to the size of the terms rather than bit-for-bit.
@*/
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                              \
    do {                                                                      \
        cudaError_t status = (x);                                             \
        if (status != cudaSuccess) {                                          \
            fprintf(stderr, "%s failed at line %d: %s\n", #x, __LINE__,       \
                    cudaGetErrorString(status));                              \
            return 1;                                                         \
        }                                                                     \
    } while (0)

__global__ void saxpy(int n, float a, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main()
{
    const int n = 1 << 22;
    const float a = 2.5f;
    std::vector<float> x(n), y(n), result(n);
    for (int i = 0; i < n; ++i) {
        x[i] = sinf(0.001f * i);
        y[i] = cosf(0.002f * i);
    }

    float *dx = nullptr, *dy = nullptr;
    CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CHECK(cudaMalloc(&dy, n * sizeof(float)));
    CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    int block = 256;
    int grid = (n + block - 1) / block;
    saxpy<<<grid, block>>>(n, a, dx, dy);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(result.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));

    double max_err = 0.0;
    for (int i = 0; i < n; ++i) {
        double ref = (double)a * x[i] + y[i];
        // Relative to the size of the terms, so cancellation near zero is not penalised.
        double scale = fabs((double)a * x[i]) + fabs((double)y[i]) + 1e-30;
        double err = fabs(result[i] - ref) / scale;
        if (std::isnan(err) || err > max_err) max_err = err;  // a NaN sticks
    }
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));

    printf("max relative error %.3e\n", max_err);
    if (!(max_err <= 1e-5)) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
