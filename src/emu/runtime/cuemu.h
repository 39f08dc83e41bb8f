// cuemu: runs CUDA C++ programs on an x86-64 CPU where no GPU is available: the judge's
// `--judge emulate` and scripts/emulate-cuda-sft.sh, after cuset::emu::transform_program rewrote
// them (src/emu; build flags in include/cuset/emu/runtime.h). Every CUDA thread is a
// fiber; __syncthreads, warp shuffles/votes and grid syncs are cooperative barriers with CUDA's
// semantics, and misuse (divergent collectives, reading exited lanes, deadlocks, bad launch
// configurations) stops the program with exit status 86. It is not a GPU model: no timing, no
// memory model beyond sequential consistency, float results as the host compiler computes them.
// Device code is compiled by the host compiler, so only what the programs use is provided.
#pragma once
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
// Declares threadIdx & co. as variables: included before they become the macros below, so that a
// program's own #include <device_launch_parameters.h> is a no-op.
#include <device_launch_parameters.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>

#undef __shared__
#define __shared__ static
#define __launch_bounds__(...)
#define __syncthreads() cuemu::syncthreads()
#define threadIdx (cuemu::tidx())
#define blockIdx (cuemu::bidx())
#define blockDim (cuemu::bdim())
#define gridDim (cuemu::gdim())
#define warpSize 32

namespace cuemu {
// The running CUDA thread's threadIdx and blockIdx and the launch's blockDim and gridDim, set by the
// scheduler before it resumes a thread (stale outside a kernel, where nvcc rejects them anyway).
extern uint3 cur_tid, cur_bid;
extern dim3 cur_bdim, cur_gdim;
inline const uint3& tidx() { return cur_tid; }
inline const uint3& bidx() { return cur_bid; }
inline const dim3& bdim() { return cur_bdim; }
inline const dim3& gdim() { return cur_gdim; }
void syncthreads();
int sync_reduce(int pred, int kind);  // 0 count, 1 and, 2 or
void syncwarp(unsigned mask);
uint64_t warp_exchange(unsigned mask, uint64_t bits, int src_mode, int arg, int width, int op);
void grid_sync();
unsigned long long grid_rank();
unsigned long long grid_size();
void* dyn_smem();
void poison_shared(void* p, size_t n);  // first call per block and address: fill with garbage
int lane_id();
int linear_tid();
int block_threads();
[[noreturn]] void fail(const char* what);

struct Launch {
    dim3 g, b;
    size_t smem;
    bool coop;
    const void* func = nullptr;
    Launch(dim3 g_, dim3 b_, size_t s = 0, cudaStream_t = 0) : g(g_), b(b_), smem(s), coop(false) {}
    void go(std::function<void()> fn);
};

template <class... P, size_t... I>
void call_with_args(void (*k)(P...), void** args, std::index_sequence<I...>)
{
    k(*reinterpret_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}

template <class... P>
cudaError_t launch_args(bool coop, void (*k)(P...), dim3 g, dim3 b, void** args, size_t smem, cudaStream_t = 0)
{
    Launch L(g, b, smem);
    L.coop = coop;
    L.func = (const void*)k;
    L.go([=] { call_with_args(k, args, std::index_sequence_for<P...>{}); });
    return cudaSuccess;
}
}  // namespace cuemu

// ---- warp intrinsics
template <class T>
inline T cuemu_xchg(unsigned mask, T v, int mode, int arg, int width)
{
    static_assert(sizeof(T) <= 8, "shuffle of a type larger than 8 bytes");
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    bits = cuemu::warp_exchange(mask, bits, mode, arg, width, 1);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}
template <class T> inline T __shfl_sync(unsigned m, T v, int src, int w = 32) { return cuemu_xchg(m, v, 0, src, w); }
template <class T> inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) { return cuemu_xchg(m, v, 1, (int)d, w); }
template <class T> inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32) { return cuemu_xchg(m, v, 2, (int)d, w); }
template <class T> inline T __shfl_xor_sync(unsigned m, T v, int x, int w = 32) { return cuemu_xchg(m, v, 3, x, w); }
inline unsigned __ballot_sync(unsigned m, int p) { return (unsigned)cuemu::warp_exchange(m, p != 0, 4, 0, 32, 2); }
inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
inline int __all_sync(unsigned m, int p) { return __ballot_sync(m, p) == m; }
inline void __syncwarp(unsigned m = 0xffffffffu) { cuemu::syncwarp(m); }
inline int __syncthreads_count(int p) { return cuemu::sync_reduce(p, 0); }
inline int __syncthreads_and(int p) { return cuemu::sync_reduce(p, 1); }
inline int __syncthreads_or(int p) { return cuemu::sync_reduce(p, 2); }
inline void __threadfence() {}
inline void __threadfence_block() {}

// ---- texture objects (cudaCreateTextureObject over a cudaArray, linear or pitched memory)
namespace cuemu {
// Samples texture object t at x (dims 1) or (x, y) (dims 2) with its filter, address modes,
// normalised coordinates and read mode; `fetch`: tex1Dfetch's integer index (no filtering, 0 out
// of range). Writes n bytes to out: the texel's bytes for element reads with point filtering,
// else its channels converted to float (cudaReadModeNormalizedFloat, linear filtering).
void tex_sample(cudaTextureObject_t t, int dims, bool fetch, double x, double y, void* out, size_t n);
}
template <class T> inline T tex1Dfetch(cudaTextureObject_t t, int i) { T v{}; cuemu::tex_sample(t, 1, true, i, 0, &v, sizeof(T)); return v; }
template <class T> inline T tex1D(cudaTextureObject_t t, float x) { T v{}; cuemu::tex_sample(t, 1, false, x, 0, &v, sizeof(T)); return v; }
template <class T> inline T tex2D(cudaTextureObject_t t, float x, float y) { T v{}; cuemu::tex_sample(t, 2, false, x, y, &v, sizeof(T)); return v; }
template <class T> inline void tex1Dfetch(T* r, cudaTextureObject_t t, int i) { *r = tex1Dfetch<T>(t, i); }
template <class T> inline void tex2D(T* r, cudaTextureObject_t t, float x, float y) { *r = tex2D<T>(t, x, y); }

// ---- atomics (fibers are cooperative, so plain read-modify-write is atomic)
template <class T, class U> inline T atomicAdd(T* p, U v) { T o = *p; *p = (T)(o + (T)v); return o; }
template <class T, class U> inline T atomicSub(T* p, U v) { T o = *p; *p = (T)(o - (T)v); return o; }
template <class T, class U> inline T atomicMax(T* p, U v) { T o = *p; if ((T)v > o) *p = (T)v; return o; }
template <class T, class U> inline T atomicMin(T* p, U v) { T o = *p; if ((T)v < o) *p = (T)v; return o; }
template <class T, class U> inline T atomicExch(T* p, U v) { T o = *p; *p = (T)v; return o; }
template <class T, class U> inline T atomicOr(T* p, U v) { T o = *p; *p = o | (T)v; return o; }
template <class T, class U> inline T atomicAnd(T* p, U v) { T o = *p; *p = o & (T)v; return o; }
template <class T, class U, class V> inline T atomicCAS(T* p, U c, V v) { T o = *p; if (o == (T)c) *p = (T)v; return o; }
template <class T> inline T __ldg(const T* p) { return *p; }

// ---- bit and math intrinsics
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float sinpif(float x) { return (float)std::sin(M_PI * (double)x); }
inline float cospif(float x) { return (float)std::cos(M_PI * (double)x); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
using std::isfinite;
using std::isinf;
using std::isnan;
template <class A, class B> inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }
template <class A, class B> inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }
