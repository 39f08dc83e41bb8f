// The batched decode loop: prefill (each prompt at its own length on the CPU, left-padded
// together elsewhere), one token per step over the KV cache, per-row stopping, finished rows
// leaving the cache. Shapes: B rows (shrinking), L longest prompt,
// V logit columns.
#include "cuset/generate/generator.h"

#include <algorithm>
#include <chrono>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "cuset/core/error.h"
#include "cuset/model/kv_cache.h"

namespace cuset {

const char* finish_reason_name(FinishReason r) {
    switch (r) {
        case FinishReason::kEos: return "eos";
        case FinishReason::kStop: return "stop";
        case FinishReason::kLength: return "length";
    }
    return "?";
}

Generator::Generator(Decoder model, const Tokenizer& tokenizer, GenerateOptions opts, c10::Device device)
    : model_(std::move(model)), tok_(tokenizer), opts_(std::move(opts)), device_(device) {
    if (opts_.max_new_tokens < 1) throw UsageError("generate: max_new_tokens must be >= 1");
}

std::vector<GenerationOutput> Generator::generate(const std::vector<GenerationInput>& batch,
                                                  const std::function<void(int64_t)>& on_token,
                                                  const std::function<void(size_t, const GenerationOutput&)>& on_finish) {
    at::NoGradGuard no_grad;
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const auto b = static_cast<int64_t>(batch.size());
    std::vector<GenerationOutput> out(batch.size());
    if (b == 0) return out;

    // Token budget per row: max_new_tokens, within the context length.
    int64_t longest = 0;
    std::vector<int64_t> budget(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
        const auto n = static_cast<int64_t>(batch[i].prompt.size());
        if (n == 0) throw InputError("generate: empty prompt");
        longest = std::max(longest, n);
        budget[i] = opts_.max_new_tokens;
        if (opts_.context_length > 0) budget[i] = std::min(budget[i], opts_.context_length - n);
        if (budget[i] < 1)
            throw InputError("generate: a prompt of " + std::to_string(n) + " tokens leaves no room in the context of " +
                             std::to_string(opts_.context_length));
    }
    const int64_t max_budget = *std::max_element(budget.begin(), budget.end());

    // Left-padded prompts [B, L]: real tokens at the right end, positions 0..n-1 per row.
    const ModelConfig& mc = model_->config();
    const int64_t pad = mc.pad_token_id >= 0 ? mc.pad_token_id : 0;
    at::Tensor ids = at::full({b, longest}, pad, at::kLong);  // [B, L]
    at::Tensor real = at::zeros({b, longest}, at::kBool);     // [B, L]
    at::Tensor seen_ids = at::full({b, longest}, -1, at::kLong);
    auto ids_a = ids.accessor<int64_t, 2>();
    auto real_a = real.accessor<bool, 2>();
    auto seen_a = seen_ids.accessor<int64_t, 2>();
    std::vector<int64_t> next_pos(batch.size());
    for (int64_t i = 0; i < b; ++i) {
        const auto& p = batch[static_cast<size_t>(i)].prompt;
        const auto n = static_cast<int64_t>(p.size());
        for (int64_t t = 0; t < n; ++t) {
            ids_a[i][longest - n + t] = p[static_cast<size_t>(t)];
            seen_a[i][longest - n + t] = p[static_cast<size_t>(t)];
            real_a[i][longest - n + t] = true;
        }
        next_pos[static_cast<size_t>(i)] = n;
    }
    at::Tensor pos = (real.to(at::kLong).cumsum(1) - 1).clamp_min(0);  // [B, L]

    const c10::ScalarType dtype = model_->embed_tokens.scalar_type();
    KvCache cache = kv_cache_allocate(mc, b, longest + max_budget, dtype, device_);
    at::Tensor hidden;  // [B, L or 1, D]
    at::Tensor last;    // [B, 1, D]: each row's last prompt position
    if (device_.is_cpu() && b > 1) {
        // CPU: each prompt prefilled at its own length (no compute on padding), its keys and
        // values copied right-aligned into the batch's cache.
        KvCache one = kv_cache_allocate(mc, 1, longest, dtype, device_);
        std::vector<at::Tensor> lasts;
        for (int64_t i = 0; i < b; ++i) {
            const auto& p = batch[static_cast<size_t>(i)].prompt;
            const auto n = static_cast<int64_t>(p.size());
            one.length = 0;
            std::vector<int64_t> row(p.begin(), p.end());
            at::Tensor h = model_->forward(at::tensor(row, at::kLong).unsqueeze(0).to(device_), {},
                                           at::arange(n, at::kLong).unsqueeze(0).to(device_), {}, &one);  // [1, n, D]
            lasts.push_back(h.narrow(1, n - 1, 1));
            for (size_t l = 0; l < cache.k.size(); ++l) {
                cache.k[l][i].narrow(1, longest - n, n).copy_(one.k[l][0].narrow(1, 0, n));
                cache.v[l][i].narrow(1, longest - n, n).copy_(one.v[l][0].narrow(1, 0, n));
            }
        }
        cache.real.narrow(1, 0, longest).copy_(real);
        cache.length = longest;
        last = at::cat(lasts, 0);
    } else {
        hidden = model_->forward(ids.to(device_), real.to(device_), pos.to(device_), {}, &cache);  // [B, L, D]
        last = hidden.narrow(1, longest - 1, 1);
    }
    at::Tensor scores = model_->logits(last).squeeze(1).to(at::kFloat);  // [B, V] fp32
    const int64_t vocab = scores.size(1);
    const SamplingOptions& so = opts_.sampling;
    at::Tensor seen;  // [B, V] bool: prompt + generated ids, for the repetition penalty
    if (so.repetition_penalty != 1.0) seen = seen_tokens(seen_ids.to(device_), vocab);

    std::vector<SampleStream> streams;
    if (!so.greedy())
        for (const GenerationInput& in : batch) streams.emplace_back(in.seed);
    std::vector<int64_t> active(batch.size());  // row -> index into `batch`
    for (int64_t i = 0; i < b; ++i) active[static_cast<size_t>(i)] = i;
    at::Tensor positions = at::tensor(next_pos, at::kLong).to(device_);  // [B]

    auto finish = [&](int64_t i, FinishReason why, size_t text_end, bool drop_last) {
        GenerationOutput& o = out[static_cast<size_t>(i)];
        o.finish = why;
        if (why != FinishReason::kStop) {
            std::vector<int32_t> keep(o.tokens.begin(), o.tokens.end() - (drop_last ? 1 : 0));
            o.text = tok_.decode(keep);
        } else {
            o.text.resize(text_end);
        }
        o.seconds = std::chrono::duration<double>(clock::now() - t0).count();
        if (on_finish) on_finish(static_cast<size_t>(i), o);
    };

    for (int64_t step = 0;; ++step) {
        at::Tensor processed = logits_process(scores, seen, so);  // [B, V]
        at::Tensor next;                                          // [B] int64
        if (so.greedy()) {
            next = greedy_select(processed);
        } else {
            std::vector<SampleStream*> rows;
            for (int64_t i : active) rows.push_back(&streams[static_cast<size_t>(i)]);
            next = sample_select(processed, rows);
        }
        at::Tensor next_cpu = next.to(at::kCPU);
        const int64_t* nx = next_cpu.data_ptr<int64_t>();
        std::vector<int64_t> keep_rows;
        std::vector<int64_t> still;
        for (size_t r = 0; r < active.size(); ++r) {
            const int64_t i = active[r];
            GenerationOutput& o = out[static_cast<size_t>(i)];
            const auto token = static_cast<int32_t>(nx[r]);
            o.tokens.push_back(token);
            bool done = false;
            if (std::find(opts_.eos_ids.begin(), opts_.eos_ids.end(), token) != opts_.eos_ids.end()) {
                finish(i, FinishReason::kEos, 0, true);
                done = true;
            } else if (!opts_.stop_strings.empty()) {
                o.text = tok_.decode(o.tokens);
                size_t first = std::string::npos;
                for (const std::string& s : opts_.stop_strings) first = std::min(first, o.text.find(s));
                if (first != std::string::npos) {
                    finish(i, FinishReason::kStop, first, false);
                    done = true;
                }
            }
            if (!done && static_cast<int64_t>(o.tokens.size()) >= budget[static_cast<size_t>(i)]) {
                finish(i, FinishReason::kLength, 0, false);
                done = true;
            }
            if (!done) {
                keep_rows.push_back(static_cast<int64_t>(r));
                still.push_back(i);
            }
        }
        if (on_token) on_token(static_cast<int64_t>(active.size()));
        if (seen.defined()) seen.scatter_(1, next.unsqueeze(1), true);
        if (still.empty()) break;
        if (still.size() < active.size()) {
            at::Tensor rows = at::tensor(keep_rows, at::kLong).to(device_);  // [B']
            cache.select_rows(rows);
            next = next.index_select(0, rows);
            positions = positions.index_select(0, rows);
            if (seen.defined()) seen = seen.index_select(0, rows);
            active = std::move(still);
        }
        hidden = model_->forward(next.unsqueeze(1), {}, positions.unsqueeze(1), {}, &cache);  // [B', 1, D]
        scores = model_->logits(hidden).squeeze(1).to(at::kFloat);                            // [B', V]
        positions = positions + 1;
    }
    return out;
}

}  // namespace cuset
