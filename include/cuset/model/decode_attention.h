// Attention of a few new query positions over a KV cache with grouped key/value heads (GQA),
// without repeating the keys and values for every query head: the G = H / K query heads that share
// a key/value head are stacked along the query axis, so each cached key and value is read once per
// step instead of copied G times (repeat_kv + SDPA, which at batch 32 over a 640-position cache of
// a 7B model moves ~9 GB per decode step, more than half the weights' 15 GB). Scores and softmax in
// fp32; the probabilities are rounded to the value dtype for the product with V, as flash kernels do.
#pragma once

#include <ATen/core/Tensor.h>

namespace cuset {

// Query positions per row up to which the decoder takes this path on CUDA (decode steps); longer
// inputs (a prefill) use SDPA's fused kernels.
constexpr int64_t kDecodeAttentionMaxQueries = 16;

// q [B, H, T, E], k and v [B, K, L, E] with H a multiple of K (head h reads key/value head h / (H/K),
// repeat_kv's order), mask [B, 1, T, L] bool (true: attend; every query row attends somewhere),
// scale the score factor -> [B, H, T, E] in q's dtype.
at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                            double scale);

}  // namespace cuset
