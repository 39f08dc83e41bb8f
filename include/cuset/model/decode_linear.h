// Linear layers of a CPU decode step: y = x w^T (+ b) for an input of a few rows (B sequences of
// one new token each) without autograd. A decode step is little more than such products, the
// largest the [V, D] lm_head, and each reads its whole weight for a handful of rows: the step is
// bound by memory bandwidth. MKL runs a one-row product on a single thread (about half the
// bandwidth of two cores) and, for 2..16 rows, picks a kernel that streams the wide weight about
// 2x slower than with the weight as the tall operand. Here the output features are split over the
// intra-op threads: one row is a vectorised dot product per weight row, several rows a matrix
// product per slice with the weight as the tall operand. Every other case (CUDA, autograd, a dtype
// other than fp32, more rows) is at::linear, so a caller can use it wherever it would call
// at::linear.
#pragma once

#include <ATen/core/Tensor.h>

namespace cuset {

// The most rows (x.numel() / in) the decode kernels take; more go to at::linear.
constexpr int64_t kDecodeLinearMaxRows = 16;

// Whether decode_linear takes its own kernels for this input and weight.
bool decode_linear_applies(const at::Tensor& x, const at::Tensor& w);

// x [..., in], w [out, in], bias [out] or undefined -> [..., out]; equal to at::linear up to the
// order of the fp32 sums.
at::Tensor decode_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias = {});

}  // namespace cuset
