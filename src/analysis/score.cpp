// The scoring pass: every token's probability under the model, into a score file.
#include "cuset/analysis/score.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>

#include <ATen/ATen.h>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/data/batching.h"
#include "cuset/data/dataset.h"
#include "cuset/model/device.h"
#include "cuset/model/lm_head.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"

namespace cuset {

namespace fs = std::filesystem;

std::string score_run(const ScoreRequest& req, const TextOptions& text, const Runtime& runtime) {
    at::NoGradGuard no_grad;
    const ScoreSetup& c = req.setup;
    const std::string& model_dir = req.model.empty() ? c.model : req.model;
    std::string data = !req.data.empty() ? req.data : req.split == "eval" ? c.eval : c.train;
    if (data.empty()) throw UsageError("score: no data file (set data.train / data.eval or pass --data)");
    if (!req.out.empty()) {  // never over an input: the data, the model's or tokenizer's files
        std::vector<std::string> inputs = folder_entries(model_dir);
        for (const std::string& f : folder_entries(c.tokenizer)) inputs.push_back(f);
        if (!c.adapter.empty())
            for (const std::string& f : folder_entries(c.adapter)) inputs.push_back(f);
        inputs.insert(inputs.end(), {data, c.tokenizer});
        refuse_output_equal_to_input(req.out, inputs, "score");
        if (req.format != "jsonl") refuse_output_equal_to_input(req.out + ".idx", inputs, "score (its index)");
    }
    const c10::Device device = runtime.device;
    const c10::ScalarType dtype = runtime.dtype;
    runtime_use_threads(runtime);
    // The model first: a LoRA checkpoint given as --model (no tokenizer there either) gets its hint.
    const std::string& adapter = c.adapter;  // attached whenever set (model.lora.enabled is for training)
    Decoder model = model_load_for_inference(model_dir, adapter, dtype, device);
    TextPipeline pipe = text_pipeline_from(text);
    TokenizedSplit split = dataset_tokenize(data, pipe, c.tokenize, req.split);
    if (pipe.tokenizer->vocab_size() > model->config().vocab_size)  // as training checks it
        throw InputError(strprintf("tokenizer %s has %lld tokens but model %s has only %lld embedding rows",
                                   pipe.tokenizer->source().c_str(), (long long)pipe.tokenizer->vocab_size(),
                                   model_dir.c_str(), (long long)model->config().vocab_size));

    ScoreHeader header;
    header.key.model_hash = hash_model_with_adapter(model_dir, adapter);
    header.key.pipeline_hash = pipe.key;
    header.key.data_hash = Hasher().add(split.hash).add_u64(static_cast<uint64_t>(c.max_seq_len)).hex();
    header.model = adapter.empty() ? model_dir : model_dir + " + LoRA " + adapter;
    header.data = data;
    header.dtype = dtype_name(dtype);
    header.max_seq_len = c.max_seq_len;

    std::string out = req.out;
    if (out.empty()) {
        std::string dir = c.run_dir;
        fs::create_directories(dir);
        out = (fs::path(dir) / (req.format == "jsonl" ? "scores.jsonl" : "scores.bin")).string();
    } else if (fs::path(out).has_parent_path()) {
        fs::create_directories(fs::path(out).parent_path());
    }

    // Samples truncated to max_seq_len (as the trainer sees them), scored longest first.
    const int64_t n = static_cast<int64_t>(split.samples.size());
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto len = [&](int64_t i) {
        return std::min<int64_t>(c.max_seq_len, static_cast<int64_t>(split.samples[i].ids.size()));
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return len(a) > len(b); });
    std::vector<ScoreRecord> records(n);
    const int64_t pad = pipe.tokenizer->pad_id() >= 0 ? pipe.tokenizer->pad_id() : 0;
    const int64_t chunk = c.chunk_size;
    const int64_t mbs = c.micro_batch_size;
    Progress progress("score", n, "samples", progress_bar_wanted(c.tokenize.progress));
    int64_t done = 0, tokens = 0;
    for (int64_t b0 = 0; b0 < n; b0 += mbs) {
        int64_t B = std::min(mbs, n - b0);
        int64_t T = len(order[b0]);
        at::Tensor ids = at::full({B, T}, pad, at::kLong);          // [B, T]
        at::Tensor labels = at::full({B, T}, kIgnoreIndex, at::kLong);  // [B, T] next token
        auto* ip = ids.data_ptr<int64_t>();
        auto* lp = labels.data_ptr<int64_t>();
        for (int64_t b = 0; b < B; ++b) {
            const TokenizedSample& s = split.samples[order[b0 + b]];
            int64_t L = len(order[b0 + b]);
            for (int64_t t = 0; t < L; ++t) {
                ip[b * T + t] = s.ids[t];
                if (t + 1 < L) lp[b * T + t] = s.ids[t + 1];
            }
            tokens += L;
        }
        // Right-padded rows need no mask under causal attention (see MicroBatch::causal_mask).
        at::Tensor hidden = model->forward(ids.to(device));  // [B, T, D]
        at::Tensor nll = token_nll(hidden.reshape({B * T, -1}), model->lm_head_weight(),
                                   labels.reshape({B * T}).to(device), chunk);  // [B*T] fp32
        at::Tensor prob = at::exp(-nll).to(at::kFloat).cpu().reshape({B, T});   // [B, T]
        const float* pp = prob.data_ptr<float>();
        for (int64_t b = 0; b < B; ++b) {
            int64_t i = order[b0 + b];
            const TokenizedSample& s = split.samples[i];
            int64_t L = len(i);
            ScoreRecord& r = records[i];
            r.id = s.id;
            r.ids.assign(s.ids.begin(), s.ids.begin() + L);
            r.roles.assign(s.roles.begin(), s.roles.begin() + L);
            r.trainable.assign(s.trainable.begin(), s.trainable.begin() + L);
            r.tag_bits.assign(s.tag_bits.begin(), s.tag_bits.begin() + L);
            r.prob.assign(L, std::numeric_limits<float>::quiet_NaN());
            for (int64_t t = 0; t + 1 < L; ++t) r.prob[t + 1] = pp[b * T + t];
        }
        done += B;
        progress.update(done, strprintf("%lld tokens", (long long)tokens));
    }
    progress.finish(strprintf("%lld tokens", (long long)tokens));

    if (req.format == "jsonl") {
        score_write_jsonl(out, header, records);
    } else {
        ScoreWriter w(out, header);
        for (const ScoreRecord& r : records) w.add(r);
        w.close();
    }
    log_info("scored %lld samples (%lld tokens) of %s with %s -> %s", (long long)n, (long long)tokens, data.c_str(),
             header.model.c_str(), out.c_str());
    return out;
}

}  // namespace cuset
