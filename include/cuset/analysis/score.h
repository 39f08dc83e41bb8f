// Scoring: the model's probability of every token of a data set (no training), written as a
// score file (data/score_file.h). The score file is the cache behind
// `objective.confidence.source: cached` and the input of `cuset-train analyze`.
#pragma once

#include <string>

#include "cuset/data/dataset.h"
#include "cuset/data/score_file.h"
#include "cuset/model/device.h"

namespace cuset {

// What a scoring pass reads besides the command's choices (the application layer fills it from
// model.*, data.*, run.*, objective.chunk_size, train.micro_batch_size and log.progress).
struct ScoreSetup {
    std::string model;              // model.path (ScoreRequest::model overrides it)
    std::string tokenizer;          // model.tokenizer ("" = the model's): never written over
    std::string adapter;            // model.lora.path: attached whenever set (lora.enabled is for training)
    std::string train, eval;        // data.train, data.eval: the files of the two splits
    int64_t max_seq_len = 2048;     // data.max_seq_len: samples are scored as the trainer sees them
    int64_t chunk_size = 1024;      // objective.chunk_size: tokens per lm_head chunk
    int64_t micro_batch_size = 4;   // train.micro_batch_size: samples per forward
    std::string run_dir;            // the run folder: where the score file goes by default
    TokenizeOptions tokenize;       // data.cache_dir, log.progress
};

struct ScoreRequest {
    std::string model;   // overrides setup.model when set
    std::string data;    // overrides the split's file when set
    std::string split = "train";  // train | eval: which data.* file to score
    std::string out;     // output file; "" = <run folder>/scores.bin (or .jsonl)
    std::string format = "bin";  // bin | jsonl
    ScoreSetup setup;
};

// Runs the model over the data set, through the text pipeline of `text` (built by the application
// layer for the model scored with: req.model, else req.setup.model), on `runtime`'s device, dtype
// and threads, and writes the score file. Returns its path.
std::string score_run(const ScoreRequest& req, const TextOptions& text, const Runtime& runtime);

}  // namespace cuset
