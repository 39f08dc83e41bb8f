// The training job behind `cuset-train [train] --config X`: run folder, data to batches, the
// model, the objective's exact step normalisation, AdamW, evaluation, metrics, checkpoints,
// resume and signals. Data parallelism enters through `Comm` (single process by default).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "cuset/config.h"

namespace cuset {

// What the trainer needs from data parallelism. The default is one process.
struct Comm {
    int64_t rank = 0;
    int64_t world = 1;
    int64_t local_rank = 0;  // GPU index on this node
    // Sum of a host double over ranks.
    std::function<double(double)> sum = [](double x) { return x; };
    // Called just before the step's last backward pass: from then on a data-parallel Comm sums
    // gradient buckets across ranks as backward makes them final (overlapping communication with
    // the rest of backward).
    std::function<void(const std::vector<at::Tensor>& params)> grads_will_be_final = [](const std::vector<at::Tensor>&) {};
    // Completes the sum of the gradients over ranks, in place (once per step, on every rank, before
    // any other collective of the step that follows backward, and before normalisation).
    std::function<void(const std::vector<at::Tensor>& params)> sum_grads = [](const std::vector<at::Tensor>&) {};
    // Sum of a small host vector over ranks (statistics).
    std::function<std::vector<double>(std::vector<double>)> sum_vec = [](std::vector<double> v) { return v; };
    std::function<void()> barrier = [] {};
    bool is_main() const { return rank == 0; }
};

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

// The run folder of a configuration: run.output_dir / (run.name, or the config file's stem).
std::string run_dir_of(const Config& cfg);

}  // namespace cuset
