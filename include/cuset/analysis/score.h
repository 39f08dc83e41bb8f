// Scoring: the model's probability of every token of a data set (no training), written as a
// score file (data/score_file.h). The score file is the cache behind
// `objective.confidence.source: cached` and the input of `cuset-train analyze`.
#pragma once

#include <string>

#include "cuset/core/config.h"
#include "cuset/data/dataset.h"
#include "cuset/data/score_file.h"
#include "cuset/model/device.h"

namespace cuset {

struct ScoreRequest {
    std::string model;   // overrides model.path when set
    std::string data;    // overrides the split's file when set
    std::string split = "train";  // train | eval: which data.* file to score
    std::string out;     // output file; "" = <run folder>/scores.bin (or .jsonl)
    std::string format = "bin";  // bin | jsonl
};

// Runs the model over the data set, through the text pipeline of `text` (built by the application
// layer for the model scored with: req.model, else model.path), on `runtime`'s device, dtype and
// threads, and writes the score file. Returns its path. Of `cfg` it reads model.*, data.* and
// run.* (the files it reads and writes), objective.chunk_size, train.micro_batch_size and
// log.progress.
std::string score_run(const Config& cfg, const ScoreRequest& req, const TextOptions& text, const Runtime& runtime);

}  // namespace cuset
