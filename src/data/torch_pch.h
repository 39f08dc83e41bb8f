// Precompiled header for the LibTorch-based targets: the few heavy LibTorch headers that most
// sources need, parsed once per target instead of once per file. Not torch/torch.h, which
// drags in the data loaders, optimizers, serialization and the JIT.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>
