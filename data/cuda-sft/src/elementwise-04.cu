/*@prompt
Write a templated CUDA clamp kernel, out[i] = min(max(in[i], lo), hi), that works for both int and float arrays. Pick the block size with the occupancy API instead of hard-coding it.
@explanation
One function template serves both element types; the compiler instantiates `clamp_kernel<int>` and `clamp_kernel<float>` where they are launched. The kernel uses a grid-stride loop, so the launch shape does not have to match n. `cudaOccupancyMaxPotentialBlockSize` inspects the kernel's register and shared-memory use and returns the block size that maximises occupancy plus the minimum grid size to fill the device; because the occupancy query is per kernel, the host helper asks for each instantiation separately. The result is exact for both types, so the check compares with `==`.
@*/
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

static void check(cudaError_t e, const char* what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
        exit(2);
    }
}

template <typename T>
__global__ void clamp_kernel(const T* in, T* out, T lo, T hi, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        T v = in[i];
        v = v < lo ? lo : v;
        out[i] = v > hi ? hi : v;
    }
}

template <typename T>
static void clamp_on_device(const std::vector<T>& in, std::vector<T>& out, T lo, T hi)
{
    const int n = (int)in.size();
    T *d_in, *d_out;
    check(cudaMalloc(&d_in, n * sizeof(T)), "cudaMalloc in");
    check(cudaMalloc(&d_out, n * sizeof(T)), "cudaMalloc out");
    check(cudaMemcpy(d_in, in.data(), n * sizeof(T), cudaMemcpyHostToDevice), "copy in");

    int min_grid = 0, block = 0;
    check(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, clamp_kernel<T>, 0, 0),
          "cudaOccupancyMaxPotentialBlockSize");
    int grid = (n + block - 1) / block;
    if (grid > min_grid) grid = min_grid;  // grid-stride loop handles the remainder
    clamp_kernel<T><<<grid, block>>>(d_in, d_out, lo, hi, n);
    check(cudaGetLastError(), "launch");
    check(cudaMemcpy(out.data(), d_out, n * sizeof(T), cudaMemcpyDeviceToHost), "copy out");
    cudaFree(d_in);
    cudaFree(d_out);
}

template <typename T>
static int count_errors(const std::vector<T>& in, const std::vector<T>& out, T lo, T hi)
{
    int errors = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        T ref = in[i] < lo ? lo : (in[i] > hi ? hi : in[i]);
        if (out[i] != ref) ++errors;
    }
    return errors;
}

int main()
{
    const int n = 3 << 18;
    std::vector<int> a(n), a_out(n);
    std::vector<float> b(n), b_out(n);
    for (int i = 0; i < n; ++i) {
        a[i] = (i * 7919) % 2001 - 1000;
        b[i] = 0.01f * (float)((i * 104729) % 4001 - 2000);
    }

    clamp_on_device<int>(a, a_out, -250, 600);
    clamp_on_device<float>(b, b_out, -3.5f, 12.25f);

    int err_int = count_errors<int>(a, a_out, -250, 600);
    int err_float = count_errors<float>(b, b_out, -3.5f, 12.25f);
    if (err_int || err_float) {
        printf("FAIL: %d int and %d float mismatches\n", err_int, err_float);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
