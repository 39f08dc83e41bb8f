// transformers' logits processors (same tensor operations, same order), greedy selection, and
// per-sequence seeded sampling by inversion of the cumulative distribution.
#include "cuset/generate/sampling.h"

#include <algorithm>
#include <limits>
#include <mutex>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "cuset/core/hash.h"

namespace cuset {

namespace {

constexpr double kFilterValue = -std::numeric_limits<double>::infinity();

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

}  // namespace

at::Tensor seen_tokens(const at::Tensor& ids, int64_t vocab) {
    // Out-of-range ids (padding) go to an extra column that is dropped, as the processor does.
    at::Tensor idx = at::where((ids < 0).logical_or(ids >= vocab), vocab, ids);                   // [B, L]
    at::Tensor seen = at::zeros({ids.size(0), vocab + 1}, ids.options().dtype(at::kBool));       // [B, V+1]
    seen.scatter_(1, idx, true);
    return seen.narrow(1, 0, vocab);  // [B, V]
}

at::Tensor repetition_penalty_apply(const at::Tensor& scores, const at::Tensor& seen, double penalty) {
    at::Tensor penalised = at::where(scores < 0, scores * penalty, scores / penalty);  // [B, V]
    return at::where(seen, penalised, scores);
}

at::Tensor temperature_apply(const at::Tensor& scores, double temperature) { return scores / temperature; }

at::Tensor top_k_apply(const at::Tensor& scores, int64_t top_k, int64_t min_tokens_to_keep) {
    const int64_t k = std::min(std::max(top_k, min_tokens_to_keep), scores.size(-1));
    at::Tensor kth = std::get<0>(at::topk(scores, k)).narrow(-1, k - 1, 1);  // [B, 1]
    return scores.masked_fill(scores < kth, kFilterValue);
}

at::Tensor top_p_apply(const at::Tensor& scores, double top_p, int64_t min_tokens_to_keep) {
    auto [sorted_logits, sorted_indices] = at::sort(scores, /*dim=*/-1, /*descending=*/false);  // [B, V]
    at::Tensor cumulative = sorted_logits.softmax(-1).cumsum(-1);
    at::Tensor remove_sorted = cumulative <= (1 - top_p);  // tokens with 0 are kept
    const int64_t v = scores.size(-1);
    const int64_t keep = std::min(min_tokens_to_keep, v);
    remove_sorted.narrow(-1, v - keep, keep).fill_(false);
    at::Tensor remove = remove_sorted.scatter(1, sorted_indices, remove_sorted);
    return scores.masked_fill(remove, kFilterValue);
}

at::Tensor min_p_apply(const at::Tensor& scores, double min_p, int64_t min_tokens_to_keep) {
    at::Tensor probs = at::softmax(scores, -1);                   // [B, V]
    at::Tensor top = std::get<0>(probs.max(-1, /*keepdim=*/true));  // [B, 1]
    at::Tensor remove = probs < (top * min_p);
    const int64_t k = std::min(min_tokens_to_keep, probs.size(-1));
    at::Tensor best = std::get<1>(at::topk(probs, k, -1));
    remove.scatter_(-1, best, false);
    return scores.masked_fill(remove, kFilterValue);
}

at::Tensor logits_process(const at::Tensor& scores, const at::Tensor& seen, const SamplingOptions& o) {
    at::Tensor s = scores;
    if (o.repetition_penalty != 1.0) s = repetition_penalty_apply(s, seen, o.repetition_penalty);
    if (o.greedy()) return s;
    if (o.temperature != 1.0) s = temperature_apply(s, o.temperature);
    if (o.top_k != 0) s = top_k_apply(s, o.top_k, o.min_tokens_to_keep);
    if (o.top_p < 1.0) s = top_p_apply(s, o.top_p, o.min_tokens_to_keep);
    if (o.min_p > 0.0) s = min_p_apply(s, o.min_p, o.min_tokens_to_keep);
    return s;
}

uint64_t sample_seed(uint64_t seed, const std::string& prompt_id, int64_t sample_index) {
    uint64_t h = Hasher().add(prompt_id).value();
    return splitmix64(splitmix64(splitmix64(seed) ^ h) ^ static_cast<uint64_t>(sample_index));
}

SampleStream::SampleStream(uint64_t seed) : gen_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

double SampleStream::uniform() {
    std::lock_guard<std::mutex> lock(gen_.mutex());
    const uint64_t r = at::check_generator<at::CPUGeneratorImpl>(gen_)->random64();
    return static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);  // 53 bits / 2^53
}

at::Tensor greedy_select(const at::Tensor& scores) { return scores.argmax(-1); }

at::Tensor sample_select(const at::Tensor& scores, const std::vector<SampleStream*>& streams) {
    const int64_t b = scores.size(0), v = scores.size(1);
    TORCH_CHECK(static_cast<int64_t>(streams.size()) == b, "one stream per row");
    std::vector<double> u(static_cast<size_t>(b));
    for (int64_t i = 0; i < b; ++i) u[static_cast<size_t>(i)] = streams[static_cast<size_t>(i)]->uniform();
    at::Tensor cdf = at::softmax(scores, -1).to(at::kDouble).cumsum(-1);  // [B, V] fp64
    at::Tensor target = at::tensor(u, at::kDouble).to(scores.device()).unsqueeze(1) * cdf.narrow(1, v - 1, 1);  // [B, 1]
    return (cdf <= target).sum(-1).clamp_max(v - 1);  // [B] int64
}

}  // namespace cuset
