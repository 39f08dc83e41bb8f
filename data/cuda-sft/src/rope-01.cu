/*@prompt
Apply rotary position embeddings (RoPE) in place to a query tensor of shape [batch=2, seq=2048, heads=32, head_dim=128] (float). Use the GPT-J "interleaved" convention, where dimensions (2i, 2i+1) form a rotation pair, and precomputed cos/sin tables of shape [seq, head_dim/2] with theta_i = 10000^(-2i/head_dim).
@explanation
RoPE rotates each pair of features by an angle that depends on the token position and the pair index: for position t and pair i, `(x0, x1) -> (x0 cos a - x1 sin a, x0 sin a + x1 cos a)` with `a = t * theta_i`. In the interleaved layout the pair is two adjacent floats, so each thread loads them as one `float2`, rotates, and stores them back in place; one thread per pair means a warp covers 64 consecutive floats of a head. The thread recovers (t, i) from its flat pair index (the layout is [B, T, H, D/2] pairs), and reads the angle's cosine and sine from tables computed once on the host in double and stored as float. The CPU applies the same rotation in double; the tolerance is 1e-6 relative to |x0| + |x1|, since the device may fuse the multiply-adds.
@*/
#include <cmath>
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

__global__ void rope_interleaved(float2* __restrict__ q, const float* __restrict__ cos_t, const float* __restrict__ sin_t,
                                 int T, int H, int half_dim, size_t n_pairs)
{
    const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n_pairs) return;
    const int i = (int)(p % half_dim);
    const int t = (int)((p / ((size_t)half_dim * H)) % T);
    const float c = cos_t[t * half_dim + i], s = sin_t[t * half_dim + i];
    float2 v = q[p];
    q[p] = make_float2(v.x * c - v.y * s, v.x * s + v.y * c);
}

int main()
{
    const int B = 2, T = 2048, H = 32, D = 128, half_dim = D / 2;
    const size_t n = (size_t)B * T * H * D, n_pairs = n / 2;
    std::vector<float> q(n), out(n), cos_t(T * half_dim), sin_t(T * half_dim);
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < half_dim; ++i) {
            double a = t * std::pow(10000.0, -2.0 * i / D);
            cos_t[t * half_dim + i] = (float)std::cos(a);
            sin_t[t * half_dim + i] = (float)std::sin(a);
        }
    for (size_t k = 0; k < n; ++k) q[k] = std::sin(0.37f * (float)(k % 10007)) + 0.1f;

    float *dq, *dc, *ds;
    CUDA_CHECK(cudaMalloc(&dq, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dc, cos_t.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&ds, sin_t.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dq, q.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc, cos_t.data(), cos_t.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(ds, sin_t.data(), sin_t.size() * sizeof(float), cudaMemcpyHostToDevice));

    const int threads = 256;
    rope_interleaved<<<(unsigned)((n_pairs + threads - 1) / threads), threads>>>(
        reinterpret_cast<float2*>(dq), dc, ds, T, H, half_dim, n_pairs);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), dq, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(dq); cudaFree(dc); cudaFree(ds);

    long bad = 0;
    for (size_t p = 0; p < n_pairs; ++p) {
        int i = (int)(p % half_dim), t = (int)((p / ((size_t)half_dim * H)) % T);
        double c = cos_t[t * half_dim + i], s = sin_t[t * half_dim + i];
        double x0 = q[2 * p], x1 = q[2 * p + 1];
        double tol = 1e-6 * (std::fabs(x0) + std::fabs(x1));
        bad += !(std::fabs(out[2 * p] - (x0 * c - x1 * s)) <= tol);
        bad += !(std::fabs(out[2 * p + 1] - (x0 * s + x1 * c)) <= tol);
    }
    if (bad) {
        printf("FAIL: %ld values\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
