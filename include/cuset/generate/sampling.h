// Next-token selection with transformers' generate() semantics: the logits processors it applies
// (repetition penalty, then, when sampling, temperature -> top_k -> top_p -> min_p, each with
// min_tokens_to_keep = 1 and filter value -inf, written with the same tensor operations so ties
// resolve the same way), greedy argmax, and sampling where every sequence draws from its own
// seeded stream, so a sample's tokens do not depend on the batch it is decoded in.
// Notation: B sequences, V vocabulary (logit columns), L ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

namespace cuset {

struct SamplingOptions {
    double temperature = 0.0;         // 0 = greedy (do_sample=False); > 0 samples
    int64_t top_k = 0;                // 0 = off
    double top_p = 1.0;               // >= 1 = off
    double min_p = 0.0;               // 0 = off
    double repetition_penalty = 1.0;  // 1 = off
    int64_t min_tokens_to_keep = 1;

    bool greedy() const { return temperature <= 0.0; }
};

// transformers' processors on scores [B, V] fp32 (returns new tensors, the input is untouched).
// RepetitionPenaltyLogitsProcessor: seen [B, V] bool (the token occurs in the row's prompt or
// generated ids; left padding excluded as generate() does); a seen score s becomes s * penalty
// when s < 0, else s / penalty.
at::Tensor repetition_penalty_apply(const at::Tensor& scores, const at::Tensor& seen, double penalty);
// seen [B, V] bool from ids [B, L] int64; ids < 0 or >= V (padding) are ignored.
at::Tensor seen_tokens(const at::Tensor& ids, int64_t vocab);
at::Tensor temperature_apply(const at::Tensor& scores, double temperature);                  // scores / t
at::Tensor top_k_apply(const at::Tensor& scores, int64_t top_k, int64_t min_tokens_to_keep);  // TopKLogitsWarper
at::Tensor top_p_apply(const at::Tensor& scores, double top_p, int64_t min_tokens_to_keep);   // TopPLogitsWarper
at::Tensor min_p_apply(const at::Tensor& scores, double min_p, int64_t min_tokens_to_keep);   // MinPLogitsWarper

// The whole chain in generate()'s order: repetition penalty (greedy too), then, when sampling,
// temperature (!= 1), top_k (!= 0), top_p (< 1), min_p (> 0). `seen` may be undefined when the
// penalty is off. scores [B, V] fp32 -> [B, V] fp32.
at::Tensor logits_process(const at::Tensor& scores, const at::Tensor& seen, const SamplingOptions& opts);

// The seed of one sample's stream: a mix of (run seed, prompt id, sample index).
uint64_t sample_seed(uint64_t seed, const std::string& prompt_id, int64_t sample_index);

// One sequence's random stream (a CPU at::Generator, whatever the device: the draws are then
// the same on every device and thread count). One uniform draw per sampled token.
class SampleStream {
public:
    explicit SampleStream(uint64_t seed);
    double uniform();  // [0, 1), 53 random bits

private:
    at::Generator gen_;
};

// Greedy: argmax [B] int64 (the first of equal maxima, as torch.argmax).
at::Tensor greedy_select(const at::Tensor& scores);
// Sampling from softmax(scores) [B, V] by inversion of the fp64 cumulative distribution with
// one uniform per row from streams[b]: token b = the first index whose cumulative probability
// exceeds u_b (a token of probability 0, filtered to -inf, is never drawn). [B] int64.
at::Tensor sample_select(const at::Tensor& scores, const std::vector<SampleStream*>& streams);

}  // namespace cuset
