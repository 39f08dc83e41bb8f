// The training job behind `cuset-train [train] --config X`: run folder, data to batches, the
// model, the objective's exact step normalisation, AdamW, evaluation, metrics, checkpoints,
// resume and signals. Data parallelism enters through `Comm` (single process by default).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuset/core/config.h"
#include "cuset/train/comm.h"

namespace cuset {

struct TrainOptions {
    std::string resume;  // "" = fresh run, "auto" = newest complete checkpoint if any, else a path
};

// Runs the job; returns the process exit code (0) or throws cuset::Error (StoppedBySignal after
// saving on SIGINT/SIGTERM, RuntimeFailure after too many non-finite steps, ...).
int train_run(const Config& cfg, const TrainOptions& opts, const Comm& comm = Comm());

// `--dry-run`: checks what a run would read without training — the model folder (config and
// every safetensors header, no weights loaded), the tokenizer and chat format, the data files —
// and logs a summary. Throws the same errors a run would.
void train_dry_run(const Config& cfg);

}  // namespace cuset
