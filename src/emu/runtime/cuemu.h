// cuemu: runs CUDA C++ programs on an x86-64 CPU where no GPU is available: the judge's
// `--judge emulate` and scripts/emulate-cuda-sft.sh, after cuset::emu::transform_program rewrote
// them (src/emu; build flags in include/cuset/emu/runtime.h). Every CUDA thread is a
// fiber; __syncthreads, warp shuffles/votes and grid syncs are cooperative barriers with CUDA's
// semantics, and misuse (divergent collectives, reading exited lanes, deadlocks, bad launch
// configurations) stops the program with exit status 86. It is not a GPU model: no timing, no
// memory model beyond sequential consistency, float results as the host compiler computes them.
// Device code is compiled by the host compiler, so only what the programs use is provided.
#pragma once
// The program is built with nvcc's macros (build_flags() in cuset/emu/runtime.h: __CUDACC__,
// __NVCC__, __CUDACC_VER_*__, ...), and the C and C++ headers nvcc's host pass reads are read here
// as there, with __CUDACC__ defined (glibc and libstdc++ then leave out __float128). Only headers
// that pass also has are included, so that no include guard tells a program it is emulated;
// cuda_fp16.h and cuda_bf16.h are the exception (below).
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <utility>
// The CUDA headers take their host compiler's path: with __CUDACC__ they declare device code for
// nvcc's own front end, which g++ rejects. cuda_fp16.h and cuda_bf16.h no longer build once it is
// defined, so they are read here, before the program can include them.
#pragma push_macro("__CUDACC__")
#undef __CUDACC__
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
// Declares threadIdx, blockIdx, blockDim, gridDim and warpSize as variables (defined in
// cuemu.cpp), as nvcc's host pass sees them, so that a program's own
// #include <device_launch_parameters.h> is a no-op.
#include <device_launch_parameters.h>
#pragma pop_macro("__CUDACC__")
// What nvcc's host pass has defined by now through cuda_runtime.h with __CUDACC__, which the host
// compiler's path leaves out: the include guards of the device-side headers it has read (so that
// a program's own #include of one is a no-op here as there) and __CUDACC_VER__ (CUDA 13.0's list).
#define __CUDACC_VER__ "__CUDACC_VER__ is no longer supported.  Use __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, and __CUDACC_VER_BUILD__ instead."
#define __COMMON_FUNCTIONS_H__
#define __DEVICE_ATOMIC_FUNCTIONS_H__
#define __DEVICE_DOUBLE_FUNCTIONS_H__
#define __DEVICE_DOUBLE_FUNCTIONS_HPP__
#define __DEVICE_FUNCTIONS_H__
#define __DEVICE_FUNCTIONS_HPP__
#define __MATH_FUNCTIONS_H__
#define __MATH_FUNCTIONS_HPP__
#define __SM_20_ATOMIC_FUNCTIONS_H__
#define __SM_20_INTRINSICS_H__
#define __SM_30_INTRINSICS_H__
#define __SM_32_ATOMIC_FUNCTIONS_H__
#define __SM_32_INTRINSICS_H__
#define __SM_35_ATOMIC_FUNCTIONS_H__
#define __SM_35_INTRINSICS_H__
#define __SM_60_ATOMIC_FUNCTIONS_H__
#define __SM_61_INTRINSICS_H__
#define __SM_70_RT_H__
#define __SM_80_RT_H__
#define __SM_90_RT_H__
#define __SM_100_RT_H__
#define __SURFACE_INDIRECT_FUNCTIONS_H__
#define __TEXTURE_INDIRECT_FUNCTIONS_H__

// nvcc's host pass defines both too (only their expansions differ).
#undef __shared__
#define __shared__ static
#define __launch_bounds__(...)

