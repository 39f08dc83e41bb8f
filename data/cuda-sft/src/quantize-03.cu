/*@prompt
Dequantize 4-bit weights packed two per byte (low nibble = even column, high nibble = odd column) with asymmetric per-group quantization: groups of 64 consecutive weights along a row share a float scale and an integer zero point; w = (q - zero) * scale. Weight matrix is [4096, 4096], output fp16. This is the layout used by GPTQ/AWQ-style int4 checkpoints.
@explanation
Each thread takes one packed byte, i.e. two adjacent weights in the same row. It extracts the low nibble `b & 0xF` for the even column and the high nibble `b >> 4` for the odd column, finds the group from the column (`col / 64`; both columns of a byte always share a group because 64 is even), and evaluates `(q - zero) * scale` in float before rounding to half; the pair is stored with a single `__half2` write. The scale and zero-point tables are [rows, cols / 64], so a warp of 32 threads covering 64 columns reads a single scale and zero point, which is broadcast. The host packs random 4-bit codes, runs the same arithmetic and compares the halves exactly.
@*/
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_fp16.h>
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

constexpr int GROUP = 64;

__global__ void dequant_int4(const uint8_t* __restrict__ packed, const float* __restrict__ scales,
                             const uint8_t* __restrict__ zeros, __half2* __restrict__ out, int rows, int cols)
{
    const int half_cols = cols / 2;
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;  // byte index
    if (idx >= (size_t)rows * half_cols) return;
    const int row = (int)(idx / half_cols);
    const int col = 2 * (int)(idx % half_cols);
    const size_t g = (size_t)row * (cols / GROUP) + col / GROUP;
    const float s = scales[g];
    const int z = zeros[g];
    const uint8_t b = packed[idx];
    const float w0 = (float)((int)(b & 0xF) - z) * s;
    const float w1 = (float)((int)(b >> 4) - z) * s;
    out[idx] = __floats2half2_rn(w0, w1);
}

int main()
{
    const int rows = 4096, cols = 4096, groups_per_row = cols / GROUP;
    const size_t n_bytes = (size_t)rows * cols / 2, n_groups = (size_t)rows * groups_per_row;
    std::vector<uint8_t> packed(n_bytes), zeros(n_groups);
    std::vector<float> scales(n_groups);
    uint32_t s = 17u;
    for (auto& b : packed) { s = s * 1664525u + 1013904223u; b = (uint8_t)(s >> 24); }
    for (size_t g = 0; g < n_groups; ++g) {
        scales[g] = 0.001f + 0.0001f * (float)(g % 37);
        zeros[g] = (uint8_t)(6 + g % 4);
    }

    uint8_t *d_packed, *d_zeros;
    float* d_scales;
    __half* d_out;
    CUDA_CHECK(cudaMalloc(&d_packed, n_bytes));
    CUDA_CHECK(cudaMalloc(&d_zeros, n_groups));
    CUDA_CHECK(cudaMalloc(&d_scales, n_groups * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, (size_t)rows * cols * sizeof(__half)));
    CUDA_CHECK(cudaMemcpy(d_packed, packed.data(), n_bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_zeros, zeros.data(), n_groups, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_scales, scales.data(), n_groups * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 256;
    const unsigned blocks = (unsigned)((n_bytes + threads - 1) / threads);
    dequant_int4<<<blocks, threads>>>(d_packed, d_scales, d_zeros, reinterpret_cast<__half2*>(d_out), rows, cols);
    CUDA_CHECK(cudaGetLastError());
    std::vector<__half> out((size_t)rows * cols);
    CUDA_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    cudaFree(d_packed); cudaFree(d_zeros); cudaFree(d_scales); cudaFree(d_out);

    long bad = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            uint8_t b = packed[((size_t)r * cols + c) / 2];
            int q = (c % 2 == 0) ? (b & 0xF) : (b >> 4);
            size_t g = (size_t)r * groups_per_row + c / GROUP;
            float ref = __half2float(__float2half((float)(q - zeros[g]) * scales[g]));
            bad += __half2float(out[(size_t)r * cols + c]) != ref;
        }
    if (bad) {
        printf("FAIL: %ld weights\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
