// The configuration schema table and everything derived from it: YAML parsing with
// positions, `--set` overrides, range/type checks, printing and hashing.
// It does not interpret values (modules do); cross-key rules live in config_validate().
#include "cuset/core/config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"

namespace cuset {
namespace {

enum class Kind { kBool, kInt, kDouble, kString, kEnum };

struct Field {
    std::string path;
    Kind kind;
    std::function<void*(Config&)> ref;  // points at the member of the matching type
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    std::vector<std::string> choices;  // kEnum
    bool affects_training = true;      // part of config_hash()
    std::string help;
};

// Small builder so each key is one line in the table below.
struct Table {
    std::vector<Field> fields;

    Field& add(std::string path, Kind kind, std::function<void*(Config&)> ref, std::string help) {
        Field f;
        f.path = std::move(path);
        f.kind = kind;
        f.ref = std::move(ref);
        f.help = std::move(help);
        fields.push_back(std::move(f));
        return fields.back();
    }
};

#define CUSET_REF(member) [](Config& c) -> void* { return &c.member; }

Field& range(Field& f, double lo, double hi) {
    f.lo = lo;
    f.hi = hi;
    return f;
}
Field& choices(Field& f, std::vector<std::string> c) {
    f.choices = std::move(c);
    return f;
}
Field& bookkeeping(Field& f) {
    f.affects_training = false;
    return f;
}

const double kInf = std::numeric_limits<double>::infinity();

// model.* (and model.lora.*)
void add_model_keys(Table& t) {
    t.add("model.path", Kind::kString, CUSET_REF(model.path), "Hugging Face model folder");
    t.add("model.tokenizer", Kind::kString, CUSET_REF(model.tokenizer),
          "tokenizer folder or file (tokenizer.json / tokenizer.model); empty = model.path");
    choices(t.add("model.dtype", Kind::kEnum, CUSET_REF(model.dtype),
                  "compute dtype; auto = bfloat16 on CUDA, float32 on CPU"),
            {"auto", "float32", "bfloat16", "float16"});
    t.add("model.activation_checkpointing", Kind::kBool, CUSET_REF(model.activation_checkpointing),
          "recompute each decoder layer in backward to save activation memory");
    // model.lora (PEFT's LoRA; hashed only when enabled, so full fine-tunes keep their hash)
    t.add("model.lora.enabled", Kind::kBool, CUSET_REF(model.lora.enabled),
          "train LoRA adapters on a frozen base instead of every weight");
    range(t.add("model.lora.r", Kind::kInt, CUSET_REF(model.lora.r), "adapter rank"), 1, 65536);
    range(t.add("model.lora.alpha", Kind::kDouble, CUSET_REF(model.lora.alpha),
                "scale numerator: alpha / r (alpha / sqrt(r) with rslora)"),
          1e-6, 1e6);
    range(t.add("model.lora.dropout", Kind::kDouble, CUSET_REF(model.lora.dropout),
                "dropout on the adapter input (training only)"),
          0.0, 0.999);
    t.add("model.lora.target_modules", Kind::kString, CUSET_REF(model.lora.target_modules),
          "comma-separated projections: q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj");
    t.add("model.lora.rslora", Kind::kBool, CUSET_REF(model.lora.rslora),
          "rank-stabilised scale alpha / sqrt(r)");
    choices(t.add("model.lora.init", Kind::kEnum, CUSET_REF(model.lora.init),
                  "A's initialisation: kaiming (uniform, PEFT's default) or gaussian (std 1/r); B = 0"),
            {"kaiming", "gaussian"});
    t.add("model.lora.path", Kind::kString, CUSET_REF(model.lora.path),
          "start from this PEFT adapter folder; empty = a new adapter");
}

// data.*
void add_data_keys(Table& t) {
    t.add("data.train", Kind::kString, CUSET_REF(data.train), "training JSONL file");
    t.add("data.eval", Kind::kString, CUSET_REF(data.eval), "evaluation JSONL file; empty = none");
    choices(t.add("data.chat_format", Kind::kEnum, CUSET_REF(data.chat_format),
                  "chat format; template = the model's own Jinja chat template, auto = template when the model has one"),
            {"auto", "template", "chatml", "qwen3", "deepseek-coder", "seed-coder", "plain", "custom"});
    t.add("data.chat_template", Kind::kString, CUSET_REF(data.chat_template),
          "template format: a .jinja file (or a JSON file with chat_template) to use instead of the model's own");
    t.add("data.chat_template_kwargs", Kind::kString, CUSET_REF(data.chat_template_kwargs),
          "template format: JSON object of extra template variables, e.g. {\"enable_thinking\": false}");
    t.add("data.system_prompt", Kind::kString, CUSET_REF(data.system_prompt),
          "system message for samples without one; empty = the format's default");
    t.add("data.template.prefix", Kind::kString, CUSET_REF(data.templ.prefix),
          "custom format: text once at the start");
    t.add("data.template.system", Kind::kString, CUSET_REF(data.templ.system),
          "custom format: system turn, {content} = the system text");
    t.add("data.template.user", Kind::kString, CUSET_REF(data.templ.user),
          "custom format: user turn, {content} = the prompt");
    t.add("data.template.assistant", Kind::kString, CUSET_REF(data.templ.assistant),
          "custom format: assistant turn, {content} = the response");
    t.add("data.template.end_of_turn", Kind::kString, CUSET_REF(data.templ.end_of_turn),
          "custom format: text after the response (trainable)");
    range(t.add("data.max_seq_len", Kind::kInt, CUSET_REF(data.max_seq_len),
                "tokens per sample after chat formatting"),
          8, 1 << 20);
    choices(t.add("data.truncation", Kind::kEnum, CUSET_REF(data.truncation),
                  "longer samples: truncate the end, or drop the sample"),
            {"truncate", "drop"});
    t.add("data.packing", Kind::kBool, CUSET_REF(data.packing),
          "pack several samples per row (no attention across samples)");
    t.add("data.group_by_length", Kind::kBool, CUSET_REF(data.group_by_length),
          "batch samples of similar length to reduce padding");
    t.add("data.shuffle", Kind::kBool, CUSET_REF(data.shuffle), "shuffle by seed and epoch");
    bookkeeping(t.add("data.skip_invalid", Kind::kBool, CUSET_REF(data.skip_invalid),
                      "count and skip malformed JSONL lines instead of stopping"));
    choices(t.add("data.invalid_utf8", Kind::kEnum, CUSET_REF(data.invalid_utf8),
                  "invalid UTF-8 in a sample: error, or replace with U+FFFD"),
            {"error", "replace"});
    bookkeeping(t.add("data.cache_dir", Kind::kString, CUSET_REF(data.cache_dir),
                      "tokenised-data cache folder; empty = no cache"));
    bookkeeping(t.add("data.against", Kind::kString, CUSET_REF(data.against),
                      "data build: evaluation set (JSONL, e.g. CUDABench-Set.jsonl) whose long n-grams a kept "
                      "sample must not share; empty = none"));
}

// objective.* (docs/method.md)
void add_objective_keys(Table& t) {
    choices(t.add("objective.method", Kind::kEnum, CUSET_REF(objective.method),
                  "training objective"),
            {"cuset", "sft", "dft", "focal", "eaft", "asft", "rho1", "grpo"});
    choices(t.add("objective.confidence.source", Kind::kEnum,
                  CUSET_REF(objective.confidence_source),
                  "online = from the training forward pass; cached = from a score file"),
            {"online", "cached"});
    t.add("objective.confidence.cache", Kind::kString, CUSET_REF(objective.confidence_cache),
          "score file written by `cuset-train score` (source: cached)");
    t.add("objective.mask.confidence", Kind::kBool, CUSET_REF(objective.mask_confidence),
          "keep tokens with confidence >= threshold");
    t.add("objective.mask.sensitivity", Kind::kBool, CUSET_REF(objective.mask_sensitivity),
          "keep CUDA-sensitive tokens");
    range(t.add("objective.mask.drop_weight", Kind::kDouble, CUSET_REF(objective.drop_weight),
                "weight of dropped tokens (0 = hard mask)"),
          0.0, 1.0);
    choices(t.add("objective.mask.threshold.mode", Kind::kEnum,
                  CUSET_REF(objective.threshold_mode), "how the confidence threshold is set"),
            {"sample_quantile", "fixed", "batch_quantile"});
    range(t.add("objective.mask.threshold.q", Kind::kDouble, CUSET_REF(objective.threshold_q),
                "quantile for sample_quantile / batch_quantile"),
          0.0, 1.0);
    range(t.add("objective.mask.threshold.value", Kind::kDouble,
                CUSET_REF(objective.threshold_value), "threshold for mode fixed"),
          0.0, 1.0);
    t.add("objective.region.enabled", Kind::kBool, CUSET_REF(objective.region_enabled),
          "weight samples by their hardest region");
    range(t.add("objective.region.window", Kind::kInt, CUSET_REF(objective.region_window),
                "valid tokens per region window"),
          1, 1 << 24);
    range(t.add("objective.region.alpha", Kind::kDouble, CUSET_REF(objective.region_alpha),
                "w = 1 + alpha * difficulty"),
          0.0, 1e6);
    range(t.add("objective.focal.gamma", Kind::kDouble, CUSET_REF(objective.focal_gamma),
                "focal loss exponent"),
          0.0, 100.0);
    range(t.add("objective.eaft.alpha", Kind::kDouble, CUSET_REF(objective.eaft_alpha),
                "eaft: weight (H_topk / ln k)^alpha"),
          0.0, 100.0);
    range(t.add("objective.eaft.k", Kind::kInt, CUSET_REF(objective.eaft_k),
                "eaft: top-k probabilities whose entropy weighs a token"),
          2, 1 << 20);
    range(t.add("objective.asft.alpha", Kind::kDouble, CUSET_REF(objective.asft_alpha),
                "asft: weight of KL(pi_ref || pi_theta) added to the DFT loss"),
          0.0, 1e6);
    range(t.add("objective.rho1.keep_fraction", Kind::kDouble, CUSET_REF(objective.rho1_keep_fraction),
                "rho1: share of the step's tokens kept (highest l_theta - l_ref)"),
          1e-6, 1.0);
    t.add("objective.rho1.reference_scores", Kind::kString, CUSET_REF(objective.rho1_reference_scores),
          "rho1: score file of the reference model (`cuset-train score`) giving l_ref");
    // objective.grpo.* (docs/method.md, "GRPO"): TRL's GRPOConfig names where it has one.
    t.add("objective.grpo.tasks", Kind::kString, CUSET_REF(objective.grpo.tasks),
          "grpo: task file (CUDABench format) whose prompts are sampled");
    range(t.add("objective.grpo.tasks_per_step", Kind::kInt, CUSET_REF(objective.grpo.tasks_per_step),
                "grpo: prompts per optimizer step, over all ranks"),
          1, 1 << 20);
    range(t.add("objective.grpo.num_generations", Kind::kInt, CUSET_REF(objective.grpo.num_generations),
                "grpo: completions per prompt (G)"),
          2, 1 << 16);
    range(t.add("objective.grpo.max_completion_length", Kind::kInt,
                CUSET_REF(objective.grpo.max_completion_length), "grpo: new tokens per completion at most"),
          1, 1 << 20);
    range(t.add("objective.grpo.temperature", Kind::kDouble, CUSET_REF(objective.grpo.temperature),
                "grpo: sampling temperature (log-probabilities are scored at it)"),
          1e-3, 100.0);
    range(t.add("objective.grpo.top_p", Kind::kDouble, CUSET_REF(objective.grpo.top_p),
                "grpo: nucleus sampling (1 = off)"),
          1e-6, 1.0);
    range(t.add("objective.grpo.top_k", Kind::kInt, CUSET_REF(objective.grpo.top_k), "grpo: top-k sampling (0 = off)"),
          0, 1 << 24);
    choices(t.add("objective.grpo.loss_type", Kind::kEnum, CUSET_REF(objective.grpo.loss_type),
                  "grpo: loss aggregation, as TRL's"),
            {"grpo", "bnpo", "dr_grpo", "dapo"});
    range(t.add("objective.grpo.beta", Kind::kDouble, CUSET_REF(objective.grpo.beta),
                "grpo: KL coefficient to the reference model (0 = none loaded)"),
          0.0, 1e6);
    range(t.add("objective.grpo.epsilon", Kind::kDouble, CUSET_REF(objective.grpo.epsilon),
                "grpo: lower clip of the importance ratio (1 - epsilon)"),
          0.0, 1.0);
    range(t.add("objective.grpo.epsilon_high", Kind::kDouble, CUSET_REF(objective.grpo.epsilon_high),
                "grpo: upper clip (1 + epsilon_high); 0 = epsilon"),
          0.0, 1e6);
    choices(t.add("objective.grpo.scale_rewards", Kind::kEnum, CUSET_REF(objective.grpo.scale_rewards),
                  "grpo: advantages divided by the group's or the batch's reward std, or not"),
            {"group", "batch", "none"});
    choices(t.add("objective.grpo.judge", Kind::kEnum, CUSET_REF(objective.grpo.judge),
                  "grpo: the judge of the rewards (its tools and limits are eval.*)"),
            {"compile", "emulate", "gpu", "auto"});
    t.add("objective.grpo.system_prompt", Kind::kString, CUSET_REF(objective.grpo.system_prompt),
          "grpo: the prompts' system message; empty = CUDABench's, the one eval sends");
    range(t.add("objective.grpo.num_iterations", Kind::kInt, CUSET_REF(objective.grpo.num_iterations),
                "grpo: optimizer steps taken on one generation batch (the importance ratio is to the policy that sampled)"),
          1, 1 << 16);
    t.add("objective.grpo.mask_truncated_completions", Kind::kBool,
          CUSET_REF(objective.grpo.mask_truncated_completions),
          "grpo: completions cut at max_completion_length are left out of the loss (their rewards still count)");
    t.add("objective.grpo.judge_while_sampling", Kind::kBool, CUSET_REF(objective.grpo.judge_while_sampling),
          "grpo: judge a task's completions as soon as its group has finished, while the other groups are still "
          "decoding (the same rewards; false = judge after the sampling)");
    choices(t.add("objective.grpo.token_weights", Kind::kEnum, CUSET_REF(objective.grpo.token_weights),
                  "grpo: cuset weighs each completion token by CuSeT's mask and region weight (objective.mask.*, "
                  "objective.region.*) in the loss; none = every token alike"),
            {"none", "cuset"});
    range(t.add("objective.grpo.reward.format", Kind::kDouble, CUSET_REF(objective.grpo.reward_format),
                "grpo: reward for a fenced program"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.compiles", Kind::kDouble, CUSET_REF(objective.grpo.reward_compiles),
                "grpo: reward for a program that compiles"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.runs", Kind::kDouble, CUSET_REF(objective.grpo.reward_runs),
                "grpo: reward for a program that exits 0 (gpu or emulate judges)"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.functional", Kind::kDouble, CUSET_REF(objective.grpo.reward_functional),
                "grpo: reward for a program the checker passes (gpu or emulate judges)"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.speedup", Kind::kDouble, CUSET_REF(objective.grpo.reward_speedup),
                "grpo: weight of a passing program's speed-up over the task's reference solution, "
                "min(speedup, speedup_cap), timed on the gpu judge; 0 = no timing runs"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.speedup_cap", Kind::kDouble, CUSET_REF(objective.grpo.reward_speedup_cap),
                "grpo: the speed-up counted at most"),
          1e-3, 1e6);
    choices(t.add("objective.grpo.reward.unjudged", Kind::kEnum, CUSET_REF(objective.grpo.reward_unjudged),
                  "grpo: a program the emulator could not judge (not rewritten or built, or not finished in time): "
                  "fail = scored as a failed run (format + compiles), so a policy cannot escape a low reward by not "
                  "ending; skip = left out of its group's baseline (no reward, no gradient)"),
            {"fail", "skip"});
    range(t.add("objective.grpo.speedup.warmup", Kind::kInt, CUSET_REF(objective.grpo.speedup_warmup),
                "grpo: untimed runs of a program (and of the reference) before its timed runs"),
          0, 100);
    range(t.add("objective.grpo.speedup.repeats", Kind::kInt, CUSET_REF(objective.grpo.speedup_repeats),
                "grpo: timed runs of a program (and of the reference); the median counts"),
          1, 1000);
    bookkeeping(range(t.add("objective.chunk_size", Kind::kInt, CUSET_REF(objective.chunk_size),
                            "tokens per lm_head+loss chunk; 0 = full logits (more memory)"),
                      0, 1 << 24));
}

// tagger.*
void add_tagger_keys(Table& t) {
    t.add("tagger.device_functions", Kind::kBool, CUSET_REF(tagger.device_functions),
          "tag __device__ function bodies as kernel code");
}

// train.*
void add_train_keys(Table& t) {
    bookkeeping(t.add("train.device", Kind::kString, CUSET_REF(train.device),
                      "auto | cpu | cuda | cuda:N"));
    range(t.add("train.seed", Kind::kInt, CUSET_REF(train.seed), "seed for init, shuffling"),
          0, 9.007199254740992e15);
    // How a step is split is not part of the hash: the step's gradient does not depend on it
    // (docs/method.md sec. 4), so a run may resume with another split of the same global batch.
    bookkeeping(range(t.add("train.micro_batch_size", Kind::kInt, CUSET_REF(train.micro_batch_size),
                            "samples (or packed rows) per forward pass"),
                      1, 1 << 20));
    bookkeeping(range(t.add("train.grad_accum", Kind::kInt, CUSET_REF(train.grad_accum),
                            "micro-batches per optimizer step (global batch = micro x accum x ranks)"),
                      1, 1 << 20));
    range(t.add("train.epochs", Kind::kInt, CUSET_REF(train.epochs), "passes over the data"), 1,
          1 << 20);
    range(t.add("train.max_steps", Kind::kInt, CUSET_REF(train.max_steps),
                "optimizer steps; > 0 overrides epochs"),
          0, 9.007199254740992e15);
    range(t.add("train.lr", Kind::kDouble, CUSET_REF(train.lr), "peak learning rate"), 0.0, 10.0);
    choices(t.add("train.schedule", Kind::kEnum, CUSET_REF(train.schedule),
                  "learning-rate schedule after warmup"),
            {"constant", "linear", "cosine"});
    range(t.add("train.warmup_steps", Kind::kInt, CUSET_REF(train.warmup_steps),
                "linear warmup steps (wins over warmup_ratio when > 0)"),
          0, 9.007199254740992e15);
    range(t.add("train.warmup_ratio", Kind::kDouble, CUSET_REF(train.warmup_ratio),
                "warmup as a fraction of all steps"),
          0.0, 1.0);
    range(t.add("train.min_lr_ratio", Kind::kDouble, CUSET_REF(train.min_lr_ratio),
                "final lr as a fraction of lr (linear / cosine)"),
          0.0, 1.0);
    range(t.add("train.weight_decay", Kind::kDouble, CUSET_REF(train.weight_decay),
                "AdamW decoupled weight decay"),
          0.0, 10.0);
    t.add("train.decay_norm_and_bias", Kind::kBool, CUSET_REF(train.decay_norm_and_bias),
          "also decay norm weights and biases");
    range(t.add("train.beta1", Kind::kDouble, CUSET_REF(train.beta1), "AdamW beta1"), 0.0,
          0.999999);
    range(t.add("train.beta2", Kind::kDouble, CUSET_REF(train.beta2), "AdamW beta2"), 0.0,
          0.999999999);
    range(t.add("train.eps", Kind::kDouble, CUSET_REF(train.eps), "AdamW epsilon"), 0.0, 1.0);
    range(t.add("train.grad_clip", Kind::kDouble, CUSET_REF(train.grad_clip),
                "max global gradient norm; 0 = off"),
          0.0, kInf);
    bookkeeping(range(t.add("train.eval_every", Kind::kInt, CUSET_REF(train.eval_every),
                            "evaluate every N steps; 0 = before and after training only"),
                      0, 9.007199254740992e15));
    bookkeeping(range(t.add("train.max_bad_steps", Kind::kInt, CUSET_REF(train.max_bad_steps),
                            "non-finite steps in a row before the run stops (exit 4)"),
                      1, 1 << 20));
    bookkeeping(range(t.add("train.threads", Kind::kInt, CUSET_REF(train.threads),
                            "CPU intra-op threads; 0 = LibTorch default"),
                      0, 4096));
}

// checkpoint.*
void add_checkpoint_keys(Table& t) {
    bookkeeping(range(t.add("checkpoint.every", Kind::kInt, CUSET_REF(checkpoint.every),
                            "save every N steps; 0 = only at the end"),
                      0, 9.007199254740992e15));
    bookkeeping(range(t.add("checkpoint.keep_last", Kind::kInt, CUSET_REF(checkpoint.keep_last),
                            "checkpoints kept; older ones are deleted (0 = keep all)"),
                      0, 1 << 20));
    bookkeeping(range(t.add("checkpoint.max_shard_mb", Kind::kInt,
                            CUSET_REF(checkpoint.max_shard_mb),
                            "safetensors shard size limit in MiB"),
                      1, 1 << 24));
}

// log.*
void add_log_keys(Table& t) {
    bookkeeping(choices(t.add("log.level", Kind::kEnum, CUSET_REF(log.level), "log level"),
                        {"trace", "debug", "info", "warn", "error"}));
    bookkeeping(range(t.add("log.every", Kind::kInt, CUSET_REF(log.every),
                            "log metrics every N steps"),
                      1, 1 << 30));
    bookkeeping(choices(t.add("log.progress", Kind::kEnum, CUSET_REF(log.progress),
                              "progress bar: auto = when stderr is a terminal"),
                        {"auto", "always", "never"}));
    bookkeeping(t.add("log.sample_weights", Kind::kBool, CUSET_REF(log.sample_weights),
                      "log every sample's weight and hardest window (debug level)"));
    bookkeeping(t.add("log.tensorboard", Kind::kBool, CUSET_REF(log.tensorboard),
                      "write TensorBoard event files (events.out.tfevents.*) in the run folder"));
}

// run.*
void add_run_keys(Table& t) {
    bookkeeping(t.add("run.output_dir", Kind::kString, CUSET_REF(run.output_dir),
                      "folder holding run folders"));
    bookkeeping(t.add("run.name", Kind::kString, CUSET_REF(run.name),
                      "run folder name; empty = the config file's stem"));
}

// analysis.* (docs/method.md sec. 7)
void add_analysis_keys(Table& t) {
    bookkeeping(range(t.add("analysis.window", Kind::kInt, CUSET_REF(analysis.window),
                            "valid tokens per low-confidence window"),
                      1, 1 << 24));
    bookkeeping(range(t.add("analysis.low_threshold", Kind::kDouble,
                            CUSET_REF(analysis.low_threshold),
                            "a window is low-confidence when its mean is below this"),
                      0.0, 1.0));
    bookkeeping(range(t.add("analysis.overlap", Kind::kDouble, CUSET_REF(analysis.overlap),
                            "share of sensitive tokens for a window to count as sensitive"),
                      0.0, 1.0));
    bookkeeping(range(t.add("analysis.bins", Kind::kInt, CUSET_REF(analysis.bins),
                            "histogram bins"),
                      1, 10000));
}

// distributed.*
void add_distributed_keys(Table& t) {
    bookkeeping(choices(t.add("distributed.backend", Kind::kEnum, CUSET_REF(distributed.backend),
                              "auto = nccl on CUDA, gloo on CPU"),
                        {"auto", "nccl", "gloo"}));
    bookkeeping(range(t.add("distributed.timeout_s", Kind::kInt, CUSET_REF(distributed.timeout_s),
                            "collective timeout; a dead rank fails the others after this"),
                      1, 86400));
    bookkeeping(range(t.add("distributed.bucket_mb", Kind::kDouble, CUSET_REF(distributed.bucket_mb),
                            "gradient all-reduce bucket size in MiB (fractions allowed)"),
                      1.0 / 1024, 65536.0));
    bookkeeping(range(t.add("distributed.zero_stage", Kind::kInt, CUSET_REF(distributed.zero_stage),
                            "ZeRO sharding over the ranks: 0 = full replicas, 1 = fp32 masters and AdamW moments "
                            "sharded, 2 = and gradients, 3 = and the weights (gathered per layer)"),
                      0, 3));
    bookkeeping(t.add("distributed.offload_optimizer", Kind::kBool, CUSET_REF(distributed.offload_optimizer),
                      "ZeRO: keep the shard's fp32 masters and moments in CPU memory and run AdamW there"));
}

// eval.* (`cuset-train eval`, CUDABench; none of it changes what a model learns)
void add_eval_keys(Table& t) {
    bookkeeping(t.add("eval.python", Kind::kString, CUSET_REF(eval.python),
                      "Python that runs each task's gen.py and compare.py (numpy, torch as the tasks need); empty = "
                      "the project's .venv, else python3"));
    bookkeeping(t.add("eval.nvcc", Kind::kString, CUSET_REF(eval.nvcc), "CUDA compiler of the judged programs"));
    bookkeeping(t.add("eval.gpu_name", Kind::kString, CUSET_REF(eval.gpu_name),
                      "GPU named in the prompts; empty = each task's gpu field"));
    bookkeeping(range(t.add("eval.jobs", Kind::kInt, CUSET_REF(eval.jobs), "samples judged at once"), 1, 1024));
    bookkeeping(range(t.add("eval.compile_timeout_s", Kind::kDouble, CUSET_REF(eval.compile_timeout_s),
                            "nvcc limit per program (CUDABench: 60)"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.run_timeout_s", Kind::kDouble, CUSET_REF(eval.run_timeout_s),
                            "run limit per program (CUDABench: 60)"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.gen_timeout_s", Kind::kDouble, CUSET_REF(eval.gen_timeout_s),
                            "gen.py limit per task (CUDABench: 180)"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.compare_timeout_s", Kind::kDouble, CUSET_REF(eval.compare_timeout_s),
                            "compare.py limit per program"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.emulate_timeout_s", Kind::kDouble, CUSET_REF(eval.emulate_timeout_s),
                            "run limit per emulated program"),
                      0.1, 86400.0));
    bookkeeping(t.add("eval.sandbox.enabled", Kind::kBool, CUSET_REF(eval.sandbox.enabled),
                      "contain every judged command (namespaces, rlimits); `eval.sandbox: off` runs programs "
                      "unconfined as you"));
    bookkeeping(range(t.add("eval.sandbox.cpu_s", Kind::kDouble, CUSET_REF(eval.sandbox.cpu_s),
                            "CPU seconds per contained process"),
                      1.0, 1e6));
    bookkeeping(range(t.add("eval.sandbox.memory_mb", Kind::kInt, CUSET_REF(eval.sandbox.memory_mb),
                            "heap and private memory per contained process, MiB"),
                      16, 1 << 24));
    bookkeeping(range(t.add("eval.sandbox.file_mb", Kind::kInt, CUSET_REF(eval.sandbox.file_mb),
                            "largest file a contained process writes, and its private /tmp, MiB"),
                      1, 1 << 24));
    bookkeeping(range(t.add("eval.sandbox.processes", Kind::kInt, CUSET_REF(eval.sandbox.processes),
                            "processes and threads of one sandbox at once"),
                      4, 1 << 20));
    bookkeeping(range(t.add("eval.sandbox.open_files", Kind::kInt, CUSET_REF(eval.sandbox.open_files),
                            "open files per contained process"),
                      16, 1 << 20));
    bookkeeping(t.add("eval.after_training", Kind::kBool, CUSET_REF(eval.after_training),
                      "after training: CUDABench (eval.tasks) on the final checkpoint, figures into summary.json"));
    bookkeeping(t.add("eval.tasks", Kind::kString, CUSET_REF(eval.tasks), "CUDABench tasks file for eval.after_training"));
    bookkeeping(range(t.add("eval.level", Kind::kInt, CUSET_REF(eval.level), "eval.after_training: description level"), 1, 3));
    bookkeeping(range(t.add("eval.samples", Kind::kInt, CUSET_REF(eval.samples), "eval.after_training: samples per task (K)"),
                      1, 65536));
    bookkeeping(range(t.add("eval.limit", Kind::kInt, CUSET_REF(eval.limit), "eval.after_training: the first N tasks; 0 = all"),
                      0, 1 << 30));
    bookkeeping(choices(t.add("eval.judge", Kind::kEnum, CUSET_REF(eval.judge),
                              "eval.after_training: auto (gpu where present, else compile), gpu, emulate or compile"),
                        {"auto", "gpu", "emulate", "compile"}));
}

// generate.* (`cuset-train generate`; none of it changes what a model learns)
void add_generate_keys(Table& t) {
    bookkeeping(range(t.add("generate.max_new_tokens", Kind::kInt, CUSET_REF(generate.max_new_tokens),
                            "tokens generated per sample at most"),
                      1, 1 << 20));
    bookkeeping(range(t.add("generate.n", Kind::kInt, CUSET_REF(generate.n), "samples per prompt"), 1, 1 << 16));
    bookkeeping(range(t.add("generate.temperature", Kind::kDouble, CUSET_REF(generate.temperature),
                            "softmax temperature; 0 = greedy"),
                      0.0, 100.0));
    bookkeeping(range(t.add("generate.top_k", Kind::kInt, CUSET_REF(generate.top_k),
                            "keep the k most likely tokens; 0 = off"),
                      0, 1 << 24));
    bookkeeping(range(t.add("generate.top_p", Kind::kDouble, CUSET_REF(generate.top_p),
                            "nucleus: smallest set with probability >= top_p; 1 = off"),
                      0.0, 1.0));
    bookkeeping(range(t.add("generate.min_p", Kind::kDouble, CUSET_REF(generate.min_p),
                            "drop tokens below min_p x the top probability; 0 = off"),
                      0.0, 1.0));
    bookkeeping(range(t.add("generate.repetition_penalty", Kind::kDouble, CUSET_REF(generate.repetition_penalty),
                            "penalty on prompt and generated tokens (> 1 discourages); 1 = off"),
                      1e-6, 100.0));
    bookkeeping(range(t.add("generate.seed", Kind::kInt, CUSET_REF(generate.seed),
                            "sampling seed; a sample's stream is (seed, prompt id, sample index)"),
                      0, 9.007199254740992e15));
    bookkeeping(range(t.add("generate.batch_size", Kind::kInt, CUSET_REF(generate.batch_size),
                            "sequences decoded together"),
                      1, 1 << 16));
    bookkeeping(t.add("generate.stop", Kind::kString, CUSET_REF(generate.stop),
                      "stop strings as a JSON array, e.g. '[\"\\n\\n\\n\"]'; empty = none"));
    bookkeeping(t.add("generate.thinking", Kind::kBool, CUSET_REF(generate.thinking),
                      "Qwen3: leave the think block to the model (default: empty, thinking off)"));
    bookkeeping(t.add("generate.skip_invalid", Kind::kBool, CUSET_REF(generate.skip_invalid),
                      "count and skip bad prompts (empty, too long, invalid) instead of stopping"));
    bookkeeping(choices(t.add("generate.backend", Kind::kEnum, CUSET_REF(generate.backend),
                              "local: model.path on train.device; openai: a served model through the "
                              "OpenAI-compatible chat-completions API (vLLM, SGLang, llama.cpp's server)"),
                        {"local", "openai"}));
    bookkeeping(t.add("generate.url", Kind::kString, CUSET_REF(generate.url),
                      "openai: the API's base URL, e.g. http://127.0.0.1:8000/v1 (/chat/completions is appended)"));
    bookkeeping(t.add("generate.served_model", Kind::kString, CUSET_REF(generate.served_model),
                      "openai: the model's name on the server (the request's \"model\", e.g. vLLM's --served-model-name)"));
    bookkeeping(t.add("generate.api_key_env", Kind::kString, CUSET_REF(generate.api_key_env),
                      "openai: name of the environment variable holding the API key; empty = no key sent"));
    bookkeeping(range(t.add("generate.concurrency", Kind::kInt, CUSET_REF(generate.concurrency),
                            "openai: requests in flight"),
                      1, 4096));
    bookkeeping(range(t.add("generate.timeout_s", Kind::kDouble, CUSET_REF(generate.timeout_s),
                            "openai: seconds one request may take"),
                      0.001, 1e6));
    bookkeeping(range(t.add("generate.retries", Kind::kInt, CUSET_REF(generate.retries),
                            "openai: further attempts, with exponential backoff, after a connection error, HTTP 429 or 5xx"),
                      0, 100));
}

// The schema: every section's keys, in the order they are printed.
Table make_table() {
    Table t;
    add_model_keys(t);
    add_data_keys(t);
    add_objective_keys(t);
    add_tagger_keys(t);
    add_train_keys(t);
    add_checkpoint_keys(t);
    add_log_keys(t);
    add_run_keys(t);
    add_analysis_keys(t);
    add_distributed_keys(t);
    add_eval_keys(t);
    add_generate_keys(t);
    return t;
}

#undef CUSET_REF

const Table& table() {
    static const Table t = make_table();
    return t;
}

const Field* find_field(const std::string& path) {
    for (const Field& f : table().fields)
        if (f.path == path) return &f;
    return nullptr;
}

// A section with a boolean `enabled` key takes a boolean for itself: `eval.sandbox: off`.
const Field* find_field_or_switch(const std::string& path) {
    if (const Field* f = find_field(path)) return f;
    const Field* sw = find_field(path + ".enabled");
    return sw && sw->kind == Kind::kBool ? sw : nullptr;
}

// True when `prefix` names a section (e.g. "objective.mask") of some key.
bool is_section(const std::string& prefix) {
    for (const Field& f : table().fields)
        if (f.path.size() > prefix.size() && f.path.compare(0, prefix.size(), prefix) == 0 &&
            f.path[prefix.size()] == '.')
            return true;
    return false;
}

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string kind_name(const Field& f) {
    switch (f.kind) {
        case Kind::kBool: return "a boolean (true/false)";
        case Kind::kInt: return "an integer";
        case Kind::kDouble: return "a number";
        case Kind::kString: return "a string";
        case Kind::kEnum: {
            std::string s = "one of ";
            for (size_t i = 0; i < f.choices.size(); ++i) s += (i ? ", " : "") + f.choices[i];
            return s;
        }
    }
    return "?";
}

std::string format_number(double v) {
    std::ostringstream os;
    os << std::setprecision(17) << v;
    double back = 0;
    std::istringstream(os.str()) >> back;
    // Prefer the shortest representation that round-trips.
    for (int p = 1; p <= 17; ++p) {
        std::ostringstream s;
        s << std::setprecision(p) << v;
        std::istringstream(s.str()) >> back;
        if (back == v) return s.str();
    }
    return os.str();
}

std::string range_text(const Field& f) {
    std::string lo = std::isinf(f.lo) ? "-inf" : format_number(f.lo);
    std::string hi = std::isinf(f.hi) ? "inf" : format_number(f.hi);
    return "[" + lo + ", " + hi + "]";
}

// What a number key accepts, for messages: " in [0, 1]", " >= 0", " <= 5" or "" (no printed "inf").
std::string bounds_text(const Field& f) {
    if (!std::isinf(f.lo) && !std::isinf(f.hi)) return " in " + range_text(f);
    if (!std::isinf(f.lo)) return " >= " + format_number(f.lo);
    if (!std::isinf(f.hi)) return " <= " + format_number(f.hi);
    return "";
}

// Where a value came from, for error messages: "file.yaml:12:5" or "--set".
struct Origin {
    std::string where;
};

[[noreturn]] void fail(const Origin& o, const std::string& msg) {
    throw UsageError("config error: " + o.where + ": " + msg);
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// Assigns a scalar text to a field after checking its type and range.
void assign(Config& cfg, const Field& f, const std::string& text, const Origin& o) {
    const std::string key = "'" + f.path + "'";
    auto bad = [&](const std::string& extra) {
        fail(o, "key " + key + " expects " + kind_name(f) + extra + ", got '" + quote_bounded(text) + "'");
    };
    switch (f.kind) {
        case Kind::kBool: {
            std::string v = lower(text);
            bool b;
            if (v == "true" || v == "yes" || v == "on")
                b = true;
            else if (v == "false" || v == "no" || v == "off")
                b = false;
            else
                bad("");
            *static_cast<bool*>(f.ref(cfg)) = b;
            return;
        }
        case Kind::kInt: {
            size_t pos = 0;
            long long v = 0;
            try {
                v = std::stoll(text, &pos, 10);
            } catch (const std::exception&) {
                bad(bounds_text(f));
            }
            if (pos != text.size()) bad(bounds_text(f));
            if (double(v) < f.lo || double(v) > f.hi)
                fail(o, "key " + key + " = " + quote_bounded(text) + " is out of range " + range_text(f));
            *static_cast<int64_t*>(f.ref(cfg)) = v;
            return;
        }
        case Kind::kDouble: {
            size_t pos = 0;
            double v = 0;
            const std::string t = lower(text);
            if (t == ".inf" || t == "+.inf" || t == "-.inf" || t == ".nan") {  // YAML's infinities and NaN
                v = NAN;
                pos = text.size();
            } else {
                try {
                    v = std::stod(text, &pos);
                } catch (const std::out_of_range&) {  // 1e999 is inf, 1e-999 is 0
                    char* end = nullptr;
                    v = std::strtod(text.c_str(), &end);
                    pos = static_cast<size_t>(end - text.c_str());
                } catch (const std::exception&) {
                    bad(bounds_text(f));
                }
            }
            if (pos != text.size()) bad(bounds_text(f));
            if (!std::isfinite(v))
                fail(o, "key " + key + " must be a finite number" + bounds_text(f) + ", got '" + quote_bounded(text) + "'");
            if (v < f.lo || v > f.hi)
                fail(o, "key " + key + " = " + quote_bounded(text) + " is out of range " + range_text(f));
            *static_cast<double*>(f.ref(cfg)) = v;
            return;
        }
        case Kind::kEnum:
            if (std::find(f.choices.begin(), f.choices.end(), text) == f.choices.end()) bad("");
            *static_cast<std::string*>(f.ref(cfg)) = text;
            return;
        case Kind::kString:
            *static_cast<std::string*>(f.ref(cfg)) = text;
            return;
    }
}

std::string unknown_key_message(const std::string& path) {
    std::string msg = "unknown key '" + quote_bounded(path) + "'";
    // No key is that long (and the edit distance to a megabyte key would take seconds).
    std::string near = path.size() > kQuoteMaxBytes ? "" : config_closest_key(path);
    if (!near.empty()) msg += " (did you mean '" + near + "'?)";
    else msg += " (run `cuset-train --print-config` to see every key)";
    return msg;
}

Origin origin_of(const std::string& file, const YAML::Mark& m) {
    if (m.is_null()) return {file};
    return {file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1)};
}

// Before anything walks the tree: an alias used inside its own anchor (`a: &r {b: *r}`) makes a
// cycle, and absurd nesting or alias fan-out an endless walk; all are refused here.
void check_tree(const YAML::Node& node, std::vector<YAML::Node>& stack, size_t& visited, const std::string& file) {
    constexpr size_t kMaxDepth = 64, kMaxNodes = 1000000;
    if (++visited > kMaxNodes)
        fail(origin_of(file, node.Mark()), "more than 1000000 values (aliases expanding without end?)");
    if (!node.IsMap() && !node.IsSequence()) return;
    for (const YAML::Node& up : stack)
        if (up.is(node)) fail(origin_of(file, node.Mark()), "recursive alias: an anchor is used inside itself");
    if (stack.size() >= kMaxDepth)
        fail(origin_of(file, node.Mark()), "nested more than 64 levels deep (a configuration has 3)");
    stack.push_back(node);
    for (auto it = node.begin(); it != node.end(); ++it) {
        if (node.IsMap()) {
            check_tree(it->first, stack, visited, file);
            check_tree(it->second, stack, visited, file);
        } else {
            check_tree(*it, stack, visited, file);
        }
    }
    stack.pop_back();
}

// The position of the first byte that is not valid UTF-8, or npos.
size_t invalid_utf8_at(const std::string& s) {
    size_t i = 0;
    while (i < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || (n == 2 && c < 0xC2) || i + n > s.size()) return i;
        for (size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
        if (n == 3) {
            unsigned char d = static_cast<unsigned char>(s[i + 1]);
            if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d >= 0xA0)) return i;
        } else if (n == 4) {
            unsigned char d = static_cast<unsigned char>(s[i + 1]);
            if ((c == 0xF0 && d < 0x90) || c > 0xF4 || (c == 0xF4 && d >= 0x90)) return i;
        }
        i += n;
    }
    return std::string::npos;
}