namespace cuemu {
// threadIdx and blockIdx are the running CUDA thread's and blockDim and gridDim its launch's, set by
// the scheduler before it resumes a thread (stale outside a kernel, where nvcc rejects them
// anyway): constant while a thread runs, so the compiler may keep them across a barrier.
inline const uint3& tidx() { return threadIdx; }
inline const uint3& bidx() { return blockIdx; }
inline const dim3& bdim() { return blockDim; }
inline const dim3& gdim() { return gridDim; }
void syncthreads();
int sync_reduce(int pred, int kind);  // 0 count, 1 and, 2 or
void syncwarp(unsigned mask);
unsigned long long warp_exchange(unsigned mask, unsigned long long bits, int src_mode, int arg, int width, int op);
void grid_sync();
unsigned long long grid_rank();
unsigned long long grid_size();
void* dyn_smem();
void poison_shared(void* p, size_t n);  // first call per block and address: fill with garbage
int lane_id();
int linear_tid();
int block_threads();
[[noreturn]] void fail(const char* what);
// A pointer given to a kernel: under the judge's device memory (KernelBench's run), one that
// is neither device memory, pinned host memory nor null ends the run, as the kernel's first use
// of it would fault on a GPU; without that memory (a plain program), nothing is checked.
void kernel_pointer_arg(const void* p, unsigned index);

struct Launch {
    dim3 g, b;
    size_t smem;
    bool coop;
    const void* func = nullptr;
    cudaStream_t stream;
    Launch(dim3 g_, dim3 b_, size_t s = 0, cudaStream_t st = 0) : g(g_), b(b_), smem(s), coop(false), stream(st) {}
    // The launch's arguments as host expressions, before it runs: each pointer among them is
    // checked (kernel_pointer_arg), function pointers aside.
    template <class... A>
    Launch& args(const A&... a)
    {
        unsigned i = 0;
        (check_arg(a, i++), ...);
        return *this;
    }
    // Runs fn() as every thread of the launch (no std::function: <functional> is not nvcc's).
    template <class F>
    void go(F fn) { run(&call<F>, &fn); }
    void run(void (*body)(void*), void* fn);

private:
    template <class F>
    static void call(void* fn) { (*static_cast<F*>(fn))(); }
    template <class A>
    static void check_arg(const A& a, unsigned i)
    {
        using D = std::decay_t<A>;
        if constexpr (std::is_pointer_v<D> && !std::is_function_v<std::remove_pointer_t<D>>)
            kernel_pointer_arg((const void*)a, i);
    }
};

template <class... P, size_t... I>
void call_with_args(void (*k)(P...), void** args, std::index_sequence<I...>)
{
    k(*reinterpret_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}

template <class... P, size_t... I>
void check_args(Launch& L, void (*)(P...), void** args, std::index_sequence<I...>)
{
    L.args(*reinterpret_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}

template <class... P>
cudaError_t launch_args(bool coop, void (*k)(P...), dim3 g, dim3 b, void** args, size_t smem, cudaStream_t st = 0)
{
    Launch L(g, b, smem, st);
    check_args(L, k, args, std::index_sequence_for<P...>{});
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
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof(T));
    bits = cuemu::warp_exchange(mask, bits, mode, arg, width, 1);
    T out;
    memcpy(&out, &bits, sizeof(T));
    return out;
}
template <class T> inline T __shfl_sync(unsigned m, T v, int src, int w = 32) { return cuemu_xchg(m, v, 0, src, w); }
template <class T> inline T __shfl_up_sync(unsigned m, T v, unsigned d, int w = 32) { return cuemu_xchg(m, v, 1, (int)d, w); }
template <class T> inline T __shfl_down_sync(unsigned m, T v, unsigned d, int w = 32) { return cuemu_xchg(m, v, 2, (int)d, w); }
template <class T> inline T __shfl_xor_sync(unsigned m, T v, int x, int w = 32) { return cuemu_xchg(m, v, 3, x, w); }
inline unsigned __ballot_sync(unsigned m, int p) { return (unsigned)cuemu::warp_exchange(m, p != 0, 4, 0, 32, 2); }
inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
inline int __all_sync(unsigned m, int p) { return __ballot_sync(m, p) == m; }
inline void __syncthreads() { cuemu::syncthreads(); }
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
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
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

// A program's kernels are compiled here as host code, once: a branch on __CUDA_ARCH__ (nvcc's
// device pass defines it, its host pass does not) cannot be taken as a GPU takes it, and would let
// a program give its emulated kernel another body than its GPU kernel. Any use of the name after
// this header (#ifdef, defined(), #if, a pasted token) stops the build; the judge reports the
// program as unjudged for that reason.
#pragma GCC poison __CUDA_ARCH__
