// Text pipeline construction and tokenisation of a split, with the tokenised-data cache.
#include "cuset/data/dataset.h"

#include <filesystem>

#include "cuset/data/batching.h"
#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"

namespace cuset {

namespace fs = std::filesystem;

TextPipeline text_pipeline_from(const TextOptions& o) {
    TextPipeline p;
    p.tokenizer = tokenizer_load(o.tokenizer);
    p.tokenizer_dir = tokenizer_dir(o.tokenizer);
    const ChatFormatOptions& f = o.chat_format;
    p.formatter = std::make_unique<ChatFormatter>(*p.tokenizer, f, p.tokenizer_dir);
    p.tagger = o.tagger;
    p.load = o.load;
    Hasher h;
    h.add(hash_file(p.tokenizer->source()));
    h.add(p.formatter->name()).add(f.system_prompt);
    h.add(f.templ.prefix).add(f.templ.system).add(f.templ.user).add(f.templ.assistant).add(f.templ.end_of_turn);
    if (p.formatter->name() == "template") {
        // The template, the special tokens it sees and its variables (only then, so that the keys
        // of the other formats' caches stay as they were).
        h.add(hash_file(p.formatter->template_source())).add(f.template_kwargs.dump());
        const fs::path config = fs::path(p.tokenizer_dir) / "tokenizer_config.json";
        if (fs::exists(config)) h.add(hash_file(config.string()));
    }
    h.add_u64(p.tagger.device_functions);
    h.add(p.load.replace_invalid_utf8 ? "replace" : "error");  // data.invalid_utf8, as the key has always had it
    p.key = h.hex();
    return p;
}

TokenizedSplit dataset_tokenize(const std::string& path, const TextPipeline& pipe, const TokenizeOptions& o,
                                const std::string& what) {
    TokenizedSplit out;
    std::string key;
    std::string cache_file;
    if (!o.cache_dir.empty()) {
        // Version 3 of the key recipe (list content rendered as parts, and as parts for a template
        // that writes no string content of an answer); bump when tokenisation semantics change.
        key = Hasher().add("cuset-tokenized-v3").add(hash_file(path)).add(pipe.key).hex();
        cache_file = (fs::path(o.cache_dir) / (key + ".bin")).string();
        auto ids_in_vocab = [&] {  // a corrupted cache must not hand out ids past the embedding
            const int64_t V = pipe.tokenizer->vocab_size();
            for (const TokenizedSample& s : out.samples)
                for (auto t : s.ids)
                    if (t < 0 || t >= V) return false;
            return true;
        };
        if (tokenized_cache_load(cache_file, key, &out.samples) && !ids_in_vocab()) {
            log_warn("the tokenised cache %s holds token ids outside the tokenizer's vocabulary: rebuilding it",
                     cache_file.c_str());
            out.samples.clear();
        } else if (!out.samples.empty()) {
            out.from_cache = true;
            out.hash = tokenized_hash(out.samples);
            out.report.loaded = static_cast<int64_t>(out.samples.size());
            log_info("%s data: %zu samples from the tokenised cache %s", what.c_str(), out.samples.size(),
                     cache_file.c_str());
            return out;
        }
    }
    std::vector<Conversation> convs = data_load_jsonl(path, pipe.load, &out.report);
    if (out.report.skipped > 0)
        log_warn("%s data: skipped %lld malformed line(s) of %s (data.skip_invalid)", what.c_str(),
                 (long long)out.report.skipped, path.c_str());
    Progress progress("tokenize " + what, static_cast<int64_t>(convs.size()), "samples",
                      progress_bar_wanted(o.progress));
    out.samples.reserve(convs.size());
    for (size_t i = 0; i < convs.size(); ++i) {
        out.samples.push_back(data_tokenize(convs[i], *pipe.formatter, pipe.tagger));
        progress.update(static_cast<int64_t>(i + 1));
    }
    progress.finish();
    out.hash = tokenized_hash(out.samples);
    if (!cache_file.empty()) tokenized_cache_save(cache_file, key, out.samples);
    return out;
}

}  // namespace cuset
