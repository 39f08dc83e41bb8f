// The first-order fp32 rounding bound of a decoder's logits and gradients, for the parity tests
// against transformers / PEFT (test_model.cpp, test_lora.cpp): the two implementations compute
// the same function with their reductions in other orders.
//
// A reduction of n terms, reordered, moves its result by at most n u times the scale of its
// terms (the classic recursive-summation bound; u = 2^-24). A logit is the end of a chain of
// reductions: per layer the input norm (over D), the q/k/v projections (D), the scores (the head
// dim), the softmax and the weighted sum of values (T each), the output projection (H x head dim),
// the MLP's norm and gate/up projections (D) and its down projection (I); then the final norm (D)
// and the head (D). Through the norms every activation stays at the scale of the logits, so to
// first order a logit is within (sum of those n) u of the exact value, relative to the logits'
// largest magnitude. A gradient goes back through the same chain and two more reductions (the
// loss over V, and a weight gradient over the B T tokens). Both implementations round, so the
// bounds count twice. A semantic slip (a wrong RoPE factor, mask, bias or padding row) moves
// values by 1e-2 relative or more, far above these (~1e-4).
#pragma once

#include <cmath>
#include <cstdint>

#include "cuset/model/model_config.h"

namespace cuset::test {

// The summed reduction lengths of the forward pass to the logits, for T positions.
inline double forward_reduction_length(const cuset::ModelConfig& c, int64_t t) {
    const double d = static_cast<double>(c.hidden_size), e = static_cast<double>(c.head_dim);
    const double h = static_cast<double>(c.n_head), i = static_cast<double>(c.intermediate_size);
    const double per_layer = d + d + e + 2.0 * static_cast<double>(t) + h * e + d + d + i;
    return static_cast<double>(c.n_layer) * per_layer + d + d;
}

// Two implementations' logits: |dz| <= this times max|z|.
inline double logits_rel_of_max(const cuset::ModelConfig& c, int64_t t) {
    return 2.0 * forward_reduction_length(c, t) * std::ldexp(1.0, -24);
}

// Two implementations' gradients: |dg| <= this times the tensor's max|g| (the forward chain, the
// backward chain of the same lengths, the loss over V and the sum over the B T tokens).
inline double grads_rel_of_max(const cuset::ModelConfig& c, int64_t b, int64_t t) {
    const double n = 2.0 * forward_reduction_length(c, t) + static_cast<double>(c.vocab_size) +
                     static_cast<double>(b * t);
    return 2.0 * n * std::ldexp(1.0, -24);
}

}  // namespace cuset::test
