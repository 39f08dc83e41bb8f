// Run folders and checkpoints: the versioned trainer state, crash-safe writing (core/atomic_file:
// temporary name, fsync, rename), finding the newest complete checkpoint, pruning, and SIGINT/SIGTERM handling.
// The model weights inside a checkpoint are a Hugging Face folder written by model_save().
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <memory>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include "cuset/core/atomic_file.h"  // atomic_write / file_write_atomic for the run files
#include "cuset/core/signals.h"

namespace cuset {

// Written as trainer_state.json, the last file of a checkpoint.
struct TrainerState {
    static constexpr const char* kFormat = "cuset-trainer-state";
    static constexpr int kVersion = 1;

    int64_t step = 0;             // optimizer steps completed
    int64_t epoch = 0;            // epoch of the next step (0-based)
    int64_t step_in_epoch = 0;    // steps of that epoch already completed
    int64_t total_steps = 0;      // planned optimizer steps of the run
    int64_t targets_trained = 0;  // trainable target tokens trained on so far
    int64_t skipped_steps = 0;    // steps skipped (non-finite loss or no kept token)
    int64_t bad_in_row = 0;       // consecutive non-finite steps at the time of saving
    int64_t global_batch = 0;     // rows per optimizer step over all ranks
    int64_t world_size = 1;       // ranks that wrote it (resume may use another)
    std::string config_hash;      // config_hash() of the run
    std::string data_hash;        // hash of the tokenised training data
    nlohmann::json history = nlohmann::json::array();  // evaluations so far
    // The identity of the checkpoint that holds this state, also written with the step into the
    // metadata of every optimizer file of it ("save_id", "step"), so that a shard copied in from
    // another checkpoint is refused on resume. "" in checkpoints written before it existed.
    std::string save_id;
};

nlohmann::json trainer_state_to_json(const TrainerState& s);
// InputError naming `where` on a missing field, another format, or an unknown version.
TrainerState trainer_state_from_json(const nlohmann::json& j, const std::string& where);

// "checkpoint-<step>" (zero-padded to 7 digits so names sort by step).
std::string checkpoint_name(int64_t step);
// The step of a complete checkpoint folder name, or -1 for anything else.
int64_t checkpoint_step_of(const std::string& folder_name);

// Complete checkpoints (a trainer_state.json inside) of `run_dir`, oldest first.
std::vector<std::string> checkpoint_list(const std::string& run_dir);
// The newest complete checkpoint of `run_dir`, or "" when there is none.
std::string checkpoint_latest(const std::string& run_dir);
// Deletes all but the newest `keep_last` complete checkpoints (0 = keep all).
void checkpoint_prune(const std::string& run_dir, int64_t keep_last);
// Cleans up after interrupted writes in `run_dir` (core atomic_recover(), each action logged):
// removes cuset's own temporary folders (named "<name>.tmp-<pid>-<hex>" with the marker inside),
// restores a complete previous checkpoint moved aside as "<name>.tmp-old-<pid>-<hex>" when
// <name> is missing, and leaves every other file (a user's notes.tmp-1.txt) alone.
void checkpoint_remove_partial(const std::string& run_dir);
// Folders of `run_dir` named "checkpoint-..." that are not complete checkpoints (no
// trainer_state.json, or another name), oldest name first: what a resume must not skip silently.
std::vector<std::string> checkpoint_unusable(const std::string& run_dir);

// A temporary folder name next to `final_dir` for writing it (atomic_temp_name).
std::string checkpoint_temp_name(const std::string& final_dir);
// fsyncs every file in `tmp_dir` and the folder, renames it to `final_dir` (replacing an older
// folder of that name), and fsyncs the parent: after this returns, the checkpoint is complete on
// disk; before, `final_dir` is either absent or the previous complete version (atomic_dir_commit).
void checkpoint_commit(const std::string& tmp_dir, const std::string& final_dir);

// The optimizer state of a checkpoint: `optimizer.safetensors` (whole tensors, one file) or,
// with ZeRO, `optimizer-<r>-of-<W>.safetensors` from each of the W ranks (its shard: tensors named
// "<key>@<offset>", train/zero.h). Mapped, not read: a rank copies only the elements it needs.
class SafetensorsFile;
struct OptimizerFiles {
    int64_t world = 1;  // ranks that wrote them
    std::vector<std::shared_ptr<SafetensorsFile>> files;         // by rank
    std::vector<std::pair<std::string, at::Tensor>> tensors;     // every fp32 state tensor (not rng.*), on the CPU
    // Tensor `name` (rng.cpu, rng.cuda) of rank `rank`'s file, or rank 0's when there is none or
    // `own` is false; undefined when absent. A copy.
    at::Tensor find(const std::string& name, int64_t rank, bool own) const;
};
std::string optimizer_shard_name(int64_t rank, int64_t world);
// InputError naming the folder when neither layout is complete there, and naming the file when
// one of them was written for another step or another checkpoint than `state` (trainer_state.json's;
// checked where the file's metadata records it).
OptimizerFiles optimizer_files_open(const std::string& ckpt_dir, const TrainerState& state);
// The metadata optimizer files of `state`'s checkpoint carry (with those of their format).
std::map<std::string, std::string> optimizer_file_identity(const TrainerState& state);

// SIGINT / SIGTERM for the trainer (core/signals.h with its messages): the first one asks it to
// stop after the current step (it saves a checkpoint and exits 75); a second one exits
// immediately (128 + signal), which never damages a complete checkpoint since those are only
// ever renamed into place. signals_stop_requested(), signals_received() and signals_reset()
// come from core/signals.h.
void signals_install();

}  // namespace cuset