void walk(Config& cfg, const YAML::Node& node, const std::string& prefix, const std::string& file) {
    std::map<std::string, YAML::Mark> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
        const YAML::Node k = it->first;
        const YAML::Node v = it->second;
        Origin ko = origin_of(file, k.Mark());
        if (!k.IsScalar()) fail(ko, "keys must be plain names");
        if (!seen.emplace(k.Scalar(), k.Mark()).second) {
            const YAML::Mark& m = seen[k.Scalar()];
            fail(ko, "duplicate key '" + quote_bounded(prefix.empty() ? k.Scalar() : prefix + "." + k.Scalar()) +
                         "' (first at line " + std::to_string(m.line + 1) + "); keep one");
        }
        std::string path = prefix.empty() ? k.Scalar() : prefix + "." + k.Scalar();
        const Field* f = find_field(path);
        if (!f && v.IsScalar()) f = find_field_or_switch(path);
        if (f) {
            Origin vo = origin_of(file, v.Mark());
            if (v.IsNull()) {
                if (f->kind == Kind::kString) {
                    assign(cfg, *f, "", vo);
                    continue;
                }
                fail(vo, "key '" + path + "' has no value; expected " + kind_name(*f));
            }
            if (!v.IsScalar()) fail(vo, "key '" + path + "' expects " + kind_name(*f) + ", got a " +
                                            (v.IsMap() ? "mapping" : "list"));
            assign(cfg, *f, v.Scalar(), vo);
        } else if (is_section(path)) {
            if (v.IsNull()) continue;  // an empty section is fine
            if (!v.IsMap()) fail(ko, "'" + path + "' is a section; expected a mapping of keys");
            walk(cfg, v, path, file);
        } else {
            // Name the full path of the first key below an unknown section, so the suggestion
            // can match it ('trian: {lr: ..}' -> 'trian.lr', did you mean 'train.lr').
            std::string full = path;
            for (YAML::Node n = v; n.IsMap() && n.size() > 0;) {
                auto first = n.begin();
                if (!first->first.IsScalar()) break;
                full += "." + first->first.Scalar();
                n = first->second;
            }
            fail(ko, unknown_key_message(full));
        }
    }
}

