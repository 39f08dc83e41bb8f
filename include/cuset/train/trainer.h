// The training job behind `cuset-train [train] --config X`: run folder, data to batches, the
// model, the objective's exact step normalisation, AdamW, evaluation, metrics, checkpoints,
// resume and signals. Data parallelism enters through `Comm` (single process by default).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuset/core/config.h"
#include "cuset/data/dataset.h"
#include "cuset/model/device.h"
#include "cuset/model/lora.h"
#include "cuset/train/comm.h"
#include "cuset/train/objective.h"
#include "cuset/train/step_source.h"

namespace cuset {

struct TrainOptions {
    std::string resume;  // "" = fresh run, "auto" = newest complete checkpoint if any, else a path
    // With resume: the configuration may differ from the checkpoint's in the schedule length
    // (train.max_steps / train.epochs) only; the run continues from the checkpoint's exact state
    // (weights, AdamW moments, data position, generators) under the new length. The learning-rate
    // schedule is recomputed for the new length, so the result is not bit-identical to a run
    // configured that long from the start (except with a schedule that does not depend on it).
    bool extend = false;
    // The command that started this session, for the checkpoints' model card ("" = not recorded).
    std::string command_line;

    // The libraries' typed options, built by the application layer from the configuration
    // (app/options.h). The trainer reads its own sections of the configuration (train.*,
    // checkpoint.*, log.*, run.*, distributed.*, data.* of batching) itself: a typed struct would
    // merely copy them.
    TextOptions text;             // the text pipeline (tokenizer, chat format, tagger, data loading)
    ObjectiveOptions objective;   // objective.*
    LoraOptions lora;             // model.lora.*, used when model.lora.enabled
    Runtime runtime;              // device, dtype and CPU threads of this rank
    // Steps that make their own batches (objective.method grpo: rl/grpo_steps.h) instead of the
    // SFT data and objective; null = supervised fine-tuning on data.train.
    std::shared_ptr<StepSource> steps;
};

// Runs the job of `cfg` with the typed options of `opts`; returns the process exit code (0) or
// throws cuset::Error (StoppedBySignal after saving on SIGINT/SIGTERM, RuntimeFailure after too
// many non-finite steps, ...).
int train_run(const Config& cfg, const TrainOptions& opts, const Comm& comm = Comm());

// `--dry-run`: checks what a run would read without training — the model folder (config and
// every safetensors header, no weights loaded), the tokenizer and chat format, the data files —
// and logs a summary with the memory plan in opts.runtime's dtype (the dtype the run computes in).
// Throws the same errors a run would.
void train_dry_run(const Config& cfg, const TrainOptions& opts);

}  // namespace cuset
