// Stand-in for ATen's CUDA context in KernelBench extensions built for the CPU emulator.
#pragma once
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