void check_file_path(const std::string& key, const std::string& path, bool required) {
    if (path.empty()) {
        if (required) throw UsageError("config error: key '" + key + "' must be set");
        return;
    }
}

void config_validate(const Config& c) {
    auto need = [](bool ok, const std::string& msg) {
        if (!ok) throw UsageError("config error: " + msg);
    };
    check_file_path("model.path", c.model.path, true);
    // run.name is one folder below run.output_dir, never a path out of it.
    const std::string& rn = c.run.name;
    need(rn.find('/') == std::string::npos && rn.find('\\') == std::string::npos && rn != "." && rn != ".." &&
             rn.find('\0') == std::string::npos,
         "key 'run.name' must be a plain folder name (no '/', not '.' or '..'), got '" +
             quote_bounded(rn) + "'");
    const bool grpo = c.objective.method == "grpo";
    check_file_path("data.train", c.data.train, !grpo);  // grpo samples prompts from its task file
    need(!(grpo && c.objective.grpo.tasks.empty()),
         "key 'objective.grpo.tasks' must name a task file (CUDABench format, e.g. data/cuda-tasks/tasks.jsonl) when "
         "'objective.method' is grpo");
    need(!(grpo && c.train.max_steps <= 0),
         "key 'train.max_steps' must be > 0 when 'objective.method' is grpo (a run has no data epochs to count)");
    need(!(grpo && c.distributed.zero_stage >= 3),
         "'objective.method' grpo samples from whole weights: use 'distributed.zero_stage' 0-2");
    need(!(c.objective.method == "rho1" && c.objective.rho1_reference_scores.empty()),
         "key 'objective.rho1.reference_scores' must name a score file of the reference model "
         "(`cuset-train score --out FILE`) when 'objective.method' is rho1");
    need(!(c.objective.confidence_source == "cached" && c.objective.confidence_cache.empty()),
         "key 'objective.confidence.cache' must name a score file when "
         "'objective.confidence.source' is cached");
    need(!(c.train.warmup_steps > 0 && c.train.warmup_ratio > 0),
         "keys 'train.warmup_steps' and 'train.warmup_ratio' are both set; use one");
    const std::string& d = c.train.device;
    bool device_ok = d == "auto" || d == "cpu" || d == "cuda" ||
                     (d.rfind("cuda:", 0) == 0 && d.size() > 5 &&
                      d.find_first_not_of("0123456789", 5) == std::string::npos);
    need(device_ok, "key 'train.device' expects auto, cpu, cuda or cuda:N, got '" + quote_bounded(d) + "'");
    if (c.model.lora.enabled) {
        static const std::set<std::string> kTargets = {"q_proj", "k_proj", "v_proj", "o_proj",
                                                       "gate_proj", "up_proj", "down_proj"};
        std::set<std::string> seen;
        std::stringstream ss(c.model.lora.target_modules);
        for (std::string m; std::getline(ss, m, ',');) {
            m.erase(0, m.find_first_not_of(" \t"));
            m.erase(m.find_last_not_of(" \t") + 1);
            need(kTargets.count(m) == 1, "key 'model.lora.target_modules' names '" + quote_bounded(m) +
                                             "'; expected a comma-separated subset of q_proj,k_proj,"
                                             "v_proj,o_proj,gate_proj,up_proj,down_proj");
            need(seen.insert(m).second, "key 'model.lora.target_modules' names '" + quote_bounded(m) + "' twice");
        }
        need(!seen.empty(), "key 'model.lora.target_modules' is empty");
    }
    if (!c.generate.stop.empty()) {
        need(json_depth_problem(c.generate.stop).empty(),
             "key 'generate.stop' expects a JSON array of strings, got one nested deeper than " +
                 std::to_string(kJsonMaxDepth) + " levels");
        nlohmann::json stop;
        try {
            stop = json_parse(c.generate.stop, "key 'generate.stop'", ExitCode::kUsage);
        } catch (const UsageError&) {
            need(false, "key 'generate.stop' expects a JSON array of strings, got '" + quote_bounded(c.generate.stop) + "'");
        }
        need(stop.is_array(), "key 'generate.stop' expects a JSON array of strings, got '" + quote_bounded(c.generate.stop) + "'");
        for (const auto& s : stop)
            need(s.is_string() && !s.get<std::string>().empty(),
                 "key 'generate.stop' expects non-empty strings, got " + quote_bounded(s.dump()));
    }
    if (c.generate.backend == "openai") {
        need(!c.generate.url.empty(),
             "key 'generate.url' must name the server's API (e.g. http://127.0.0.1:8000/v1) when 'generate.backend' is openai");
        need(c.generate.url.rfind("http://", 0) == 0 || c.generate.url.rfind("https://", 0) == 0,
             "key 'generate.url' must be an http:// or https:// URL, got '" + quote_bounded(c.generate.url) + "'");
        need(!c.generate.served_model.empty(),
             "key 'generate.served_model' must name the model as the server knows it when 'generate.backend' is openai");
    }
    need(!(c.eval.after_training && c.eval.tasks.empty()),
         "key 'eval.tasks' must name a CUDABench tasks file when 'eval.after_training' is true");
    {
        nlohmann::json kw;
        try {
            kw = json_parse(c.data.chat_template_kwargs, "key 'data.chat_template_kwargs'", ExitCode::kUsage);
        } catch (const Error&) {
        }
        need(kw.is_object(), "key 'data.chat_template_kwargs' expects a JSON object such as {\"enable_thinking\": false}, got '" +
                                 quote_bounded(c.data.chat_template_kwargs) + "'");
    }
    need(!(c.data.chat_format == "custom" &&
           c.data.templ.assistant.find("{content}") == std::string::npos),
         "key 'data.template.assistant' must contain {content} when 'data.chat_format' is custom");
}

}  // namespace

