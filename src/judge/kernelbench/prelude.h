// What every translation unit of a KernelBench extension built for the CPU emulator reads first
// (precompiled once per machine). torch's extension header is read as host code, as torch's own
// build reads it for main.cpp (without nvcc's __CUDACC__ and __NVCC__, which would ask it for
// device code), then the emulator's runtime, with nvcc's macros back. The candidate's sources
// include both again (no-ops). After them, for the candidate's code only: its tensors are CPU
// tensors, so asking whether one is a CUDA tensor asks whether it is a CPU one, and a tensor
// asked for on kCUDA is made on the CPU.
#pragma push_macro("__CUDACC__")
#pragma push_macro("__NVCC__")
#undef __CUDACC__
#undef __NVCC__
#include <torch/extension.h>
#pragma pop_macro("__NVCC__")
#pragma pop_macro("__CUDACC__")
#include <cuemu.h>  // the emulator's runtime folder, on the include path
#define is_cuda is_cpu
#define kCUDA kCPU
