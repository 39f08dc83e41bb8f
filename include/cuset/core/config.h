// The typed run configuration: one schema with defaults, read from YAML and `--set` overrides.
// Every key is declared once in src/core/config.cpp (path, type, range, help); parsing, validation,
// printing and error messages all come from that table. No module reads YAML itself.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cuset {

// LoRA adapters (PEFT's semantics and file format; model/lora.h): key path model.lora.*.
struct LoraKeys {
    bool enabled = false;
    int64_t r = 16;
    double alpha = 32.0;    // scale alpha / r (alpha / sqrt(r) with rslora)
    double dropout = 0.0;   // on the adapter's input only
    // Comma-separated subset of q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj.
    std::string target_modules = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
    bool rslora = false;
    std::string init = "kaiming";  // kaiming (PEFT's default) | gaussian
    std::string path;              // start from this adapter folder (adapter_config.json); empty = new
};

struct ModelConfigKeys {
    std::string path = "data/tiny-coder";  // Hugging Face model folder
    std::string tokenizer;                 // tokenizer folder or file; empty = model.path
    std::string dtype = "auto";            // auto | float32 | bfloat16 | float16
    bool activation_checkpointing = false;
    LoraKeys lora;                         // key path model.lora.*
};

struct TemplateKeys {
    // User chat template (`data.chat_format: custom`); `{content}` is replaced by the text.
    std::string prefix;                         // once at the start (e.g. a BOS piece)
    std::string system = "{content}\n";
    std::string user = "User: {content}\n";
    std::string assistant = "Assistant: {content}";
    std::string end_of_turn;                    // appended after the response, trainable
};

struct DataKeys {
    std::string train = "data/cuda-sft/train.jsonl";
    std::string eval = "data/cuda-sft/eval.jsonl";  // empty = no evaluation
    std::string chat_format = "auto";  // auto | template | chatml | qwen3 | deepseek-coder | seed-coder | plain | custom
    std::string chat_template;         // template: a .jinja (or JSON with chat_template) file; "" = the model's own
    std::string chat_template_kwargs = "{}";  // template: JSON object of extra template variables
    std::string system_prompt;         // used when a sample has no system message
    TemplateKeys templ;                // key path: data.template.*
    int64_t max_seq_len = 2048;
    std::string truncation = "truncate";  // truncate | drop
    bool packing = false;
    bool group_by_length = false;
    bool shuffle = true;
    bool skip_invalid = false;
    std::string invalid_utf8 = "error";  // error | replace
    std::string cache_dir = ".cache/tokenized";  // tokenised-data cache; empty = off
    std::string against;  // evaluation set (JSONL) `data build` decontaminates its kept samples against; empty = none
};

// objective.grpo.*: reinforcement learning on the judge (objective.method: grpo). Names follow
// TRL's GRPOConfig where it has one; the judge's tools and limits are eval.*'s.
struct GrpoKeys {
    std::string tasks;                 // task file (CUDABench format) whose prompts are sampled
    int64_t tasks_per_step = 2;        // prompts per optimizer step, over all ranks
    int64_t num_generations = 4;       // G completions per prompt
    int64_t max_completion_length = 256;
    double temperature = 1.0;
    double top_p = 1.0;
    int64_t top_k = 0;
    std::string loss_type = "dapo";    // grpo | bnpo | dr_grpo | dapo
    double beta = 0.0;                 // KL coefficient (0 = no reference model)
    double epsilon = 0.2;
    double epsilon_high = 0.0;         // 0 = epsilon
    std::string scale_rewards = "group";  // group | batch | none
    std::string judge = "compile";     // compile | emulate | gpu | auto
    std::string system_prompt;         // the prompts' system message ("" = CUDABench's, as eval sends)
    int64_t num_iterations = 1;        // optimizer steps per generation batch (TRL's mu)
    bool mask_truncated_completions = false;  // completions cut at max_completion_length leave the loss
    bool judge_while_sampling = true;  // a group is judged once complete, beside the decoding of the others
    std::string token_weights = "none";  // none | cuset: CuSeT's w_i m(i,t) (objective.mask.*, region.*) on the loss
    double reward_format = 0.1;
    double reward_compiles = 0.2;
    double reward_runs = 0.2;
    double reward_functional = 1.0;
    double reward_speedup = 0.0;       // a passing program's capped speed-up over the reference (gpu judge)
    double reward_speedup_cap = 3.0;
    std::string reward_unjudged = "fail";  // fail | skip: what an unjudged (emulator-limited) program scores
    int64_t speedup_warmup = 1;        // untimed runs before the timed ones
    int64_t speedup_repeats = 5;       // timed runs (the median counts)
};