Override override_parse(const std::string& arg) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
        throw UsageError("--set expects key.path=value, got '" + quote_bounded(arg) + "'");
    return {arg.substr(0, eq), arg.substr(eq + 1)};
}

Config config_load(const std::string& file, const std::vector<Override>& overrides) {
    Config cfg;
    cfg.source_file = file;
    if (!file.empty()) {
        std::error_code dir_ec;
        if (std::filesystem::is_directory(file, dir_ec))
            throw UsageError("config error: '" + file + "' is a folder, not a YAML file (check the path given to --config)");
        if (std::string kind = non_regular_kind(file); !kind.empty())  // a FIFO would block, /dev/zero never end
            throw UsageError("config error: '" + file + "' is " + kind + ", not a YAML file (check the path given to --config)");
        std::ifstream in(file);
        if (!in)
            throw UsageError("config error: cannot read '" + file +
                             "' (check the path given to --config)");
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string text = ss.str();
        if (size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
            size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + bad, '\n'));
            size_t bol = text.rfind('\n', bad == 0 ? 0 : bad - 1);
            size_t col = bad - (bol == std::string::npos || bad == 0 ? 0 : bol + 1) + 1;
            throw UsageError("config error: " + file + ":" + std::to_string(line) + ":" + std::to_string(col) +
                             ": not valid UTF-8 (a YAML file is UTF-8 text)");
        }
        YAML::Node root;
        try {
            root = YAML::Load(text);
        } catch (const YAML::Exception& e) {
            throw UsageError("config error: " + file + ":" + std::to_string(e.mark.line + 1) + ":" +
                             std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg);
        }
        if (root.IsNull()) {
            // An empty file is an empty config: all defaults.
        } else if (!root.IsMap()) {
            throw UsageError("config error: " + file +
                             ": the top level must be a mapping of sections (model:, data:, ...)");
        } else {
            std::vector<YAML::Node> stack;
            size_t visited = 0;
            check_tree(root, stack, visited, file);
            walk(cfg, root, "", file);
        }
    }
    for (const Override& o : overrides) {
        const Field* f = find_field_or_switch(o.key);
        Origin origin{"--set " + o.key};
        if (!f) {
            if (is_section(o.key)) fail(origin, "'" + o.key + "' is a section, not a key");
            fail(origin, unknown_key_message(o.key));
        }
        std::string v = o.value;
        // Accept YAML quoting on the command line: --set data.system_prompt='"hi"'.
        if (v.size() >= 2 && ((v.front() == '"' && v.back() == '"') ||
                              (v.front() == '\'' && v.back() == '\'')))
            v = v.substr(1, v.size() - 2);
        assign(cfg, *f, v, origin);
    }
    config_validate(cfg);
    return cfg;
}

