// The LM head's per-token loss without [N, V] logits at once: token_nll (the negative
// log-likelihood of each target under softmax(h W^T), a chunk of rows at a time, with a backward
// that recomputes each chunk's logits) and the chunk operations it is made of, which the training
// objective's fused path (train/objective.cpp) runs too. Scoring and training share it.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace cuset {

// Label value of a target that is not trained on (prompt, padding, template): costs nothing.
constexpr int64_t kIgnoreIndex = -100;

// Per-token NLL l = -log softmax(h W^T)[y], computed in fp32 (fp64 when the inputs are fp64)
// whatever the input dtype, in chunks of `chunk_size` tokens with a custom autograd function
// whose backward recomputes each chunk's logits, so [N, V] logits and their gradient never exist
// at once. chunk_size = 0: plain full logits through at::cross_entropy (the reference).
//   hidden [N, D] (model dtype), weight [V, D] (same dtype), labels [N] int64, kIgnoreIndex =
//   ignored: only valid rows are computed. Returns [N] fp32 (fp64 for fp64 inputs), 0 at ignored.
// Gradients flow to hidden and weight. A non-finite logit throws NonFiniteError (a
// RuntimeFailure); a label outside [0, V) throws InputError.
at::Tensor token_nll(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& labels,
                     int64_t chunk_size);

// ---------------------------------------------------------------- the chunk operations

namespace lm_head {

// fp32 for fp32/bf16/fp16 models, fp64 for fp64 (the tests' exact references).
at::ScalarType compute_dtype(const at::Tensor& t);

// h [r, D], w [V, D] (model dtype) -> logits [r, V] in the compute dtype. Reduced-precision models
// accumulate in fp32 on CUDA (mm.dtype); the CPU has no such kernel, so there the logits are
// rounded to the model dtype before the fp32 loss (what a plain bf16 lm_head does too).
at::Tensor chunk_logits(const at::Tensor& h, const at::Tensor& w);

// chunk_logits of all `n` rows at once, [n, V] with autograd; NonFiniteError naming `where` when a
// row holds a non-finite logit.
at::Tensor full_logits(const at::Tensor& h, const at::Tensor& w, const char* where);

struct ChunkLoss {
    at::Tensor lse;      // [r] log-sum-exp of the logits
    at::Tensor nll;      // [r] lse - z[y]
    at::Tensor sum_exp;  // [r] sum exp(z - rowmax)
    at::Tensor n_bad;    // [] int64: rows with a non-finite logit
};

// z [r, V] logits, overwritten with exp(z - rowmax); y [r] int64 in [0, V).
// A row holds a non-finite logit exactly when its plain sum is non-finite (NaN and +-inf
// propagate; finite logits summing past 3.4e38 would need |z| ~ 1e34, a broken model anyway).
ChunkLoss softmax_inplace(at::Tensor& z, const at::Tensor& y);

// p [r, V] = exp(z - rowmax) (or exp(z - lse) with sum_exp undefined) becomes, in place,
// d(sum_r g_r l_r)/dz = g_r (softmax_r - onehot(y_r)). g [r] in p's dtype.
void nll_grad_inplace(at::Tensor& p, const at::Tensor& sum_exp, const at::Tensor& y, const at::Tensor& g);

// One chunk's share of the lm_head backward: gz [r, V] (compute dtype), h [r, D], w [V, D]
// (model dtype). Writes grad_h [r, D] (model dtype, may be undefined) and adds into grad_w
// [V, D] (compute dtype, may be undefined); while *grad_w_empty, grad_w holds no value yet and
// is written instead of added to (no zero fill, no read of [V, D] for the first chunk).
void chunk_backward(const at::Tensor& gz, const at::Tensor& h, const at::Tensor& w, at::Tensor grad_h,
                    at::Tensor& grad_w, bool* grad_w_empty);

// NonFiniteError "<where>: <n_bad> token(s) have non-finite logits ..." when n_bad > 0.
void throw_if_nonfinite(int64_t n_bad, const char* where);

// RuntimeFailure naming `where` unless hidden [.., D] (hidden_dim dimensions) and weight [V, D]
// are defined, floating point, and agree in D, dtype and device.
void check_model_tensors(const at::Tensor& hidden, int64_t hidden_dim, const at::Tensor& weight, const char* where);

}  // namespace lm_head

}  // namespace cuset
