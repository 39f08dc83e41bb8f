#pragma once
#include "cuemu.h"
// CPU stand-in for the cuRAND device API: not the XORWOW sequence, but a good generator with
// independent (seed, subsequence) streams, enough for statistical checks.
struct curandState { unsigned long long s; };
inline unsigned long long cuemu_splitmix(unsigned long long& x)
{
    unsigned long long z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
inline void curand_init(unsigned long long seed, unsigned long long subseq, unsigned long long offset, curandState* st)
{
    unsigned long long x = seed ^ (subseq * 0xD1B54A32D192ED03ull);
    st->s = cuemu_splitmix(x);
    for (unsigned long long i = 0; i < offset; ++i) cuemu_splitmix(st->s);
}
inline unsigned int curand(curandState* st) { return (unsigned)(cuemu_splitmix(st->s) >> 32); }
inline float curand_uniform(curandState* st) { return ((curand(st) >> 8) + 1) * (1.0f / 16777216.0f); }  // (0, 1]
inline double curand_uniform_double(curandState* st) { return ((cuemu_splitmix(st->s) >> 11) + 1) * (1.0 / 9007199254740992.0); }
