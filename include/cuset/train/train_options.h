// The trainer's typed options (built by the application layer from the configuration, app/options.h)
// and what they imply for the run's set-up: the reference model it keeps, its memory plan.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cuset/data/dataset.h"
#include "cuset/model/device.h"
#include "cuset/model/lora.h"
#include "cuset/train/objective.h"
#include "cuset/train/step_source.h"

namespace cuset {

struct MemorySetup;

// train.*: the optimisation and its schedule.
struct OptimizeOptions {
    int64_t seed = 1234;              // data order, LoRA initialisation, dropout (every rank from it)
    int64_t micro_batch_size = 4;     // rows per forward
    int64_t grad_accum = 1;           // micro-batches per step
    int64_t epochs = 1;
    int64_t max_steps = 0;            // > 0 overrides epochs
    double lr = 2e-5;                 // peak learning rate
    std::string schedule = "cosine";  // constant | linear | cosine
    int64_t warmup_steps = 0;         // > 0 overrides warmup_ratio
    double warmup_ratio = 0.0;
    double min_lr_ratio = 0.0;
    double weight_decay = 0.0;
    bool decay_norm_and_bias = false;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double grad_clip = 1.0;           // 0 = off
    int64_t eval_every = 0;           // steps; 0 = only before and after training
    int64_t max_bad_steps = 5;        // non-finite steps in a row before the run stops
};

// data.* of batching: the two splits, their length rule and their order.
struct BatchingOptions {
    std::string train;                     // JSONL of the training split
    std::string eval;                      // "" = no evaluation
    int64_t max_seq_len = 2048;
    std::string truncation = "truncate";   // truncate | drop
    bool packing = false;
    bool group_by_length = false;
    bool shuffle = true;
    TokenizeOptions tokenize;              // data.cache_dir, log.progress
};

// checkpoint.*
struct CheckpointOptions {
    int64_t every = 0;          // steps; 0 = only at the end
    int64_t keep_last = 2;      // complete checkpoints kept
    int64_t max_shard_mb = 4096;
};

// log.* of the training loop.
struct TrainLogOptions {
    int64_t every = 1;              // steps per metrics line
    std::string progress = "auto";  // auto | always | never
    bool sample_weights = false;    // per-sample weight and hardest window in the log (debug)
    bool tensorboard = false;       // TensorBoard event files in the run folder (rank 0)
};

// distributed.* the trainer itself uses (the process group is train/distributed.h's).
struct ShardingOptions {
    int64_t zero_stage = 0;          // 0 replicas | 1 optimizer state | 2 + gradients | 3 + weights
    bool offload_optimizer = false;  // masters, moments and the update on the CPU (stages 1-3)
    double bucket_mb = 25.0;         // all-reduce / reduce-scatter bucket size
};

// The model trained and the files of the objective.
struct TrainModelOptions {
    std::string path;                       // model.path: the Hugging Face folder trained
    std::string dtype = "auto";             // model.dtype as configured (the model card says it)
    bool activation_checkpointing = false;
    bool lora = false;                      // model.lora.enabled: train adapters (TrainOptions::lora)
    std::string adapter;                    // model.lora.path: start from this adapter; "" = new
    std::string method = "cuset";           // objective.method as named (metrics, summary, card)
    std::string confidence_cache;           // objective.confidence.cache: score file of `cached`
    std::string rho1_reference_scores;      // objective.rho1.reference_scores
    std::string tasks;                      // objective.grpo.tasks: an input of a GRPO run
    std::string chat_format;                // data.chat_format as named (the model card says it)
};

// The run as the application layer resolved it: its folder and its configuration's text and
// hashes, which the trainer writes into the run folder and its checkpoints and checks on resume.
struct RunRecord {
    std::string dir;              // the run folder
    std::string config_yaml;      // the resolved configuration (config.yaml of run and checkpoints)
    std::string config_hash;      // the hash a resumed checkpoint must match
    std::string schedule_hash;    // the hash with the schedule length neutralised (--extend)
    // The schedule-neutral hash of a checkpoint's config.yaml (throws cuset::Error when it cannot
    // be read): what --extend compares with schedule_hash.
    std::function<std::string(const std::string& config_yaml_file)> schedule_hash_of;
};

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

    // The typed options of the run, built by the application layer from the configuration
    // (app/options.h).
    RunRecord run;
    OptimizeOptions train;        // train.*
    BatchingOptions data;         // data.* of batching
    CheckpointOptions checkpoint; // checkpoint.*
    TrainLogOptions log;          // log.*
    ShardingOptions distributed;  // distributed.* of the optimizer and gradients
    TrainModelOptions model;      // model.* and the objective's files
    TextOptions text;             // the text pipeline (tokenizer, chat format, tagger, data loading)
    ObjectiveOptions objective;   // objective.*
    LoraOptions lora;             // model.lora.*, used when model.lora.enabled
    Runtime runtime;              // device, dtype and CPU threads of this rank
    // Steps that make their own batches (objective.method grpo: rl/grpo_steps.h) instead of the
    // SFT data and objective; null = supervised fine-tuning on data.train.
    std::shared_ptr<StepSource> steps;
};

// Whether a run of `opts` keeps a frozen copy of the initial model beside the trained one: its
// method's reference model (asft), or its StepSource's without LoRA (under LoRA a StepSource takes
// the base with the adapters off instead).
bool run_needs_reference_model(const TrainOptions& opts);

// The memory plan's set-up (train/memory_plan.h) of a run of `opts` on `world` ranks.
MemorySetup memory_setup_of(const TrainOptions& opts, int64_t world);

}  // namespace cuset
