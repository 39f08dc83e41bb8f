// The trainer's seam for objectives that make their own batches (reinforcement learning:
// rl/grpo_steps.h). The trainer keeps the run: run folder, model, LoRA, optimizer, schedule,
// checkpoints, resume, signals, metrics.jsonl and the report; a StepSource replaces the SFT data
// and its step: each optimizer step, it is handed the model and the optimizer and does one step
// (sample, score, update) with the schedule's learning rate. Its own draws must come from the
// run's seed and the step number, so that a resumed run repeats what the stopped one would have
// done next.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "cuset/data/dataset.h"
#include "cuset/model/model.h"
#include "cuset/train/comm.h"
#include "cuset/train/optim.h"

namespace cuset {

struct StepContext {
    Decoder& model;
    Optimizer& optim;
    const Comm& comm;
    const TextPipeline& pipe;  // tokenizer and chat format of the run
    c10::Device device;
    std::string run_dir;
    int32_t pad_id = 0;            // the run's padding token (the tokenizer's pad, else its EOS, else 0)
    Decoder* reference = nullptr;  // the frozen reference model when needs_reference() and no LoRA
    bool lora = false;             // adapters on the model: the reference is the base without them
    int64_t step = 0;              // the step being taken (0-based)
    double lr = 0.0;               // the schedule's learning rate for it
    double grad_clip = 1.0;        // train.grad_clip
};

struct SourceStepResult {
    bool applied = false;
    bool non_finite = false;
    double loss = 0.0;
    double grad_norm = 0.0;
    int64_t tokens = 0;     // tokens trained on (completion tokens)
    nlohmann::json metrics = nlohmann::json::object();  // its fields of the step's metrics.jsonl line
    std::string progress;   // a short text for the progress line ("reward 0.31")
};

class StepSource {
public:
    virtual ~StepSource() = default;
    virtual std::string name() const = 0;
    // What the steps are drawn from (a hash of the task file): the run's data identity, checked
    // on resume as the SFT data's is.
    virtual std::string data_hash() const = 0;
    // Whether the loss needs a frozen reference model (loaded by the trainer unless LoRA).
    virtual bool needs_reference() const { return false; }
    // Once, with the model and optimizer built; `resumed_step`: the step the run continues from
    // (0 for a fresh run): logs written past it by a stopped run are cut back to it; `resumed_from`:
    // the checkpoint folder it resumes ("" for a fresh run), holding what save_state wrote.
    virtual void begin(const StepContext& ctx, int64_t resumed_step, const std::string& resumed_from) = 0;
    // While a checkpoint of `steps_taken` steps is written: every rank writes what a resumed run
    // needs beyond the weights, the optimizer and the generators (GRPO: a generation batch still
    // being trained on) into the checkpoint's folder `dir`, under names of its own rank.
    virtual void save_state(const std::string& dir, int64_t steps_taken, const Comm& comm) const {
        (void)dir, (void)steps_taken, (void)comm;
    }
    // Every rank calls it for every step (the collectives inside match).
    virtual SourceStepResult step(const StepContext& ctx) = 0;
    // One line for the summary at the end of the run ("" = nothing).
    virtual std::string summary() const { return ""; }
};

}  // namespace cuset
