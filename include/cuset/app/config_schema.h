// The run configuration of cuset-train: the Config struct its keys fill and the schema of those
// keys, one row each in src/app/config_schema.cpp (path, type, default, range or choices, help,
// the member it fills), read and printed by the engine of core/config.h. A section is the library's
// options where the keys' values are those options as they are (train.* fills OptimizeOptions,
// eval.* the judge's JudgeSettings, ...); the rest are the application's own members, which
// app/options.h turns into the libraries' options. Of the libraries, only app and cli include this
// header (tests/layering holds that).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuset/analysis/report.h"
#include "cuset/core/config.h"
#include "cuset/data/data.h"
#include "cuset/eval/eval_run.h"
#include "cuset/generate/generate_run.h"
#include "cuset/judge/reward.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/chat_format.h"
#include "cuset/train/distributed.h"
#include "cuset/train/objective.h"
#include "cuset/train/trainer.h"

namespace cuset {

// Every member below that a key fills starts at the key's default (its row): a Config is
// constructed with every key at its default. The comments name the keys.

// model.lora.*: PEFT's LoRA (lora_options_from).
struct LoraKeys {
    bool enabled{};
    int64_t r{};
    double alpha{};
    double dropout{};
    std::string target_modules;  // comma-separated projections (lora_target_list)
    bool rslora{};
    std::string init;
    std::string path;            // start from this adapter folder; "" = a new adapter
};

// model.*
struct ModelKeys {
    std::string path;       // Hugging Face model folder
    std::string tokenizer;  // "" = path
    std::string dtype;
    bool activation_checkpointing{};
    LoraKeys lora;
};

// data.*: the trainer's batching (data.train, eval, max_seq_len, truncation, packing,
// group_by_length, shuffle; data.cache_dir is tokenize.cache_dir, whose progress is log.progress's),
// the chat format, the reading of data files and data build's decontamination set.
struct DataKeys : BatchingOptions {
    std::string chat_format;
    std::string chat_template;
    std::string chat_template_kwargs;  // a JSON object (chat_format_options_from parses it)
    std::string system_prompt;
    CustomTemplate templ;              // data.template.*
    DataLoadOptions load;              // data.skip_invalid, data.invalid_utf8 (replace_invalid_utf8)
    std::string against;
};

// objective.grpo.*: reinforcement learning on the judge (grpo_steps_options_from).
struct GrpoKeys {
    std::string tasks;
    int64_t tasks_per_step{};
    int64_t num_generations{};
    int64_t max_completion_length{};
    double temperature{};
    double top_p{};
    int64_t top_k{};
    std::string loss_type;
    double beta{};
    double epsilon{};
    double epsilon_high{};  // 0 = epsilon
    double delta{};         // 0 = no two-sided clipping
    std::string importance_sampling_level;
    double sapo_temperature_pos{};
    double sapo_temperature_neg{};
    std::string scale_rewards;
    std::string judge;
    std::string system_prompt;
    int64_t num_iterations{};
    bool mask_truncated_completions{};
    bool judge_while_sampling{};
    std::string token_weights;
    int64_t turns{};              // multi-turn rollouts (rl/multi_turn.h)
    double turn_discount{};
    std::string turn_advantage;
    bool turn_anchor{};
    bool retry_all_failed{};
    bool continue_after_pass{};
    std::string history;
    judge::RewardWeights reward;  // objective.grpo.reward.*
    int64_t speedup_warmup{};     // objective.grpo.speedup.warmup
    int64_t speedup_repeats{};    // objective.grpo.speedup.repeats
};

// objective.*
struct ObjectiveKeys {
    std::string method;  // an objective's (sft, cuset, ...) or grpo: the GRPO steps instead of one
    // The objective's options: objective.confidence.source (cached_confidence), mask.*, region.*,
    // focal.*, eaft.*, asft.*, rho1.keep_fraction, chunk_size. Its method is `method`'s, set by
    // objective_options_from.
    ObjectiveOptions loss;
    std::string confidence_cache;       // objective.confidence.cache
    std::string rho1_reference_scores;  // objective.rho1.reference_scores
    GrpoKeys grpo;
};

// train.*: the optimisation, and the run's device and CPU threads (runtime_from).
struct TrainKeys : OptimizeOptions {
    std::string device;
    int64_t threads{};
};

// log.*: the training loop's, and the level of the whole command.
struct LogKeys : TrainLogOptions {
    std::string level;
};

// run.*
struct RunKeys {
    std::string output_dir;
    std::string name;  // "" = the config file's stem
};

// distributed.*: the trainer's sharding, and the process group's backend and timeout.
struct DistributedKeys : ShardingOptions {
    std::string backend;
    int64_t timeout_s{};
};

// eval.*: the judge's tools and limits (eval.sandbox.enabled is `contain`, the other
// eval.sandbox.* keys are `limits`), and CUDABench after training.
struct EvalKeys : eval::JudgeSettings {
    std::string gpu_name;  // the prompts' GPU label; "" = the task's
    int64_t turns{};       // attempts per sample: 1 + the repair turns (eval --turns, and after training)
    bool after_training{};
    std::string tasks;
    int64_t level{};
    int64_t samples{};
    int64_t limit{};
    std::string judge;
};

struct Config {
    Config();  // every key at its default

    ModelKeys model;
    DataKeys data;
    ObjectiveKeys objective;
    TaggerOptions tagger;
    TrainKeys train;
    CheckpointOptions checkpoint;
    LogKeys log;
    RunKeys run;
    AnalysisOptions analysis;
    DistributedKeys distributed;
    EvalKeys eval;
    GenerateSettings generate;  // its progress is log.progress's (generate_request_from)

    std::string source_file;  // the YAML file it came from ("" = defaults only)
};

// The schema of Config: every key, in the order they are printed.
const ConfigSchema& config_schema();

// Loads `file` (may be empty: defaults), applies overrides in order, checks the cross-key rules.
// Relative paths in the config resolve against the current directory (like the command line).
// Throws UsageError with file:line:column and the key path on any problem.
Config config_load(const std::string& file, const std::vector<Override>& overrides);

// Resolved configuration as YAML text (every key, in schema order).
std::string config_to_yaml(const Config& cfg);

// Stable hash of the keys that change what a model learns (excludes log/run/checkpoint
// bookkeeping, and model.lora.* unless model.lora.enabled), used to refuse resuming from an
// incompatible checkpoint.
std::string config_hash(const Config& cfg);

// The list of all key paths, in schema order (for help text and tests).
std::vector<std::string> config_keys();

// Closest valid key to `key` by edit distance ("" if none is reasonably close).
std::string config_closest_key(const std::string& key);

// The run folder of a configuration: run.output_dir / (run.name, or the config file's stem).
std::string run_dir_of(const Config& cfg);

// The tokenizer a configuration names: model.tokenizer, or model.path when that is empty.
std::string tokenizer_path_of(const Config& cfg);

// The projections of model.lora.target_modules: its comma-separated names with spaces and tabs
// trimmed, in order, empty ones included (the cross-key check refuses them).
std::vector<std::string> lora_target_list(const std::string& target_modules);

}  // namespace cuset
