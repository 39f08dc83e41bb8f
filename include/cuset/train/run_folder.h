// The run folder at start-up and the checkpoint a run continues from (docs/training.md,
// Checkpoints and resuming): leftovers of interrupted writes undone, --resume auto|PATH resolved,
// a folder holding checkpoints refused without --resume, the run's files checked against its
// inputs, train.log and config.yaml; then a resumed checkpoint's trainer state checked against the
// run (configuration, data, global batch) and, with --extend, its schedule lengthened. Loading the
// weights and the optimizer state is the trainer's.
#pragma once

#include <string>

#include "cuset/train/checkpoint.h"
#include "cuset/train/comm.h"
#include "cuset/train/train_options.h"

namespace cuset {

// Appended to the error of a checkpoint that cannot be resumed: what the user can do instead.
constexpr const char* kResumeHint =
    " (resume from another checkpoint with --resume PATH, or start afresh with --run-name NAME)";

// Prepares opts.run.dir on every rank (rank 0 writes; train.log becomes a log sink) and returns
// the checkpoint the run resumes from, "" for a fresh run. UsageError for a folder that holds
// checkpoints without --resume, InputError for a --resume that names no complete checkpoint.
std::string run_folder_open(const TrainOptions& opts, const Comm& comm);

// The trainer state the run continues with from checkpoint `ckpt`: its trainer_state.json,
// checked against `planned` (this run's state before its first step: total steps, global batch,
// configuration and data hashes), with this run's world size; under --extend and a configuration
// that differs only in the schedule length, the new length and configuration hash, the extension
// recorded in its history. InputError naming what differs.
TrainerState resumed_state(const std::string& ckpt, const TrainOptions& opts, const TrainerState& planned);

}  // namespace cuset