std::vector<std::string> config_keys() {
    std::vector<std::string> keys;
    for (const Field& f : table().fields) keys.push_back(f.path);
    return keys;
}

std::string config_closest_key(const std::string& key) {
    std::string best;
    size_t best_d = std::string::npos;
    // Compare full paths and also the last component against each key's last component, so
    // 'objective.mask.treshold.q' and 'treshold' both find their key.
    for (const Field& f : table().fields) {
        size_t d = edit_distance(key, f.path);
        if (d < best_d) {
            best_d = d;
            best = f.path;
        }
    }
    size_t limit = std::max<size_t>(3, key.size() / 3);
    return best_d <= limit ? best : "";
}

namespace {

std::string yaml_scalar(Config& cfg, const Field& f) {
    switch (f.kind) {
        case Kind::kBool: return *static_cast<bool*>(f.ref(cfg)) ? "true" : "false";
        case Kind::kInt: return std::to_string(*static_cast<int64_t*>(f.ref(cfg)));
        case Kind::kDouble: return format_number(*static_cast<double*>(f.ref(cfg)));
        case Kind::kEnum:
        case Kind::kString: {
            YAML::Emitter e;
            e << YAML::DoubleQuoted << *static_cast<std::string*>(f.ref(cfg));
            return e.c_str();
        }
    }
    return "";
}

}  // namespace

