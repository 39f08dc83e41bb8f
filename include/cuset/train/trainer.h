// The training job behind `cuset-train [train] --config X` as a type a test drives in-process:
// run folder and resume (train/run_folder.h), data to batches, the model with its LoRA adapters,
// the memory check, AdamW or ZeRO, the objective's exact step normalisation (train_step.h), a
// StepSource's steps instead (GRPO), evaluation (evaluation.h), metrics and the summary
// (metrics_log.h), checkpoints (checkpoint_writer.h) and signals. Data parallelism enters through
// `Comm` (single process by default). The dry run is train/dry_run.h's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuset/data/batching.h"
#include "cuset/data/dataset.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "cuset/train/checkpoint.h"
#include "cuset/train/checkpoint_writer.h"
#include "cuset/train/comm.h"
#include "cuset/train/dry_run.h"  // train_dry_run, which the train command calls beside train_run
#include "cuset/train/evaluation.h"
#include "cuset/train/metrics_log.h"
#include "cuset/train/objective.h"
#include "cuset/train/optim.h"
#include "cuset/train/step_source.h"
#include "cuset/train/train_options.h"

namespace cuset {

class Trainer {
public:
    explicit Trainer(TrainOptions opts, const Comm& comm = Comm());
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    // The whole job: begin(), step() until done(), end(). Returns 0 or throws cuset::Error
    // (StoppedBySignal after saving on SIGINT/SIGTERM, RuntimeFailure after too many non-finite
    // steps, ...). Every rank calls each of these.
    int run();

    // The run folder and the checkpoint to resume, the data, the model and optimizer (the state
    // of the checkpoint on resume), the objective, the plan of steps, metrics.jsonl, and the
    // evaluation before training of a fresh run.
    void begin();
    // Every planned step taken.
    bool done() const { return state_.step >= state_.total_steps; }
    // One optimizer step with its metrics line, an evaluation every train.eval_every steps and a
    // checkpoint every checkpoint.every steps; after a signal, a checkpoint and StoppedBySignal.
    void step();
    // The evaluation after training, the last checkpoint, summary.json.
    void end();
    // A checkpoint of the steps taken so far (its model card rewritten when it exists already).
    void save_checkpoint();

    const TrainerState& state() const { return state_; }
    Decoder& model() { return model_; }
    const std::string& run_dir() const { return opts_.run.dir; }

private:
    void open_run();
    void load_data();
    std::string load_model();
    void attach_lora();
    void build_model_and_optimizer();
    void check_memory(const std::vector<OptimParam>& params);
    void build_objective();
    std::vector<std::vector<float>> load_score_probs(const std::string& file, bool check_model, const char* what) const;
    void plan_steps();
    void log_plan() const;
    void restore();
    StepReport data_step();
    StepReport source_step();
    StepContext step_context();
    void account(const StepReport& r);
    bool stop_agreed() const;
    void fail_if_untrained() const;
    void eval_and_record(const char* when);
    const std::vector<Row>& rows_for_epoch(int64_t epoch);

    TrainOptions opts_;
    Comm comm_;
    c10::Device device_;
    c10::ScalarType dtype_;
    std::string resume_from_;  // the checkpoint the run continues ("" = a fresh run)
    TextPipeline pipe_;
    PreparedData train_, eval_;
    std::string data_hash_;
    int64_t train_n_samples_ = 0;
    Decoder model_ = nullptr;
    std::optional<LoraOptions> lora_;  // model.lora.enabled: the attached adapters' options
    Decoder reference_ = nullptr;      // run_needs_reference_model(): the frozen initial model
    std::unique_ptr<Objective> objective_;
    std::unique_ptr<Objective> eval_objective_;
    std::vector<std::vector<float>> cached_probs_;     // [sample][t] p(token t) from a score file
    std::vector<std::vector<float>> reference_probs_;  // [sample][t] p_ref(token t): the reference scores
    std::shared_ptr<StepSource> steps_;  // opts_.steps: steps that make their own batches (null = SFT)
    std::unique_ptr<Optimizer> optim_;
    ScheduleOptions schedule_;
    OrderOptions order_;
    int64_t global_batch_ = 0;
    int32_t pad_id_ = 0;
    TrainerState state_;
    int64_t cached_epoch_ = -1;
    std::vector<Row> cached_rows_;  // the rows of cached_epoch_
    CheckpointWriter checkpoints_;
    MetricsLog metrics_;
};

// Runs the job of `opts` (Trainer::run); returns the process exit code (0) or throws cuset::Error.
int train_run(const TrainOptions& opts, const Comm& comm = Comm());

}  // namespace cuset
