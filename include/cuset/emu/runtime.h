// The cuemu runtime (src/emu/runtime/), embedded in the library at build time, and the host
// compiler flags that build it and the programs rewritten by transform_program() against it.
//
// cuemu runs a CUDA program on an x86-64 CPU: every CUDA thread is a fiber, __syncthreads, warp
// shuffles and votes and grid syncs are cooperative barriers with CUDA's semantics, and misuse
// (divergent collectives, reading exited lanes, deadlocks, bad launch configurations) stops the
// program with exit status 86. See src/emu/runtime/cuemu.h.
//
// Building, with D the folder runtime_files() were written to (write_runtime_files) and
// FLAGS = build_flags(D, cuda_include) (g++ 9 or newer, x86-64):
//   runtime object, once:   g++ FLAGS -c D/cuemu.cpp -o D/cuemu.o
//   precompiled header, optional, once (same FLAGS, so that GCC accepts it):
//                           g++ FLAGS -x c++-header D/cuemu.h -o D/cuemu.h.gch
//   each program:           g++ FLAGS -include D/cuemu.h prog.cpp D/cuemu.o -o prog
// where prog.cpp = transform_program(the .cu text). With D/cuemu.h.gch present, `-include
// D/cuemu.h` loads it instead of parsing the CUDA headers again (add -Winvalid-pch to see why
// one is rejected). The programs need no other library; the runtime reads the environment
// variables documented in cuemu.cpp (CUEMU_SCHED, CUEMU_SEED, CUEMU_PERTURB, ...).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cuset::emu {

// Every file of the runtime as (path relative to the runtime folder, text), in a fixed order:
// cuemu.h, cuemu.cpp, then the stand-in CUDA headers under include/ (cooperative_groups.h,
// cooperative_groups/reduce.h, curand_kernel.h, ...).
const std::vector<std::pair<std::string, std::string>>& runtime_files();

// The host compiler flags for both the runtime object and a program (a program additionally gets
// `-include <runtime_dir>/cuemu.h`): -O1, warnings off, -fpermissive (device code written for
// nvcc), the runtime's include/ and folder before `cuda_include` (whose cuda_runtime.h,
// cuda_fp16.h and vector types are used; no CUDA library is linked), and the macros of nvcc's host
// pass, so that a program sees what nvcc shows it and nothing that names the emulator: gnu++17,
// no __OPTIMIZE__ but __NO_INLINE__ (nvcc calls g++ without -std or -O), __CUDACC__, __NVCC__,
// __CUDACC_VER_MAJOR__/MINOR/BUILD, __CUDA_API_VER_MAJOR__/MINOR, __CUDA_ARCH_LIST__ (nvcc's
// default target), __NVCC_DIAG_PRAGMA_SUPPORT__ and __CUDACC_DEVICE_ATOMIC_BUILTINS__ (as nvcc
// 13.0). The version is the toolkit's: CUDART_VERSION in <cuda_include>/cuda_runtime_api.h, nvcc's
// build number from the toolkit's version.json or its dist-info/nvidia_cuda_nvcc-* folder (0 when
// neither is there); without cuda_runtime_api.h only __CUDACC__ and __NVCC__. cuemu.h keeps
// __CUDACC__ from the CUDA headers themselves, which take their host compiler's path.
std::vector<std::string> build_flags(const std::string& runtime_dir, const std::string& cuda_include);

// Writes runtime_files() under `dir` (created as needed; existing files are replaced).
// Throws cuset::RuntimeFailure when a file cannot be written.
void write_runtime_files(const std::string& dir);

// 16 hex digits identifying the runtime's files and build flags: a key for a folder that caches
// the written runtime and its built object.
std::string runtime_hash();

}  // namespace cuset::emu