struct ObjectiveKeys {
    std::string method = "cuset";  // cuset | sft | dft | focal | eaft | asft | rho1 | grpo
    std::string confidence_source = "online";  // online | cached
    std::string confidence_cache;              // score file for `cached`
    bool mask_confidence = true;
    bool mask_sensitivity = true;
    double drop_weight = 0.0;
    std::string threshold_mode = "sample_quantile";  // sample_quantile | fixed | batch_quantile
    double threshold_q = 0.2;
    double threshold_value = 0.5;
    bool region_enabled = true;
    int64_t region_window = 256;
    double region_alpha = 1.0;
    double focal_gamma = 2.0;
    double eaft_alpha = 1.0;
    int64_t eaft_k = 20;
    double asft_alpha = 0.1;
    double rho1_keep_fraction = 0.6;
    std::string rho1_reference_scores;  // score file of the reference model (rho1)
    int64_t chunk_size = 1024;  // tokens per lm_head/loss chunk; 0 = full logits (reference)
    GrpoKeys grpo;
};

struct TaggerKeys {
    bool device_functions = true;
};

struct TrainKeys {
    std::string device = "auto";  // auto | cpu | cuda | cuda:N
    int64_t seed = 1234;
    int64_t micro_batch_size = 4;
    int64_t grad_accum = 1;
    int64_t epochs = 1;
    int64_t max_steps = 0;  // > 0 overrides epochs
    double lr = 2e-5;
    std::string schedule = "cosine";  // constant | linear | cosine
    int64_t warmup_steps = 0;
    double warmup_ratio = 0.0;
    double min_lr_ratio = 0.0;
    double weight_decay = 0.0;
    bool decay_norm_and_bias = false;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double grad_clip = 1.0;  // 0 = off
    int64_t eval_every = 0;  // steps; 0 = only before and after training
    int64_t max_bad_steps = 5;
    int64_t threads = 0;  // intra-op CPU threads; 0 = LibTorch default
};

struct CheckpointKeys {
    int64_t every = 0;  // steps; 0 = only at the end
    int64_t keep_last = 2;
    int64_t max_shard_mb = 4096;
};

struct LogKeys {
    std::string level = "info";  // trace | debug | info | warn | error
    int64_t every = 1;
    std::string progress = "auto";  // auto | always | never
    bool sample_weights = false;   // per-sample weight and hardest window in the log (debug)
    bool tensorboard = false;      // TensorBoard event files in the run folder (rank 0)
};

struct RunKeys {
    std::string output_dir = "runs";
    std::string name;  // empty = the config file's stem
};

struct AnalysisKeys {
    int64_t window = 64;
    double low_threshold = 0.5;
    double overlap = 0.5;
    int64_t bins = 20;
};

struct DistributedKeys {
    std::string backend = "auto";  // auto | nccl | gloo
    int64_t timeout_s = 300;
    double bucket_mb = 25.0;
    int64_t zero_stage = 0;          // 0 replicas | 1 optimizer state | 2 + gradients | 3 + weights sharded
    bool offload_optimizer = false;  // masters, moments and the update on the CPU (ZeRO stages 1-3)
};

// `cuset-train eval` (CUDABench): the judge's tools and limits, the prompts' GPU label.
struct EvalSandboxKeys {
    bool enabled = true;        // false (`eval.sandbox: off`): programs run unconfined, as the user
    double cpu_s = 600;         // CPU seconds per process
    int64_t memory_mb = 8192;   // heap and private writable memory per process
    int64_t file_mb = 4096;     // largest file a process may write; also the private /tmp's size
    int64_t processes = 64;     // processes and threads of the sandbox at once
    int64_t open_files = 1024;  // open files per process
};

