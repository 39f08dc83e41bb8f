// Precompiled header for the LibTorch-based targets (cuset_use_torch in src/CMakeLists.txt): the
// few heavy LibTorch headers that most sources need, parsed once per target instead of once per
// file. It sits in src/, in no library's folder, because every LibTorch library shares it; it
// includes no cuset header (tests/layering allows it only core's). Not torch/torch.h, which
// drags in the data loaders, optimizers, serialization and the JIT.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>
