/*@prompt
Write a fused softmax cross-entropy forward+backward kernel for the LM head: for logits [1024, 8192] and targets (with ignore_index = -100 for padding positions), compute the per-row loss and overwrite the logits in place with the gradient of the mean loss, d loss / d logits = (softmax - onehot) / n_valid. Ignored rows get loss 0 and gradient 0 and do not count in n_valid.
@explanation
The gradient of `mean_b CE(x_b, t_b)` with respect to `x_b` is `(softmax(x_b) - onehot(t_b)) / n_valid`, so once a block knows its row's max `m` and normaliser `s` it can compute the loss and the full gradient row without storing the probabilities. Writing the gradient over the logits, as large-vocabulary trainers do, saves a second [B, V] buffer. The kernel reads the target element and computes the loss before the overwrite loop; a `__syncthreads()` separates that read from the writes, since another thread may own that column. `n_valid` is counted on the device by a tiny kernel launched first, so the host never has to synchronise. The reference recomputes everything in double; loss and gradients are checked with a 1e-5 relative tolerance (plus tiny absolute floors), and each gradient row must sum to about zero.
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

constexpr int kIgnore = -100;

__global__ void count_valid(const int* targets, int B, int* n_valid)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < B && targets[b] != kIgnore) atomicAdd(n_valid, 1);
}

__device__ float block_allreduce(float v, bool is_max, float* sh)
{
    for (int o = 16; o > 0; o >>= 1) {
        float w = __shfl_xor_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = sh[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w) v = is_max ? fmaxf(v, sh[w]) : v + sh[w];
    __syncthreads();
    return v;
}

__global__ void ce_fwd_bwd_inplace(float* __restrict__ logits, const int* __restrict__ targets,
                                   const int* __restrict__ n_valid, float* __restrict__ loss, int V)
{
    __shared__ float sh[32];
    float* x = logits + (size_t)blockIdx.x * V;
    const int t = targets[blockIdx.x];
    if (t == kIgnore) {  // uniform for the whole block, so the early exit is safe
        for (int j = threadIdx.x; j < V; j += blockDim.x) x[j] = 0.0f;
        if (threadIdx.x == 0) loss[blockIdx.x] = 0.0f;
        return;
    }
    float m = -INFINITY;
    for (int j = threadIdx.x; j < V; j += blockDim.x) m = fmaxf(m, x[j]);
    m = block_allreduce(m, true, sh);
    float s = 0.0f;
    for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(x[j] - m);
    s = block_allreduce(s, false, sh);
    if (threadIdx.x == 0) loss[blockIdx.x] = m + logf(s) - x[t];
    __syncthreads();  // x[t] has been read before anyone overwrites it

    const float inv_s = 1.0f / s, inv_n = 1.0f / (float)(*n_valid);
    for (int j = threadIdx.x; j < V; j += blockDim.x)
        x[j] = (expf(x[j] - m) * inv_s - (j == t ? 1.0f : 0.0f)) * inv_n;
}

int main()
{
    const int B = 1024, V = 8192;
    std::vector<float> logits((size_t)B * V), grad(logits.size()), loss(B);
    std::vector<int> targets(B);
    for (int b = 0; b < B; ++b) {
        targets[b] = (b % 10 == 9) ? kIgnore : (b * 131) % V;
        for (int j = 0; j < V; ++j) logits[(size_t)b * V + j] = 3.0f * std::cos(0.01f * j + 0.3f * b);
    }

    float *d_x, *d_loss;
    int *d_t, *d_nvalid;
    CUDA_CHECK(cudaMalloc(&d_x, logits.size() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_loss, B * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_t, B * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_nvalid, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_x, logits.data(), logits.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_t, targets.data(), B * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_nvalid, 0, sizeof(int)));

    count_valid<<<(B + 255) / 256, 256>>>(d_t, B, d_nvalid);
    ce_fwd_bwd_inplace<<<B, 512>>>(d_x, d_t, d_nvalid, d_loss, V);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(grad.data(), d_x, grad.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(loss.data(), d_loss, B * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_x); cudaFree(d_loss); cudaFree(d_t); cudaFree(d_nvalid);

    int n_valid = 0;
    for (int b = 0; b < B; ++b) n_valid += targets[b] != kIgnore;
    long bad = 0;
    for (int b = 0; b < B; ++b) {
        const float* x = &logits[(size_t)b * V];
        const float* g = &grad[(size_t)b * V];
        if (targets[b] == kIgnore) {
            bad += loss[b] != 0.0f;
            for (int j = 0; j < V; ++j) bad += g[j] != 0.0f;
            continue;
        }
        double m = -INFINITY, s = 0.0, gsum = 0.0;
        for (int j = 0; j < V; ++j) m = std::fmax(m, (double)x[j]);
        for (int j = 0; j < V; ++j) s += std::exp(x[j] - m);
        double ref_loss = m + std::log(s) - x[targets[b]];
        bad += !(std::fabs(loss[b] - ref_loss) <= 1e-5 * std::fabs(ref_loss) + 1e-6);
        for (int j = 0; j < V; ++j) {
            double ref = (std::exp(x[j] - m) / s - (j == targets[b] ? 1.0 : 0.0)) / n_valid;
            bad += !(std::fabs(g[j] - ref) <= 1e-5 * std::fabs(ref) + 1e-11);
            gsum += g[j];
        }
        bad += !(std::fabs(gsum) <= 1e-6);
    }
    printf("%d valid rows of %d\n", n_valid, B);
    if (bad) {
        printf("FAIL: %ld mismatches\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