struct EvalKeys {
    std::string python;                                 // runs gen.py and compare.py; "" = the project's .venv, else python3
    std::string nvcc = "nvcc";
    std::string gpu_name = "NVIDIA GeForce RTX 4090";   // CUDABench's default label; "" = the task's
    int64_t jobs = 2;                                   // samples judged at once
    double compile_timeout_s = 60;                      // CUDABench's
    double run_timeout_s = 60;                          // CUDABench's
    double gen_timeout_s = 180;                         // CUDABench's, for gen.py
    double compare_timeout_s = 60;
    double emulate_timeout_s = 600;                     // an emulated run
    EvalSandboxKeys sandbox;
    // eval.after_training: CUDABench on the final checkpoint, its figures in summary.json.
    bool after_training = false;
    std::string tasks;                                  // CUDABench-Set.jsonl (required by after_training)
    int64_t level = 3;                                  // description level 1-3 (CUDABench's default 3)
    int64_t samples = 3;                                // K samples per task
    int64_t limit = 0;                                  // the first N tasks; 0 = all
    std::string judge = "auto";                         // auto (gpu where present, else compile) | gpu | emulate | compile
};

// `cuset-train generate`: sampling follows transformers' generate() (temperature 0 = greedy).
struct GenerateKeys {
    int64_t max_new_tokens = 256;
    int64_t n = 1;                    // samples per prompt
    double temperature = 0.0;         // 0 = greedy; > 0 samples
    int64_t top_k = 0;                // 0 = off
    double top_p = 1.0;               // 1 = off
    double min_p = 0.0;               // 0 = off
    double repetition_penalty = 1.0;  // 1 = off; over prompt + generated ids
    int64_t seed = 1234;              // each sample's stream is seeded from (seed, prompt id, sample index)
    int64_t batch_size = 8;           // sequences decoded together
    std::string stop;                 // JSON array of stop strings, e.g. ["\n\n\n"]; "" = none
    bool thinking = false;            // Qwen3: let the model write its think block
    bool skip_invalid = false;        // count and skip bad prompts instead of stopping
    // Where the model runs: local (model.path on train.device) or openai (a server speaking the
    // OpenAI-compatible chat-completions API: vLLM, SGLang, llama.cpp's server).
    std::string backend = "local";
    std::string url;                  // openai: the API's base, e.g. http://127.0.0.1:8000/v1
    std::string served_model;         // openai: the name the server knows the model by (the request's "model")
    std::string api_key_env;          // openai: environment variable holding the API key; "" = none sent
    int64_t concurrency = 8;          // openai: requests in flight
    double timeout_s = 600;           // openai: seconds per request
    int64_t retries = 3;              // openai: further attempts on connection errors, HTTP 429 and 5xx
};

struct Config {
    ModelConfigKeys model;
    DataKeys data;
    ObjectiveKeys objective;
    TaggerKeys tagger;
    TrainKeys train;
    CheckpointKeys checkpoint;
    LogKeys log;
    RunKeys run;
    AnalysisKeys analysis;
    DistributedKeys distributed;
    EvalKeys eval;
    GenerateKeys generate;

    std::string source_file;  // the YAML file it came from ("" = defaults only)
};

// One `--set key.path=value` override, applied after the file.
struct Override {
    std::string key;
    std::string value;
};

// Loads `file` (may be empty: defaults), applies overrides in order, validates.
// Throws UsageError with file:line:column and the key path on any problem.
Config config_load(const std::string& file, const std::vector<Override>& overrides);

// Parses "a.b.c=value"; throws UsageError if there is no '='.
Override override_parse(const std::string& arg);

// Resolved configuration as YAML text (every key, in schema order).
std::string config_to_yaml(const Config& cfg);

// Stable hash of the keys that change what a model learns (excludes log/run/checkpoint
// bookkeeping), used to refuse resuming from an incompatible checkpoint.
std::string config_hash(const Config& cfg);

// Relative paths in the config resolve against the current directory (like the command line).
// The list of all key paths, in schema order (for help text and tests).
std::vector<std::string> config_keys();

// Closest valid key to `key` by edit distance ("" if none is reasonably close).
std::string config_closest_key(const std::string& key);

// The run folder of a configuration: run.output_dir / (run.name, or the config file's stem).
std::string run_dir_of(const Config& cfg);

// The tokenizer a configuration names: model.tokenizer, or model.path when that is empty.
std::string tokenizer_path_of(const Config& cfg);

// Checks a value against the schema's range for `key` (e.g. "objective.region.window"), for
// options built in code rather than read from a file: UsageError "config error: key '<key>' =
// <value> is out of range [lo, hi]" like a bad file value; an unknown key is a RuntimeFailure.
void config_check_range(const std::string& key, double value);

}  // namespace cuset
