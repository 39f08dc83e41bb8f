/*@prompt
Reduce-by-key: values come with sorted segment ids (keys[i] in [0, num_keys), non-decreasing, with runs of random length). Sum the values of each key. Do a segmented scan inside each warp using __ballot_sync to find run heads and __shfl_up_sync to accumulate, and let only the last element of each run inside the warp do an atomicAdd.
@explanation
Every warp handles 32 consecutive elements. A lane is a run head when its key differs from the previous element's key; `__ballot_sync` collects those flags into one 32-bit mask, and for each lane the nearest head at or below it is found with `31 - __clz(mask & lanes_up_to_me)`. A segmented inclusive scan then uses `__shfl_up_sync`: a lane adds the value d lanes back only if that lane is still inside its own run (`lane - d >= head`). The last lane of each run within the warp (the next element has another key, or it is lane 31, or it is the last element) holds the run's partial sum and adds it to `out[key]` with one `atomicAdd`; a run that spans several warps simply receives one atomic from each. Integer values keep the sums exact and order independent.
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

__global__ void reduce_by_key(const int* __restrict__ keys, const int* __restrict__ vals, int* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;  // n is padded to full warps by the bounds below
    const int lane = threadIdx.x & 31;
    const bool valid = i < n;
    const int key = valid ? keys[i] : -1;
    int v = valid ? vals[i] : 0;

    const bool head = valid && (lane == 0 || i == 0 || keys[i - 1] != key);
    const unsigned heads = __ballot_sync(0xffffffffu, head);
    const unsigned upto_me = heads & (0xffffffffu >> (31 - lane));  // head bits of lanes 0..lane
    const int my_head = upto_me ? 31 - __clz(upto_me) : 0;

    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane - d >= my_head) v += up;
    }
    const int next_key = __shfl_down_sync(0xffffffffu, key, 1);
    const bool tail = valid && (lane == 31 || i == n - 1 || next_key != key);
    if (tail) atomicAdd(&out[key], v);
}

int main()
{
    const int n = 5000000;
    std::vector<int> keys(n), vals(n);
    int k = 0;
    unsigned s = 4242u;
    for (int i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        if ((s >> 24) < 20) ++k;  // new run with probability ~8%, runs often cross warp boundaries
        keys[i] = k;
        vals[i] = (int)((s >> 8) % 19) - 9;
    }
    const int num_keys = k + 1;
    std::vector<int> out(num_keys), ref(num_keys, 0);
    for (int i = 0; i < n; ++i) ref[keys[i]] += vals[i];

    int *dk, *dv, *dout;
    CUDA_CHECK(cudaMalloc(&dk, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dv, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dout, num_keys * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dk, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dv, vals.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dout, 0, num_keys * sizeof(int)));

    const int threads = 256;
    reduce_by_key<<<(n + threads - 1) / threads, threads>>>(dk, dv, dout, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(out.data(), dout, num_keys * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(dk); cudaFree(dv); cudaFree(dout);

    int bad = 0;
    for (int key = 0; key < num_keys; ++key) bad += out[key] != ref[key];
    printf("%d keys\n", num_keys);
    if (bad) {
        printf("FAIL: %d keys wrong\n", bad);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
