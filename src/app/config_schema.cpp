// The schema of cuset-train's configuration: one row per key (path, default, range or choices,
// help, the member of Config it fills; the type is the member's), and the cross-key rules a
// loaded configuration must meet. Reading, printing and hashing are the engine's (core/config.h).
#include "cuset/app/config_schema.h"

#include <filesystem>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/rl/grpo.h"
#include "cuset/text/chat_format.h"

namespace cuset {
namespace {

// The key's kind and value of a member of type T: bool, an integer, a floating-point number or a
// string (choose() maps other types through names).
template <class T>
constexpr ConfigKind kind_of() {
    if constexpr (std::is_same_v<T, bool>)
        return ConfigKind::kBool;
    else if constexpr (std::is_integral_v<T>)
        return ConfigKind::kInt;
    else if constexpr (std::is_floating_point_v<T>)
        return ConfigKind::kDouble;
    else {
        static_assert(std::is_same_v<T, std::string>, "a key fills a bool, an integer, a number or a string");
        return ConfigKind::kString;
    }
}

template <class T>
ConfigValue value_of(const T& v) {
    if constexpr (std::is_same_v<T, bool>)
        return v;
    else if constexpr (std::is_integral_v<T>)
        return static_cast<int64_t>(v);
    else if constexpr (std::is_floating_point_v<T>)
        return static_cast<double>(v);
    else
        return std::string(v);
}

template <class T>
T typed(const ConfigValue& v) {
    if constexpr (std::is_same_v<T, bool>)
        return std::get<bool>(v);
    else if constexpr (std::is_integral_v<T>)
        return static_cast<T>(std::get<int64_t>(v));  // the key's range fits the member
    else if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(std::get<double>(v));
    else
        return std::get<std::string>(v);
}

// The member of a Config that a row fills.
#define CUSET_MEMBER(m) [](auto& c) -> auto& { return c.m; }

template <class M>
using member_t = std::remove_cv_t<std::remove_reference_t<std::invoke_result_t<M, Config&>>>;

// The rows, each one line below: t.add(path, member, default, help), narrowed by range() or
// choices(), or t.choose() for a member whose value a name stands for.
struct Table {
    ConfigSchema schema;

    template <class M>
    ConfigKey& add(std::string path, M member, const member_t<M>& fallback, std::string help) {
        using T = member_t<M>;
        ConfigKey k;
        k.path = std::move(path);
        k.kind = kind_of<T>();
        k.default_value = value_of(fallback);
        k.help = std::move(help);
        k.get = [member](const void* root) { return value_of(member(*static_cast<const Config*>(root))); };
        k.set = [member](void* root, const ConfigValue& v) { member(*static_cast<Config*>(root)) = typed<T>(v); };
        return schema.add(std::move(k));
    }

