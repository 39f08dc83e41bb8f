/*@prompt
Implement torch.gather(input, dim=1, index) for 2D tensors in CUDA: out[r][c] = input[r][index[r][c]], with int64 indices. Out-of-range indices must not crash or read out of bounds; instead record an error flag that the host checks (like a device-side assert but recoverable). input is [4096, 1000], index is [4096, 300].
@explanation
Each thread of a 2D grid handles one output element (r, c): it loads the index, validates it against the size of dim 1, and only then reads `input[r][idx]`. An invalid index produces a 0 output and sets a global error flag with `atomicExch`, recording `r * cols + c + 1` so the host can report where it happened; any one offender is enough, so it does not matter which thread wins. Unlike `assert()`, which aborts the context, this leaves the CUDA context usable. The test plants one negative and one too-large index, checks that the flag names one of them, and checks every other output exactly.
@*/
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

__global__ void gather_dim1(const float* __restrict__ input, const int64_t* __restrict__ index,
                            float* __restrict__ out, int rows, int in_cols, int out_cols,
                            unsigned long long* error_at)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= out_cols) return;
    const size_t o = (size_t)r * out_cols + c;
    const int64_t k = index[o];
    if (k < 0 || k >= in_cols) {
        out[o] = 0.0f;
        atomicExch(error_at, (unsigned long long)o + 1);  // 0 means "no error"
        return;
    }
    out[o] = input[(size_t)r * in_cols + k];
}

int main()
{
    const int rows = 4096, in_cols = 1000, out_cols = 300;
    std::vector<float> input((size_t)rows * in_cols), out((size_t)rows * out_cols);
    std::vector<int64_t> index(out.size());
    for (size_t i = 0; i < input.size(); ++i) input[i] = (float)(i % 100000) + 0.5f;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < out_cols; ++c) index[(size_t)r * out_cols + c] = (r * 31 + c * 17) % in_cols;
    const size_t bad1 = (size_t)123 * out_cols + 45, bad2 = (size_t)4000 * out_cols + 299;
    index[bad1] = -1;
    index[bad2] = in_cols;

    float *d_in, *d_out;
    int64_t* d_idx;
    unsigned long long* d_err;
    CUDA_CHECK(cudaMalloc(&d_in, input.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, out.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_idx, index.size() * sizeof(int64_t)));
    CUDA_CHECK(cudaMalloc(&d_err, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(d_in, input.data(), input.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_idx, index.data(), index.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_err, 0, sizeof(unsigned long long)));

    dim3 block(64, 4);
    dim3 grid((out_cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    gather_dim1<<<grid, block>>>(d_in, d_idx, d_out, rows, in_cols, out_cols, d_err);
    CUDA_CHECK(cudaGetLastError());
    unsigned long long err_at = 0;
    CUDA_CHECK(cudaMemcpy(&err_at, d_err, sizeof(err_at), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_in); cudaFree(d_out); cudaFree(d_idx); cudaFree(d_err);

    bool flag_ok = err_at == bad1 + 1 || err_at == bad2 + 1;
    long bad = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < out_cols; ++c) {
            size_t o = (size_t)r * out_cols + c;
            float ref = (o == bad1 || o == bad2) ? 0.0f : input[(size_t)r * in_cols + index[o]];
            bad += out[o] != ref;
        }
    printf("error flag points at element %llu\n", err_at ? err_at - 1 : 0ull);
    if (!flag_ok || bad) {
        printf("FAIL: flag %s, %ld wrong outputs\n", flag_ok ? "ok" : "wrong", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
