#pragma once
#include "cuemu.h"
namespace cooperative_groups {
struct thread_block {
    void sync() const { cuemu::syncthreads(); }
    unsigned thread_rank() const { return (unsigned)cuemu::linear_tid(); }
    unsigned size() const { return (unsigned)cuemu::block_threads(); }
    unsigned num_threads() const { return size(); }
    dim3 group_index() const { uint3 b = cuemu::bidx(); return dim3(b.x, b.y, b.z); }
    dim3 thread_index() const { uint3 t = cuemu::tidx(); return dim3(t.x, t.y, t.z); }
};
inline thread_block this_thread_block() { return thread_block{}; }

template <unsigned N>
struct thread_block_tile {
    static_assert(N <= 32 && (N & (N - 1)) == 0, "tile size");
    unsigned thread_rank() const { return (unsigned)cuemu::linear_tid() % N; }
    static constexpr unsigned size() { return N; }
    static constexpr unsigned num_threads() { return N; }
    unsigned meta_group_rank() const { return (unsigned)cuemu::linear_tid() / N; }
    unsigned meta_group_size() const { return ((unsigned)cuemu::block_threads() + N - 1) / N; }
    void sync() const { cuemu::syncwarp(0xffffffffu); }
    template <class T> T shfl(T v, int src) const { return __shfl_sync(0xffffffffu, v, src, N); }
    template <class T> T shfl_down(T v, unsigned d) const { return __shfl_down_sync(0xffffffffu, v, d, N); }
    template <class T> T shfl_up(T v, unsigned d) const { return __shfl_up_sync(0xffffffffu, v, d, N); }
    template <class T> T shfl_xor(T v, int m) const { return __shfl_xor_sync(0xffffffffu, v, m, N); }
    unsigned ballot(int p) const { return __ballot_sync(0xffffffffu, p); }
};
template <unsigned N> inline thread_block_tile<N> tiled_partition(const thread_block&) { return {}; }

struct grid_group {
    void sync() const { cuemu::grid_sync(); }
    unsigned long long thread_rank() const { return cuemu::grid_rank(); }
    unsigned long long size() const { return cuemu::grid_size(); }
    unsigned long long num_threads() const { return size(); }
};
inline grid_group this_grid() { return grid_group{}; }

// cg::sync(group): the group's barrier.
template <class Group> inline void sync(const Group& g) { g.sync(); }

template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return a < b ? a : b; } };
template <class T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

template <unsigned N, class T, class Op>
T reduce(const thread_block_tile<N>& g, T v, Op op)
{
    for (unsigned o = N / 2; o > 0; o >>= 1) v = op(v, g.shfl_xor(v, (int)o));
    return v;
}
}  // namespace cooperative_groups