    // A key that takes one of the names of `values` and fills `member` with the value it names.
    template <class M>
    ConfigKey& choose(std::string path, M member, const member_t<M>& fallback,
                      std::vector<std::pair<std::string, member_t<M>>> values, std::string help) {
        using T = member_t<M>;
        auto name_of = [values](const T& v) -> std::string {
            for (const auto& [name, value] : values)
                if (value == v) return name;
            throw RuntimeFailure("config schema: a value without a name");
        };
        ConfigKey k;
        k.path = std::move(path);
        k.kind = ConfigKind::kEnum;
        for (const auto& nv : values) k.choices.push_back(nv.first);
        k.default_value = name_of(fallback);
        k.help = std::move(help);
        k.get = [member, name_of](const void* root) -> ConfigValue {
            return name_of(member(*static_cast<const Config*>(root)));
        };
        k.set = [member, values](void* root, const ConfigValue& v) {
            for (const auto& [name, value] : values)
                if (name == std::get<std::string>(v)) member(*static_cast<Config*>(root)) = value;
        };
        return schema.add(std::move(k));
    }
};

// What narrows a row: a number's range; a string's choices; bookkeeping, not hashed (it does not
// change what a model learns); lora, hashed only while model.lora.enabled (so full fine-tunes keep
// their hash).
ConfigKey& range(ConfigKey& k, double lo, double hi) {
    k.lo = lo;
    k.hi = hi;
    return k;
}
ConfigKey& choices(ConfigKey& k, std::vector<std::string> c) {
    k.kind = ConfigKind::kEnum;
    k.choices = std::move(c);
    return k;
}
ConfigKey& bookkeeping(ConfigKey& k) {
    k.hashed = false;
    return k;
}
ConfigKey& lora(ConfigKey& k) {
    k.hashed_while = "model.lora.enabled";
    return k;
}

const double kInf = std::numeric_limits<double>::infinity();

// model.* (and model.lora.*)
void add_model_keys(Table& t) {
    t.add("model.path", CUSET_MEMBER(model.path), "data/tiny-coder", "Hugging Face model folder");
    t.add("model.tokenizer", CUSET_MEMBER(model.tokenizer), "",
          "tokenizer folder or file (tokenizer.json / tokenizer.model); empty = model.path");
    choices(t.add("model.dtype", CUSET_MEMBER(model.dtype), "auto",
                  "compute dtype; auto = bfloat16 on CUDA, float32 on CPU"),
            {"auto", "float32", "bfloat16", "float16"});
    t.add("model.activation_checkpointing", CUSET_MEMBER(model.activation_checkpointing), false,
          "recompute each decoder layer in backward to save activation memory");
    // model.lora (PEFT's LoRA; hashed only when enabled, so full fine-tunes keep their hash)
    lora(t.add("model.lora.enabled", CUSET_MEMBER(model.lora.enabled), false,
               "train LoRA adapters on a frozen base instead of every weight"));
    range(lora(t.add("model.lora.r", CUSET_MEMBER(model.lora.r), 16, "adapter rank")), 1, 65536);
    range(lora(t.add("model.lora.alpha", CUSET_MEMBER(model.lora.alpha), 32.0,
                     "scale numerator: alpha / r (alpha / sqrt(r) with rslora)")),
          1e-6, 1e6);
    range(lora(t.add("model.lora.dropout", CUSET_MEMBER(model.lora.dropout), 0.0,
                     "dropout on the adapter input (training only)")),
          0.0, 0.999);
    lora(t.add("model.lora.target_modules", CUSET_MEMBER(model.lora.target_modules),
               "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj",
               "comma-separated projections: q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"));
    lora(t.add("model.lora.rslora", CUSET_MEMBER(model.lora.rslora), false, "rank-stabilised scale alpha / sqrt(r)"));
    choices(lora(t.add("model.lora.init", CUSET_MEMBER(model.lora.init), "kaiming",
                       "A's initialisation: kaiming (uniform, PEFT's default) or gaussian (std 1/r); B = 0")),
            {"kaiming", "gaussian"});
    lora(t.add("model.lora.path", CUSET_MEMBER(model.lora.path), "",
               "start from this PEFT adapter folder; empty = a new adapter"));
}

// data.*
void add_data_keys(Table& t) {
    t.add("data.train", CUSET_MEMBER(data.train), "data/cuda-sft/train.jsonl", "training JSONL file");
    t.add("data.eval", CUSET_MEMBER(data.eval), "data/cuda-sft/eval.jsonl", "evaluation JSONL file; empty = none");
    choices(t.add("data.chat_format", CUSET_MEMBER(data.chat_format), "auto",
                  "chat format; template = the model's own Jinja chat template, auto = template when the model has one"),
            [] {
                std::vector<std::string> names = chat_format_names();
                names.insert(names.begin(), "auto");
                return names;
            }());
    t.add("data.chat_template", CUSET_MEMBER(data.chat_template), "",
          "template format: a .jinja file (or a JSON file with chat_template) to use instead of the model's own");
    t.add("data.chat_template_kwargs", CUSET_MEMBER(data.chat_template_kwargs), "{}",
          "template format: JSON object of extra template variables, e.g. {\"enable_thinking\": false}");
    t.add("data.system_prompt", CUSET_MEMBER(data.system_prompt), "",
          "system message for samples without one; empty = the format's default");
    t.add("data.template.prefix", CUSET_MEMBER(data.templ.prefix), "",
          "custom format: text once at the start");
    t.add("data.template.system", CUSET_MEMBER(data.templ.system), "{content}\n",
          "custom format: system turn, {content} = the system text");
    t.add("data.template.user", CUSET_MEMBER(data.templ.user), "User: {content}\n",
          "custom format: user turn, {content} = the prompt");
    t.add("data.template.assistant", CUSET_MEMBER(data.templ.assistant), "Assistant: {content}",
          "custom format: assistant turn, {content} = the response");
    t.add("data.template.end_of_turn", CUSET_MEMBER(data.templ.end_of_turn), "",
          "custom format: text after the response (trainable)");
    range(t.add("data.max_seq_len", CUSET_MEMBER(data.max_seq_len), 2048,
                "tokens per sample after chat formatting"),
          8, 1 << 20);
    choices(t.add("data.truncation", CUSET_MEMBER(data.truncation), "truncate",
                  "longer samples: truncate the end, or drop the sample"),
            {"truncate", "drop"});
    t.add("data.packing", CUSET_MEMBER(data.packing), false,
          "pack several samples per row (no attention across samples)");
    t.add("data.group_by_length", CUSET_MEMBER(data.group_by_length), false,
          "batch samples of similar length to reduce padding");
    t.add("data.shuffle", CUSET_MEMBER(data.shuffle), true, "shuffle by seed and epoch");
    bookkeeping(t.add("data.skip_invalid", CUSET_MEMBER(data.load.skip_invalid), false,
                      "count and skip malformed JSONL lines instead of stopping"));
    t.choose("data.invalid_utf8", CUSET_MEMBER(data.load.replace_invalid_utf8), false, {{"error", false}, {"replace", true}},
             "invalid UTF-8 in a sample: error, or replace with U+FFFD");
    bookkeeping(t.add("data.cache_dir", CUSET_MEMBER(data.tokenize.cache_dir), ".cache/tokenized",
                      "tokenised-data cache folder; empty = no cache"));
    bookkeeping(t.add("data.against", CUSET_MEMBER(data.against), "",
                      "data build: evaluation set (JSONL, e.g. CUDABench-Set.jsonl) whose long n-grams a kept "
                      "sample must not share; empty = none"));
}

// objective.* (docs/method.md)
void add_objective_keys(Table& t) {
    choices(t.add("objective.method", CUSET_MEMBER(objective.method), "cuset",
                  "training objective"),
            {"cuset", "sft", "dft", "focal", "eaft", "asft", "rho1", "grpo"});
    t.choose("objective.confidence.source", CUSET_MEMBER(objective.loss.cached_confidence), false,
             {{"online", false}, {"cached", true}}, "online = from the training forward pass; cached = from a score file");
    t.add("objective.confidence.cache", CUSET_MEMBER(objective.confidence_cache), "",
          "score file written by `cuset-train score` (source: cached)");
    t.add("objective.mask.confidence", CUSET_MEMBER(objective.loss.mask_confidence), true,
          "keep tokens with confidence >= threshold");
    t.add("objective.mask.sensitivity", CUSET_MEMBER(objective.loss.mask_sensitivity), true,
          "keep CUDA-sensitive tokens");
    range(t.add("objective.mask.drop_weight", CUSET_MEMBER(objective.loss.drop_weight), 0.0,
                "weight of dropped tokens (0 = hard mask)"),
          0.0, 1.0);
    t.choose("objective.mask.threshold.mode", CUSET_MEMBER(objective.loss.threshold_mode), ThresholdMode::kSampleQuantile,
             {{"sample_quantile", ThresholdMode::kSampleQuantile}, {"fixed", ThresholdMode::kFixed},
              {"batch_quantile", ThresholdMode::kBatchQuantile}},
             "how the confidence threshold is set");
    range(t.add("objective.mask.threshold.q", CUSET_MEMBER(objective.loss.q), 0.2,
                "quantile for sample_quantile / batch_quantile"),
          0.0, 1.0);
    range(t.add("objective.mask.threshold.value", CUSET_MEMBER(objective.loss.threshold_value), 0.5, "threshold for mode fixed"),
          0.0, 1.0);
    t.add("objective.region.enabled", CUSET_MEMBER(objective.loss.region_enabled), true,
          "weight samples by their hardest region");
    range(t.add("objective.region.window", CUSET_MEMBER(objective.loss.window), 256,
                "valid tokens per region window"),
          1, 1 << 24);
    range(t.add("objective.region.alpha", CUSET_MEMBER(objective.loss.alpha), 1.0,
                "w = 1 + alpha * difficulty"),
          0.0, 1e6);
    range(t.add("objective.focal.gamma", CUSET_MEMBER(objective.loss.focal_gamma), 2.0,
                "focal loss exponent"),
          0.0, 100.0);
    range(t.add("objective.eaft.alpha", CUSET_MEMBER(objective.loss.eaft_alpha), 1.0,
                "eaft: weight (H_topk / ln k)^alpha"),
          0.0, 100.0);
    range(t.add("objective.eaft.k", CUSET_MEMBER(objective.loss.eaft_k), 20,
                "eaft: top-k probabilities whose entropy weighs a token"),
          2, 1 << 20);
    range(t.add("objective.asft.alpha", CUSET_MEMBER(objective.loss.asft_alpha), 0.1,
                "asft: weight of KL(pi_ref || pi_theta) added to the DFT loss"),
          0.0, 1e6);
    range(t.add("objective.rho1.keep_fraction", CUSET_MEMBER(objective.loss.rho1_keep_fraction), 0.6,
                "rho1: share of the step's tokens kept (highest l_theta - l_ref)"),
          1e-6, 1.0);
    t.add("objective.rho1.reference_scores", CUSET_MEMBER(objective.rho1_reference_scores), "",
          "rho1: score file of the reference model (`cuset-train score`) giving l_ref");
    // objective.grpo.* (docs/method.md, "GRPO"): TRL's GRPOConfig names where it has one.
    t.add("objective.grpo.tasks", CUSET_MEMBER(objective.grpo.tasks), "",
          "grpo: task file (CUDABench format) whose prompts are sampled");
    range(t.add("objective.grpo.tasks_per_step", CUSET_MEMBER(objective.grpo.tasks_per_step), 2,
                "grpo: prompts per optimizer step, over all ranks"),
          1, 1 << 20);
    range(t.add("objective.grpo.num_generations", CUSET_MEMBER(objective.grpo.num_generations), 4,
                "grpo: completions per prompt (G)"),
          2, 1 << 16);
    range(t.add("objective.grpo.max_completion_length", CUSET_MEMBER(objective.grpo.max_completion_length), 256, "grpo: new tokens per completion at most"),
          1, 1 << 20);
    range(t.add("objective.grpo.temperature", CUSET_MEMBER(objective.grpo.temperature), 1.0,
                "grpo: sampling temperature (log-probabilities are scored at it)"),
          1e-3, 100.0);
    range(t.add("objective.grpo.top_p", CUSET_MEMBER(objective.grpo.top_p), 1.0,
                "grpo: nucleus sampling (1 = off)"),
          1e-6, 1.0);
    range(t.add("objective.grpo.top_k", CUSET_MEMBER(objective.grpo.top_k), 0, "grpo: top-k sampling (0 = off)"),
          0, 1 << 24);
    choices(t.add("objective.grpo.loss_type", CUSET_MEMBER(objective.grpo.loss_type), "dapo",
                  "grpo: loss aggregation, as TRL's"),
            grpo_loss_type_names());
    range(t.add("objective.grpo.beta", CUSET_MEMBER(objective.grpo.beta), 0.0,
                "grpo: KL coefficient to the reference model (0 = none loaded)"),
          0.0, 1e6);
    range(t.add("objective.grpo.epsilon", CUSET_MEMBER(objective.grpo.epsilon), 0.2,
                "grpo: lower clip of the importance ratio (1 - epsilon)"),
          0.0, 1.0);
    range(t.add("objective.grpo.epsilon_high", CUSET_MEMBER(objective.grpo.epsilon_high), 0.0,
                "grpo: upper clip (1 + epsilon_high); 0 = epsilon"),
          0.0, 1e6);
    range(t.add("objective.grpo.delta", CUSET_MEMBER(objective.grpo.delta), 0.0,
                "grpo: two-sided clipping, the ratio capped at delta in the unclipped term (0 = off; TRL recommends > 1 + epsilon)"),
          0.0, 1e6);
    choices(t.add("objective.grpo.importance_sampling_level", CUSET_MEMBER(objective.grpo.importance_sampling_level),
                  "token", "grpo: one importance ratio per token, or per completion (GSPO's; luspo's)"),
            {"token", "sequence"});
    range(t.add("objective.grpo.sapo_temperature_pos", CUSET_MEMBER(objective.grpo.sapo_temperature_pos), 1.0,
                "grpo: sapo's gate temperature for tokens with a positive advantage"),
          1e-6, 1e6);
    range(t.add("objective.grpo.sapo_temperature_neg", CUSET_MEMBER(objective.grpo.sapo_temperature_neg), 1.05,
                "grpo: sapo's gate temperature for the others"),
          1e-6, 1e6);
    choices(t.add("objective.grpo.scale_rewards", CUSET_MEMBER(objective.grpo.scale_rewards), "group",
                  "grpo: advantages divided by the group's or the batch's reward std, or not"),
            {"group", "batch", "none"});
    choices(t.add("objective.grpo.judge", CUSET_MEMBER(objective.grpo.judge), "compile",
                  "grpo: the judge of the rewards (its tools and limits are eval.*)"),
            {"compile", "emulate", "gpu", "auto"});
    t.add("objective.grpo.system_prompt", CUSET_MEMBER(objective.grpo.system_prompt), "",
          "grpo: the prompts' system message; empty = CUDABench's, the one eval sends");
    range(t.add("objective.grpo.num_iterations", CUSET_MEMBER(objective.grpo.num_iterations), 1,
                "grpo: optimizer steps taken on one generation batch (the importance ratio is to the policy that sampled)"),
          1, 1 << 16);
    t.add("objective.grpo.mask_truncated_completions", CUSET_MEMBER(objective.grpo.mask_truncated_completions), false,
          "grpo: completions cut at max_completion_length are left out of the loss (their rewards still count)");
    t.add("objective.grpo.judge_while_sampling", CUSET_MEMBER(objective.grpo.judge_while_sampling), true,
          "grpo: judge a task's completions as soon as its group has finished, while the other groups are still "
          "decoding (the same rewards; false = judge after the sampling)");
    range(t.add("objective.grpo.turns", CUSET_MEMBER(objective.grpo.turns), 1,
                "grpo: answers per trajectory at most: a failed program's verdict goes back as the next user turn "
                "(1 = single-turn GRPO)"),
          1, 16);
    range(t.add("objective.grpo.turn_discount", CUSET_MEMBER(objective.grpo.turn_discount), 1.0,
                "grpo, turns > 1: a turn's return is its reward plus this times the next turn's return"),
          0.0, 1.0);
    choices(t.add("objective.grpo.turn_advantage", CUSET_MEMBER(objective.grpo.turn_advantage), "group",
                  "grpo, turns > 1: a turn's advantage among its group's trajectories at the same turn: group "
                  "(normalised, GRPO's) or loo (leave-one-out)"),
            {"group", "loo"});
    t.add("objective.grpo.turn_anchor", CUSET_MEMBER(objective.grpo.turn_anchor), false,
          "grpo, turns > 1: every turn's baseline is the group's first-turn returns");
    choices(t.add("objective.grpo.history", CUSET_MEMBER(objective.grpo.history), "full",
                  "grpo, turns > 1: earlier answers in the next prompt: full, or programs (their fenced program only)"),
            {"full", "programs"});
    t.add("objective.grpo.continue_after_pass", CUSET_MEMBER(objective.grpo.continue_after_pass), false,
          "grpo, turns > 1 with the speed-up reward: a passing answer's speed-up goes back as the next user turn, "
          "asking for a faster program");
    t.add("objective.grpo.retry_all_failed", CUSET_MEMBER(objective.grpo.retry_all_failed), false,
          "grpo: a task whose trajectories all failed with the same return (no signal) is taken again at the end "
          "of the pass, once per pass");
    choices(t.add("objective.grpo.token_weights", CUSET_MEMBER(objective.grpo.token_weights), "none",
                  "grpo: cuset weighs each completion token by CuSeT's mask and region weight (objective.mask.*, "
                  "objective.region.*) in the loss; none = every token alike"),
            {"none", "cuset"});
    range(t.add("objective.grpo.reward.format", CUSET_MEMBER(objective.grpo.reward.format), 0.1,
                "grpo: reward for a fenced program"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.compiles", CUSET_MEMBER(objective.grpo.reward.compiles), 0.2,
                "grpo: reward for a program that compiles"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.runs", CUSET_MEMBER(objective.grpo.reward.runs), 0.2,
                "grpo: reward for a program that exits 0 (gpu or emulate judges)"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.functional", CUSET_MEMBER(objective.grpo.reward.functional), 1.0,
                "grpo: reward for a program the checker passes (gpu or emulate judges)"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.speedup", CUSET_MEMBER(objective.grpo.reward.speedup), 0.0,
                "grpo: weight of a passing program's speed-up over the task's reference solution, "
                "min(speedup, speedup_cap), timed on the gpu judge; 0 = no timing runs"),
          0.0, 1e6);
    range(t.add("objective.grpo.reward.speedup_cap", CUSET_MEMBER(objective.grpo.reward.speedup_cap), 3.0,
                "grpo: the speed-up counted at most"),
          1e-3, 1e6);
    t.choose("objective.grpo.reward.unjudged", CUSET_MEMBER(objective.grpo.reward.unjudged), judge::UnjudgedReward::kFail,
             {{"fail", judge::UnjudgedReward::kFail}, {"skip", judge::UnjudgedReward::kSkip}},
             "grpo: a program the emulator could not judge (not rewritten or built, or not finished in time): "
             "fail = scored as a failed run (format + compiles), so a policy cannot escape a low reward by not "
             "ending; skip = left out of its group's baseline (no reward, no gradient)");
    range(t.add("objective.grpo.speedup.warmup", CUSET_MEMBER(objective.grpo.speedup_warmup), 1,
                "grpo: untimed runs of a program (and of the reference) before its timed runs"),
          0, 100);
    range(t.add("objective.grpo.speedup.repeats", CUSET_MEMBER(objective.grpo.speedup_repeats), 5,
                "grpo: timed runs of a program (and of the reference); the median counts"),
          1, 1000);
    bookkeeping(range(t.add("objective.chunk_size", CUSET_MEMBER(objective.loss.chunk_size), 1024,
                            "tokens per lm_head+loss chunk; 0 = full logits (more memory)"),
                      0, 1 << 24));
}

// tagger.*
void add_tagger_keys(Table& t) {
    t.add("tagger.device_functions", CUSET_MEMBER(tagger.device_functions), true,
          "tag __device__ function bodies as kernel code");
}

// train.*
void add_train_keys(Table& t) {
    bookkeeping(t.add("train.device", CUSET_MEMBER(train.device), "auto",
                      "auto | cpu | cuda | cuda:N"));
    range(t.add("train.seed", CUSET_MEMBER(train.seed), 1234, "seed for init, shuffling"),
          0, 9.007199254740992e15);
    // How a step is split is not part of the hash: the step's gradient does not depend on it
    // (docs/method.md sec. 4), so a run may resume with another split of the same global batch.
    bookkeeping(range(t.add("train.micro_batch_size", CUSET_MEMBER(train.micro_batch_size), 4,
                            "samples (or packed rows) per forward pass"),
                      1, 1 << 20));
    bookkeeping(range(t.add("train.grad_accum", CUSET_MEMBER(train.grad_accum), 1,
                            "micro-batches per optimizer step (global batch = micro x accum x ranks)"),
                      1, 1 << 20));
    range(t.add("train.epochs", CUSET_MEMBER(train.epochs), 1, "passes over the data"), 1,
          1 << 20);
    range(t.add("train.max_steps", CUSET_MEMBER(train.max_steps), 0,
                "optimizer steps; > 0 overrides epochs"),
          0, 9.007199254740992e15);
    range(t.add("train.lr", CUSET_MEMBER(train.lr), 2e-05, "peak learning rate"), 0.0, 10.0);
    choices(t.add("train.schedule", CUSET_MEMBER(train.schedule), "cosine",
                  "learning-rate schedule after warmup"),
            {"constant", "linear", "cosine"});
    range(t.add("train.warmup_steps", CUSET_MEMBER(train.warmup_steps), 0,
                "linear warmup steps (wins over warmup_ratio when > 0)"),
          0, 9.007199254740992e15);
    range(t.add("train.warmup_ratio", CUSET_MEMBER(train.warmup_ratio), 0.0,
                "warmup as a fraction of all steps"),
          0.0, 1.0);
    range(t.add("train.min_lr_ratio", CUSET_MEMBER(train.min_lr_ratio), 0.0,
                "final lr as a fraction of lr (linear / cosine)"),
          0.0, 1.0);
    range(t.add("train.weight_decay", CUSET_MEMBER(train.weight_decay), 0.0,
                "AdamW decoupled weight decay"),
          0.0, 10.0);
    t.add("train.decay_norm_and_bias", CUSET_MEMBER(train.decay_norm_and_bias), false,
          "also decay norm weights and biases");
    range(t.add("train.beta1", CUSET_MEMBER(train.beta1), 0.9, "AdamW beta1"), 0.0,
          0.999999);
    range(t.add("train.beta2", CUSET_MEMBER(train.beta2), 0.999, "AdamW beta2"), 0.0,
          0.999999999);
    range(t.add("train.eps", CUSET_MEMBER(train.eps), 1e-08, "AdamW epsilon"), 0.0, 1.0);
    range(t.add("train.grad_clip", CUSET_MEMBER(train.grad_clip), 1.0,
                "max global gradient norm; 0 = off"),
          0.0, kInf);
    bookkeeping(range(t.add("train.eval_every", CUSET_MEMBER(train.eval_every), 0,
                            "evaluate every N steps; 0 = before and after training only"),
                      0, 9.007199254740992e15));
    bookkeeping(range(t.add("train.max_bad_steps", CUSET_MEMBER(train.max_bad_steps), 5,
                            "non-finite steps in a row before the run stops (exit 4)"),
                      1, 1 << 20));
    bookkeeping(range(t.add("train.threads", CUSET_MEMBER(train.threads), 0,
                            "CPU intra-op threads; 0 = LibTorch default"),
                      0, 4096));
}

// checkpoint.*
void add_checkpoint_keys(Table& t) {
    bookkeeping(range(t.add("checkpoint.every", CUSET_MEMBER(checkpoint.every), 0,
                            "save every N steps; 0 = only at the end"),
                      0, 9.007199254740992e15));
    bookkeeping(range(t.add("checkpoint.keep_last", CUSET_MEMBER(checkpoint.keep_last), 2,
                            "checkpoints kept; older ones are deleted (0 = keep all)"),
                      0, 1 << 20));
    bookkeeping(range(t.add("checkpoint.max_shard_mb", CUSET_MEMBER(checkpoint.max_shard_mb), 4096,
                            "safetensors shard size limit in MiB"),
                      1, 1 << 24));
}

// log.*
void add_log_keys(Table& t) {
    bookkeeping(choices(t.add("log.level", CUSET_MEMBER(log.level), "info", "log level"),
                        {"trace", "debug", "info", "warn", "error"}));
    bookkeeping(range(t.add("log.every", CUSET_MEMBER(log.every), 1,
                            "log metrics every N steps"),
                      1, 1 << 30));
    bookkeeping(choices(t.add("log.progress", CUSET_MEMBER(log.progress), "auto",
                              "progress bar: auto = when stderr is a terminal"),
                        {"auto", "always", "never"}));
    bookkeeping(t.add("log.sample_weights", CUSET_MEMBER(log.sample_weights), false,
                      "log every sample's weight and hardest window (debug level)"));
    bookkeeping(t.add("log.tensorboard", CUSET_MEMBER(log.tensorboard), false,
                      "write TensorBoard event files (events.out.tfevents.*) in the run folder"));
}

// run.*
void add_run_keys(Table& t) {
    bookkeeping(t.add("run.output_dir", CUSET_MEMBER(run.output_dir), "runs",
                      "folder holding run folders"));
    bookkeeping(t.add("run.name", CUSET_MEMBER(run.name), "",
                      "run folder name; empty = the config file's stem"));
}

// analysis.* (docs/method.md sec. 7)
void add_analysis_keys(Table& t) {
    bookkeeping(range(t.add("analysis.window", CUSET_MEMBER(analysis.window), 64,
                            "valid tokens per low-confidence window"),
                      1, 1 << 24));
    bookkeeping(range(t.add("analysis.low_threshold", CUSET_MEMBER(analysis.low_threshold), 0.5,
                            "a window is low-confidence when its mean is below this"),
                      0.0, 1.0));
    bookkeeping(range(t.add("analysis.overlap", CUSET_MEMBER(analysis.overlap), 0.5,
                            "share of sensitive tokens for a window to count as sensitive"),
                      0.0, 1.0));
    bookkeeping(range(t.add("analysis.bins", CUSET_MEMBER(analysis.bins), 20,
                            "histogram bins"),
                      1, 10000));
}

// distributed.*
void add_distributed_keys(Table& t) {
    bookkeeping(choices(t.add("distributed.backend", CUSET_MEMBER(distributed.backend), "auto",
                              "auto = nccl on CUDA, gloo on CPU"),
                        {"auto", "nccl", "gloo"}));
    bookkeeping(range(t.add("distributed.timeout_s", CUSET_MEMBER(distributed.timeout_s), 300,
                            "collective timeout; a dead rank fails the others after this"),
                      1, 86400));
    bookkeeping(range(t.add("distributed.bucket_mb", CUSET_MEMBER(distributed.bucket_mb), 25.0,
                            "gradient all-reduce bucket size in MiB (fractions allowed)"),
                      1.0 / 1024, 65536.0));
    bookkeeping(range(t.add("distributed.zero_stage", CUSET_MEMBER(distributed.zero_stage), 0,
                            "ZeRO sharding over the ranks: 0 = full replicas, 1 = fp32 masters and AdamW moments "
                            "sharded, 2 = and gradients, 3 = and the weights (gathered per layer)"),
                      0, 3));
    bookkeeping(t.add("distributed.offload_optimizer", CUSET_MEMBER(distributed.offload_optimizer), false,
                      "ZeRO: keep the shard's fp32 masters and moments in CPU memory and run AdamW there"));
}

// eval.* (`cuset-train eval`, CUDABench; none of it changes what a model learns)
void add_eval_keys(Table& t) {
    bookkeeping(t.add("eval.python", CUSET_MEMBER(eval.python), "",
                      "Python that runs each task's gen.py and compare.py (numpy, torch as the tasks need); empty = "
                      "the project's .venv, else python3"));
    bookkeeping(t.add("eval.nvcc", CUSET_MEMBER(eval.nvcc), "nvcc", "CUDA compiler of the judged programs"));
    bookkeeping(t.add("eval.gpu_name", CUSET_MEMBER(eval.gpu_name), "NVIDIA GeForce RTX 4090",
                      "GPU named in the prompts; empty = each task's gpu field"));
    bookkeeping(range(t.add("eval.turns", CUSET_MEMBER(eval.turns), 1,
                            "attempts per sample: a failed program's verdict goes back as the next user turn, up to "
                            "this many turns (1 = no repair turns; eval --turns)"),
                      1, 64));
    bookkeeping(range(t.add("eval.jobs", CUSET_MEMBER(eval.jobs), 2, "samples judged at once"), 1, 1024));
    bookkeeping(range(t.add("eval.compile_timeout_s", CUSET_MEMBER(eval.compile_timeout_s), 60.0,
                            "nvcc limit per program (CUDABench: 60)"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.run_timeout_s", CUSET_MEMBER(eval.run_timeout_s), 60.0,
                            "run limit per program (CUDABench: 60)"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.gen_timeout_s", CUSET_MEMBER(eval.gen_timeout_s), 180.0,
                            "gen.py limit per task (CUDABench: 180)"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.compare_timeout_s", CUSET_MEMBER(eval.compare_timeout_s), 60.0,
                            "compare.py limit per program"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.emulate_timeout_s", CUSET_MEMBER(eval.emulate_timeout_s), 600.0,
                            "run limit per emulated program"),
                      0.1, 86400.0));
    bookkeeping(range(t.add("eval.kernelbench_max_input_elements", CUSET_MEMBER(eval.kernelbench_max_input_elements),
                            int64_t{1} << 18,
                            "emulated KernelBench problems whose inputs hold more elements run with their size "
                            "constants halved until they fit (0 = always as written)"),
                      0, int64_t{1} << 40));
    bookkeeping(t.add("eval.sandbox.enabled", CUSET_MEMBER(eval.contain), true,
                      "contain every judged command (namespaces, rlimits); `eval.sandbox: off` runs programs "
                      "unconfined as you"));
    bookkeeping(range(t.add("eval.sandbox.cpu_s", CUSET_MEMBER(eval.limits.cpu_s), 600.0,
                            "CPU seconds per contained process"),
                      1.0, 1e6));
    bookkeeping(range(t.add("eval.sandbox.memory_mb", CUSET_MEMBER(eval.limits.memory_mb), 8192,
                            "memory per contained command, MiB: all its processes' in a control group, else heap and private memory per process"),
                      16, 1 << 24));
    bookkeeping(range(t.add("eval.sandbox.file_mb", CUSET_MEMBER(eval.limits.file_mb), 4096,
                            "largest file a contained process writes, and its private /tmp, MiB"),
                      1, 1 << 24));
    bookkeeping(range(t.add("eval.sandbox.processes", CUSET_MEMBER(eval.limits.processes), 64,
                            "processes and threads of one sandbox at once"),
                      4, 1 << 20));
    bookkeeping(range(t.add("eval.sandbox.open_files", CUSET_MEMBER(eval.limits.open_files), 1024,
                            "open files per contained process"),
                      16, 1 << 20));
    bookkeeping(range(t.add("eval.sandbox.disk_mb", CUSET_MEMBER(eval.limits.disk_mb), 4096,
                            "what one judged stage may write: its work folder (measured), its /tmp and /dev/shm, MiB"),
                      1, 1 << 24));
    bookkeeping(t.add("eval.after_training", CUSET_MEMBER(eval.after_training), false,
                      "after training: CUDABench (eval.tasks) on the final checkpoint, figures into summary.json"));
    bookkeeping(t.add("eval.tasks", CUSET_MEMBER(eval.tasks), "", "CUDABench tasks file for eval.after_training"));
    bookkeeping(range(t.add("eval.level", CUSET_MEMBER(eval.level), 3, "eval.after_training: description level"), 1, 3));
    bookkeeping(range(t.add("eval.samples", CUSET_MEMBER(eval.samples), 3, "eval.after_training: samples per task (K)"),
                      1, 65536));
    bookkeeping(range(t.add("eval.limit", CUSET_MEMBER(eval.limit), 0, "eval.after_training: the first N tasks; 0 = all"),
                      0, 1 << 30));
    bookkeeping(choices(t.add("eval.judge", CUSET_MEMBER(eval.judge), "auto",
                              "eval.after_training: auto (gpu where present, else compile), gpu, emulate or compile"),
                        {"auto", "gpu", "emulate", "compile"}));
}

// generate.* (`cuset-train generate`; none of it changes what a model learns)
void add_generate_keys(Table& t) {
    bookkeeping(range(t.add("generate.max_new_tokens", CUSET_MEMBER(generate.max_new_tokens), 256,
                            "tokens generated per sample at most"),
                      1, 1 << 20));
    bookkeeping(range(t.add("generate.n", CUSET_MEMBER(generate.n), 1, "samples per prompt"), 1, 1 << 16));
    bookkeeping(range(t.add("generate.temperature", CUSET_MEMBER(generate.sampling.temperature), 0.0,
                            "softmax temperature; 0 = greedy"),
                      0.0, 100.0));
    bookkeeping(range(t.add("generate.top_k", CUSET_MEMBER(generate.sampling.top_k), 0,
                            "keep the k most likely tokens; 0 = off"),
                      0, 1 << 24));
    bookkeeping(range(t.add("generate.top_p", CUSET_MEMBER(generate.sampling.top_p), 1.0,
                            "nucleus: smallest set with probability >= top_p; 1 = off"),
                      0.0, 1.0));
    bookkeeping(range(t.add("generate.min_p", CUSET_MEMBER(generate.sampling.min_p), 0.0,
                            "drop tokens below min_p x the top probability; 0 = off"),
                      0.0, 1.0));
    bookkeeping(range(t.add("generate.repetition_penalty", CUSET_MEMBER(generate.sampling.repetition_penalty), 1.0,
                            "penalty on prompt and generated tokens (> 1 discourages); 1 = off"),
                      1e-6, 100.0));
    bookkeeping(range(t.add("generate.seed", CUSET_MEMBER(generate.seed), 1234,
                            "sampling seed; a sample's stream is (seed, prompt id, sample index)"),
                      0, 9.007199254740992e15));
    bookkeeping(range(t.add("generate.batch_size", CUSET_MEMBER(generate.batch_size), 8,
                            "sequences decoded together"),
                      1, 1 << 16));
    bookkeeping(t.add("generate.stop", CUSET_MEMBER(generate.stop), "",
                      "stop strings as a JSON array, e.g. '[\"\\n\\n\\n\"]'; empty = none"));
    bookkeeping(t.add("generate.thinking", CUSET_MEMBER(generate.thinking), false,
                      "Qwen3: leave the think block to the model (default: empty, thinking off)"));
    bookkeeping(t.add("generate.skip_invalid", CUSET_MEMBER(generate.skip_invalid), false,
                      "count and skip bad prompts (empty, too long, invalid) instead of stopping"));
    bookkeeping(choices(t.add("generate.backend", CUSET_MEMBER(generate.backend), "local",
                              "local: model.path on train.device; openai: a served model through the "
                              "OpenAI-compatible chat-completions API (vLLM, SGLang, llama.cpp's server)"),
                        {"local", "openai"}));
    bookkeeping(t.add("generate.url", CUSET_MEMBER(generate.server.url), "",
                      "openai: the API's base URL, e.g. http://127.0.0.1:8000/v1 (/chat/completions is appended)"));
    bookkeeping(t.add("generate.served_model", CUSET_MEMBER(generate.server.model), "",
                      "openai: the model's name on the server (the request's \"model\", e.g. vLLM's --served-model-name)"));
    bookkeeping(t.add("generate.api_key_env", CUSET_MEMBER(generate.server.api_key_env), "",
                      "openai: name of the environment variable holding the API key; empty = no key sent"));
    bookkeeping(range(t.add("generate.concurrency", CUSET_MEMBER(generate.server.concurrency), 8,
                            "openai: requests in flight"),
                      1, 4096));
    bookkeeping(range(t.add("generate.timeout_s", CUSET_MEMBER(generate.server.timeout_s), 600.0,
                            "openai: seconds one request may take"),
                      0.001, 1e6));
    bookkeeping(range(t.add("generate.retries", CUSET_MEMBER(generate.server.retries), 3,
                            "openai: further attempts, with exponential backoff, after a connection error, HTTP 429 or 5xx"),
                      0, 100));
}

// The schema: every section's keys, in the order they are printed.
ConfigSchema make_schema() {
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
    return t.schema;
}

#undef CUSET_MEMBER

// The cross-key rules, and the values a key's type cannot state (a device name, JSON texts).
void config_validate(const Config& c) {
    auto need = [](bool ok, const std::string& msg) {
        if (!ok) throw UsageError("config error: " + msg);
    };
    need(!c.model.path.empty(), "key 'model.path' must be set");
    // run.name is one folder below run.output_dir, never a path out of it.
    const std::string& rn = c.run.name;
    need(rn.find('/') == std::string::npos && rn.find('\\') == std::string::npos && rn != "." && rn != ".." &&
             rn.find('\0') == std::string::npos,
         "key 'run.name' must be a plain folder name (no '/', not '.' or '..'), got '" +
             quote_bounded(rn) + "'");
    const bool grpo = c.objective.method == "grpo";
    need(grpo || !c.data.train.empty(), "key 'data.train' must be set");  // grpo samples prompts from its task file
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
    need(!(c.objective.loss.cached_confidence && c.objective.confidence_cache.empty()),
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
        for (const std::string& m : lora_target_list(c.model.lora.target_modules)) {
            need(kTargets.count(m) == 1, "key 'model.lora.target_modules' names '" + quote_bounded(m) +
                                             "'; expected a comma-separated subset of q_proj,k_proj,"
                                             "v_proj,o_proj,gate_proj,up_proj,down_proj");
            need(seen.insert(m).second, "key 'model.lora.target_modules' names '" + quote_bounded(m) + "' twice");
        }
        need(!seen.empty(), "key 'model.lora.target_modules' is empty");
    }
    const std::string& stop_text = c.generate.stop;
    if (!stop_text.empty()) {
        need(json_depth_problem(stop_text).empty(),
             "key 'generate.stop' expects a JSON array of strings, got one nested deeper than " +
                 std::to_string(kJsonMaxDepth) + " levels");
        nlohmann::json stop;
        try {
            stop = json_parse(stop_text, "key 'generate.stop'", ExitCode::kUsage);
        } catch (const UsageError&) {
            need(false, "key 'generate.stop' expects a JSON array of strings, got '" + quote_bounded(stop_text) + "'");
        }
        need(stop.is_array(), "key 'generate.stop' expects a JSON array of strings, got '" + quote_bounded(stop_text) + "'");
        for (const auto& s : stop)
            need(s.is_string() && !s.get<std::string>().empty(),
                 "key 'generate.stop' expects non-empty strings, got " + quote_bounded(s.dump()));
    }
    if (c.generate.backend == "openai") {
        const ServerSettings& server = c.generate.server;
        need(!server.url.empty(),
             "key 'generate.url' must name the server's API (e.g. http://127.0.0.1:8000/v1) when 'generate.backend' is openai");
        need(server.url.rfind("http://", 0) == 0 || server.url.rfind("https://", 0) == 0,
             "key 'generate.url' must be an http:// or https:// URL, got '" + quote_bounded(server.url) + "'");
        need(!server.model.empty(),
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

Config::Config() {
    config_schema().set_defaults(this);
}

const ConfigSchema& config_schema() {
    static const ConfigSchema schema = make_schema();
    return schema;
}

Config config_load(const std::string& file, const std::vector<Override>& overrides) {
    Config cfg;
    cfg.source_file = file;
    config_schema().read(&cfg, file, overrides);
    config_validate(cfg);
    return cfg;
}

std::string config_to_yaml(const Config& cfg) {
    return config_schema().to_yaml(&cfg);
}

std::string config_hash(const Config& cfg) {
    return config_schema().hash(&cfg);
}

std::vector<std::string> config_keys() {
    std::vector<std::string> keys;
    for (const ConfigKey& k : config_schema().keys()) keys.push_back(k.path);
    return keys;
}

std::string config_closest_key(const std::string& key) {
    return config_schema().closest_key(key);
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

std::vector<std::string> lora_target_list(const std::string& target_modules) {
    std::vector<std::string> names;
    std::stringstream ss(target_modules);
    for (std::string m; std::getline(ss, m, ',');) {
        m.erase(0, m.find_first_not_of(" \t"));
        m.erase(m.find_last_not_of(" \t") + 1);
        names.push_back(m);
    }
    return names;
}

}  // namespace cuset
