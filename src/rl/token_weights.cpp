// CuSeT's token weights on a GRPO generation batch (rl/token_weights.h).
#include "cuset/rl/token_weights.h"

#include <algorithm>
#include <string>

#include <ATen/ATen.h>

#include "cuset/core/error.h"

namespace cuset::rl {

std::vector<std::pair<int32_t, int32_t>> token_byte_spans(const Tokenizer& tok, const std::vector<int32_t>& ids) {
    std::vector<std::pair<int32_t, int32_t>> spans;
    spans.reserve(ids.size());
    // A prefix that ends inside a character decodes it as U+FFFD: what a prefix decodes to counts
    // only as far as it agrees with the whole decoding.
    const std::string full = tok.decode(ids);
    std::vector<int32_t> prefix;
    prefix.reserve(ids.size());
    int32_t end = 0;
    for (int32_t id : ids) {
        prefix.push_back(id);
        const std::string p = tok.decode(prefix);
        const size_t n = std::min(p.size(), full.size());
        const auto agree = static_cast<int32_t>(std::mismatch(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(n),
                                                              full.begin()).first - p.begin());
        const int32_t b = end;
        end = std::max(end, agree);
        spans.emplace_back(b, end);
    }
    return spans;
}

CompletionWeights completion_token_weights(Decoder& model, const Tokenizer& tok, const GrpoRollout& batch,
                                           const GrpoStepOptions& step, const TokenWeightOptions& o) {
    CompletionWeights out;
    const int64_t N = batch.completion_ids.size(0), T = batch.completion_ids.size(1);
    GrpoStepOptions at_one = step;
    at_one.temperature = 1.0;  // CuSeT's confidence is the model's probability, not the sampling distribution's
    const at::Tensor logps = rollout_old_logps(model, batch, at_one);  // [N, T] fp32, CPU
    const at::Tensor ids = batch.completion_ids.to(at::kCPU, at::kLong).contiguous();   // [N, T]
    const at::Tensor mask = batch.completion_mask.to(at::kCPU, at::kLong).contiguous();  // [N, T]
    const int64_t* idp = ids.data_ptr<int64_t>();
    const int64_t* mp = mask.data_ptr<int64_t>();

    // The completion tokens, sequence by sequence: their position, confidence and sensitivity.
    std::vector<int64_t> counts(static_cast<size_t>(N), 0), where;
    std::vector<uint8_t> sensitive;
    for (int64_t i = 0; i < N; ++i) {
        std::vector<int32_t> seq;
        std::vector<int64_t> pos;
        for (int64_t t = 0; t < T; ++t)
            if (mp[i * T + t]) {
                seq.push_back(static_cast<int32_t>(idp[i * T + t]));
                pos.push_back(i * T + t);
            }
        counts[static_cast<size_t>(i)] = static_cast<int64_t>(seq.size());
        if (seq.empty()) continue;
        const std::string text = tok.decode(seq);
        const std::vector<uint32_t> bits = tag_tokens(tag_text(text, o.tagger), token_byte_spans(tok, seq));
        for (size_t k = 0; k < seq.size(); ++k) {
            where.push_back(pos[k]);
            sensitive.push_back(bits[k] != 0);
        }
    }
    const int64_t n = static_cast<int64_t>(where.size());
    const at::Tensor where_t = at::tensor(where, at::kLong);                                 // [n]
    const at::Tensor conf = at::exp(logps.reshape({N * T}).index_select(0, where_t).to(at::kDouble));  // [n]
    const at::Tensor sens = at::tensor(std::vector<int64_t>(sensitive.begin(), sensitive.end()), at::kLong)
                                .to(at::kBool);  // [n]
    const CusetTokenWeights w = cuset_token_weights(conf, sens, counts, o.cuset);
    at::Tensor flat = at::zeros({N * T}, at::kFloat);
    if (n > 0) flat.index_copy_(0, where_t, w.coefficient.to(at::kFloat));
    out.weights = flat.reshape({N, T});
    out.tokens = n;
    out.kept = n > 0 ? w.kept.sum().item<int64_t>() : 0;
    out.sensitive = n > 0 ? sens.sum().item<int64_t>() : 0;
    for (int64_t i = 0; i < N; ++i)
        if (counts[static_cast<size_t>(i)] > 0) {
            out.weight_sum += w.weight[i].item<double>();
            ++out.completions;
        }
    return out;
}

}  // namespace cuset::rl
