// `cuset-train data show`: one sample exactly as the trainer sees it, every token marked with its
// role (template, system, prompt, response), whether it is a training target and whether the
// tagger marks it CUDA-sensitive, with the counts. A viewer only: it computes nothing the
// trainer does not (it calls data_tokenize).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "cuset/core/config.h"
#include "cuset/data/dataset.h"

namespace cuset {

struct DataShowOptions {
    std::string split = "train";      // train | eval: data.train or data.eval
    int64_t index = 0;                // 0-based sample index among the file's valid samples
    std::string color = "auto";       // auto (a terminal and no NO_COLOR) | always | never
    bool tokens = false;              // also one line per token (index, id, role, flags, piece)
};

// Writes the view of a sample of `cfg`'s data.train or data.eval (of `cfg` it reads data.*, its
// own section) through the text pipeline of `text` to `out`. Throws UsageError for an index out of
// range or an empty split, InputError for unreadable data or tokenizer files.
void data_show(const Config& cfg, const TextOptions& text, const DataShowOptions& opts, std::ostream& out);

}  // namespace cuset
