// A configuration's text pipeline (tokenizer, chat format, tagger settings) and a JSONL split run
// through it into tokenised, tagged samples, with the on-disk cache so that a restart does not
// re-tokenise. Used by training, scoring and analysis alike.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cuset/text/chat_format.h"
#include "cuset/core/config.h"
#include "cuset/data/data.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/tokenizer.h"

namespace cuset {

struct TextPipeline {
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<ChatFormatter> formatter;
    TaggerOptions tagger;
    std::string tokenizer_dir;  // folder holding the tokenizer files (copied into checkpoints)
    std::string key;            // hash of the tokenizer file, chat format and tagger settings
};

// The one text pipeline of a configuration, for training, `data show`, `data check`, score and
// analyze alike: the tokenizer of tokenizer_path_of(cfg) (model.tokenizer, or model.path), the
// chat format of chat_format_options_from(cfg), the tagger of tagger_options_from(cfg).
TextPipeline text_pipeline_from(const Config& cfg);

// data.skip_invalid and data.invalid_utf8 of a configuration, for data_load_jsonl().
DataLoadOptions data_load_options_from(const Config& cfg);

struct TokenizedSplit {
    std::vector<TokenizedSample> samples;
    std::string hash;       // tokenized_hash(samples)
    LoadReport report;      // lines, loaded, skipped
    bool from_cache = false;
};

// Loads `path` (JSONL) and tokenises every sample, or reads the cache in data.cache_dir when its
// key (data bytes + pipeline key) matches. `what` names the split in messages ("train", "eval").
TokenizedSplit dataset_tokenize(const std::string& path, const TextPipeline& pipe, const Config& cfg,
                                const std::string& what);

}  // namespace cuset
