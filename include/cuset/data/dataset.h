// A configuration's text pipeline (tokenizer, chat format, tagger settings) and a JSONL split run
// through it into tokenised, tagged samples, with the on-disk cache so that a restart does not
// re-tokenise. Used by training, scoring and analysis alike.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuset/text/chat_format.h"
#include "cuset/data/data.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/tokenizer.h"

namespace cuset {

// What a text pipeline is made of, built by the application layer from the configuration
// (app/options.h: model.tokenizer or model.path, data.chat_format, data.system_prompt,
// data.template.*, tagger.*, data.skip_invalid, data.invalid_utf8).
struct TextOptions {
    std::string tokenizer;          // tokenizer folder or file (tokenizer.json / tokenizer.model)
    ChatFormatOptions chat_format;
    TaggerOptions tagger;
    DataLoadOptions load;           // how data files are read (data_load_jsonl)
};

struct TextPipeline {
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<ChatFormatter> formatter;
    TaggerOptions tagger;
    DataLoadOptions load;
    std::string tokenizer_dir;  // folder holding the tokenizer files (copied into checkpoints)
    std::string key;            // hash of the tokenizer file, chat format, tagger settings and UTF-8 rule
};

// The one text pipeline of a run, for training, `data show`, `data check`, score, analyze and
// generate alike: the tokenizer, the chat format and the tagger of `o`.
TextPipeline text_pipeline_from(const TextOptions& o);

struct TokenizedSplit {
    std::vector<TokenizedSample> samples;
    std::string hash;       // tokenized_hash(samples)
    LoadReport report;      // lines, loaded, skipped
    bool from_cache = false;
};

// Where tokenised splits are cached and whether a progress bar is drawn while tokenising.
struct TokenizeOptions {
    std::string cache_dir;          // data.cache_dir: "" = no cache
    std::string progress = "auto";  // log.progress: auto | always | never
};

// Loads `path` (JSONL, read with pipe.load) and tokenises every sample, or reads the cache in
// o.cache_dir when its key (data bytes + pipeline key) matches. `what` names the split in
// messages ("train", "eval").
TokenizedSplit dataset_tokenize(const std::string& path, const TextPipeline& pipe, const TokenizeOptions& o,
                                const std::string& what);

}  // namespace cuset
