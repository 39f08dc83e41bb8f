// `cuset-train data show`: one sample exactly as the trainer sees it, every token marked with its
// role (template, system, prompt, response), whether it is a training target and whether the
// tagger marks it CUDA-sensitive, with the counts. A viewer only: it computes nothing the
// trainer does not (it calls data_tokenize).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "cuset/data/dataset.h"

namespace cuset {

struct DataShowOptions {
    std::string split = "train";      // train | eval: data.train or data.eval
    int64_t index = 0;                // 0-based sample index among the file's valid samples
    std::string color = "auto";       // auto (a terminal and no NO_COLOR) | always | never
    bool tokens = false;              // also one line per token (index, id, role, flags, piece)
    std::string train;                // data.train
    std::string eval;                 // data.eval
    int64_t max_seq_len = 2048;       // data.max_seq_len: what the trainer keeps of a longer sample
    bool drop_too_long = false;       // data.truncation drop: the trainer drops a longer sample
};

// Writes the view of a sample of opts.train or opts.eval through the text pipeline of `text` to
// `out`. Throws UsageError for an index out of range or an empty split, InputError for unreadable
// data or tokenizer files.
void data_show(const TextOptions& text, const DataShowOptions& opts, std::ostream& out);

}  // namespace cuset
