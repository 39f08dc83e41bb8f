// Writing a run's checkpoints (docs/training.md, Checkpoints and resuming): the model folder or
// LoRA adapter, the optimizer state with the generators' states (one file, or one shard per rank
// under ZeRO), a StepSource's state, config.yaml, the model card and trainer_state.json, into a
// temporary folder renamed when complete; and putting the generators' states back on resume. The
// folder layout, the trainer state's format and reading the optimizer files are train/checkpoint.h's.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "cuset/model/safetensors_torch.h"
#include "cuset/train/checkpoint.h"
#include "cuset/train/comm.h"
#include "cuset/train/optim.h"
#include "cuset/train/step_source.h"
#include "cuset/train/train_options.h"

namespace cuset {

// What a checkpoint is written from.
struct CheckpointContent {
    Decoder* model = nullptr;
    Optimizer* optim = nullptr;
    const LoraOptions* lora = nullptr;  // the attached adapter's options; null: a full model
    const StepSource* steps = nullptr;  // a StepSource's state goes with it; null: none
    std::string tokenizer_dir;          // the tokenizer files copied into a full model's folder
    std::string data_hash;              // the tokenised training data's (the model card)
};

class CheckpointWriter {
public:
    // `opts` must outlive the writer.
    CheckpointWriter(const TrainOptions& opts, const Comm& comm, std::string run_dir);

    // Writes checkpoint-<state.step> into the run folder (complete or absent: see checkpoint.h),
    // then prunes to checkpoint.keep_last; state.save_id becomes its identity. A checkpoint this
    // writer saved (or resumed from) at that step already only gets its model card rewritten with
    // the state's evaluations. Every rank calls it.
    void save(TrainerState& state, const CheckpointContent& c);
    // The checkpoint at `step` is in the run folder already (the one the run resumed from).
    void saved_at(int64_t step) { last_saved_step_ = step; }

private:
    std::string temporary_folder_name(const std::string& tmp_on_main, bool all_ranks_write) const;
    void write_main_files(const std::string& tmp, const TrainerState& state, const CheckpointContent& c, bool sharded);
    void write_model_card(const std::string& file, const TrainerState& state, const CheckpointContent& c);

    const TrainOptions& opts_;
    Comm comm_;
    std::string run_dir_;
    std::vector<std::pair<std::string, std::string>> file_hashes_;  // data files for the model card (hashed once)
    int64_t last_saved_step_ = -1;
};

// What a checkpoint's optimizer file holds: the optimizer's state tensors (this rank's shard with
// ZeRO) and the generators' states, "rng.cpu" and on a GPU "rng.cuda", so that a resumed run
// draws what this one would have drawn next.
NamedTensors optimizer_state_with_rng(const Optimizer& optim, c10::Device device);

// Puts back the generators' states of this rank's optimizer file (rank 0's when the checkpoint
// was written by another number of ranks).
void generators_restore(const OptimizerFiles& files, const Comm& comm, c10::Device device);

}  // namespace cuset