std::string config_to_yaml(const Config& cfg_in) {
    Config cfg = cfg_in;  // field refs need a mutable object
    std::ostringstream os;
    std::vector<std::string> open;  // currently open section path components
    for (const Field& f : table().fields) {
        std::vector<std::string> parts;
        std::stringstream ss(f.path);
        for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
        size_t common = 0;
        while (common < open.size() && common + 1 < parts.size() && open[common] == parts[common])
            ++common;
        open.resize(common);
        for (size_t i = common; i + 1 < parts.size(); ++i) {
            os << std::string(2 * i, ' ') << parts[i] << ":\n";
            open.push_back(parts[i]);
        }
        std::string value = yaml_scalar(cfg, f);
        std::string line = std::string(2 * (parts.size() - 1), ' ') + parts.back() + ": " + value;
        os << line;
        size_t pad = line.size() < 48 ? 48 - line.size() : 1;
        os << std::string(pad, ' ') << "# " << f.help << "\n";
    }
    return os.str();
}

std::string config_hash(const Config& cfg_in) {
    Config cfg = cfg_in;
    // FNV-1a 64 over "path=value\n" of every training-relevant key.
    uint64_t h = 1469598103934665603ull;
    for (const Field& f : table().fields) {
        if (!f.affects_training) continue;
        if (!cfg.model.lora.enabled && f.path.rfind("model.lora.", 0) == 0) continue;
        std::string s = f.path + "=" + yaml_scalar(cfg, f) + "\n";
        for (unsigned char ch : s) {
            h ^= ch;
            h *= 1099511628211ull;
        }
    }
    std::ostringstream os;
    os << std::hex << std::setw(16) << std::setfill('0') << h;
    return os.str();
}

std::string run_dir_of(const Config& cfg) {
    std::string name = cfg.run.name;
    if (name.empty())
        name = cfg.source_file.empty() ? "run" : std::filesystem::path(cfg.source_file).stem().string();
    return (std::filesystem::path(cfg.run.output_dir) / name).string();
}

std::string tokenizer_path_of(const Config& cfg) {
    return cfg.model.tokenizer.empty() ? cfg.model.path : cfg.model.tokenizer;
}

void config_check_range(const std::string& key, double value) {
    for (const Field& f : table().fields) {
        if (f.path != key) continue;
        if (f.kind != Kind::kInt && f.kind != Kind::kDouble)
            throw RuntimeFailure("config_check_range: key '" + key + "' is not a number");
        if (!(value >= f.lo && value <= f.hi))  // NaN is out of every range
            throw UsageError("config error: key '" + key + "' = " + format_number(value) +
                             " is out of range " + range_text(f));
        return;
    }
    throw RuntimeFailure("config_check_range: no key '" + key + "' in the schema");
}

}  // namespace cuset
