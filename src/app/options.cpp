// The libraries' typed options from a run configuration (the application layer, app/options.h).
#include "cuset/core/json_io.h"
#include "cuset/app/options.h"

#include <sstream>

#include "cuset/core/error.h"
#include "cuset/eval/eval_run.h"

namespace cuset {

TaggerOptions tagger_options_from(const Config& cfg) {
    TaggerOptions o;
    o.device_functions = cfg.tagger.device_functions;
    return o;
}

ChatFormatOptions chat_format_options_from(const Config& cfg) {
    ChatFormatOptions o;
    o.format = cfg.data.chat_format;
    o.system_prompt = cfg.data.system_prompt;
    o.chat_template = cfg.data.chat_template;
    o.template_kwargs = json_parse<nlohmann::ordered_json>(cfg.data.chat_template_kwargs, "key 'data.chat_template_kwargs'", ExitCode::kUsage);  // an object: config_validate
    const TemplateKeys& t = cfg.data.templ;
    o.templ.prefix = t.prefix;
    o.templ.system = t.system;
    o.templ.user = t.user;
    o.templ.assistant = t.assistant;
    o.templ.end_of_turn = t.end_of_turn;
    return o;
}

DataLoadOptions data_load_options_from(const Config& cfg) {
    DataLoadOptions o;
    o.skip_invalid = cfg.data.skip_invalid;
    o.replace_invalid_utf8 = cfg.data.invalid_utf8 == "replace";
    return o;
}

TextOptions text_options_from(const Config& cfg, const std::string& model) {
    TextOptions o;
    if (model.empty()) {
        o.tokenizer = tokenizer_path_of(cfg);
    } else {
        Config c = cfg;
        c.model.path = model;
        o.tokenizer = tokenizer_path_of(c);
    }
    o.chat_format = chat_format_options_from(cfg);
    o.tagger = tagger_options_from(cfg);
    o.load = data_load_options_from(cfg);
    return o;
}

ObjectiveOptions objective_options_from(const Config& cfg) {
    const ObjectiveKeys& k = cfg.objective;
    ObjectiveOptions o;
    if (k.method == "sft") o.method = Method::kSft;
    else if (k.method == "cuset") o.method = Method::kCuset;
    else if (k.method == "dft") o.method = Method::kDft;
    else if (k.method == "focal") o.method = Method::kFocal;
    else if (k.method == "eaft") o.method = Method::kEaft;
    else if (k.method == "asft") o.method = Method::kAsft;
    else if (k.method == "rho1") o.method = Method::kRho1;
    else throw UsageError("objective.method: unknown method '" + k.method + "'");
    if (k.confidence_source == "online") o.cached_confidence = false;
    else if (k.confidence_source == "cached") o.cached_confidence = true;
    else throw UsageError("objective.confidence.source: unknown source '" + k.confidence_source + "'");
    o.mask_confidence = k.mask_confidence;
    o.mask_sensitivity = k.mask_sensitivity;
    o.drop_weight = k.drop_weight;
    if (k.threshold_mode == "sample_quantile") o.threshold_mode = ThresholdMode::kSampleQuantile;
    else if (k.threshold_mode == "fixed") o.threshold_mode = ThresholdMode::kFixed;
    else if (k.threshold_mode == "batch_quantile") o.threshold_mode = ThresholdMode::kBatchQuantile;
    else throw UsageError("objective.mask.threshold.mode: unknown mode '" + k.threshold_mode + "'");
    o.q = k.threshold_q;
    o.threshold_value = k.threshold_value;
    o.region_enabled = k.region_enabled;
    o.window = k.region_window;
    o.alpha = k.region_alpha;
    o.focal_gamma = k.focal_gamma;
    o.eaft_alpha = k.eaft_alpha;
    o.eaft_k = k.eaft_k;
    o.asft_alpha = k.asft_alpha;
    o.rho1_keep_fraction = k.rho1_keep_fraction;
    o.chunk_size = k.chunk_size;
    return o;
}

LoraOptions lora_options_from(const Config& cfg) {
    const LoraKeys& k = cfg.model.lora;
    LoraOptions o;
    o.r = k.r;
    o.alpha = k.alpha;
    o.dropout = k.dropout;
    o.rslora = k.rslora;
    o.init = k.init;
    o.target_modules.clear();
    std::stringstream ss(k.target_modules);
    for (std::string m; std::getline(ss, m, ',');) {
        m.erase(0, m.find_first_not_of(" \t"));
        m.erase(m.find_last_not_of(" \t") + 1);
        if (!m.empty()) o.target_modules.push_back(m);
    }
    return o;
}

Runtime runtime_from(const Config& cfg, int64_t world, int64_t local_rank) {
    return runtime_resolve(cfg.train.device, cfg.model.dtype, cfg.train.threads, world, local_rank);
}

Runtime runtime_planned_from(const Config& cfg) {
    return runtime_resolve(cfg.train.device, cfg.model.dtype, cfg.train.threads, 1, 0, /*check=*/false);
}

rl::GrpoStepsOptions grpo_steps_options_from(const Config& cfg) {
    const GrpoKeys& k = cfg.objective.grpo;
    rl::GrpoStepsOptions o;
    o.tasks_file = k.tasks;
    o.tasks_per_step = k.tasks_per_step;
    o.seed = static_cast<uint64_t>(cfg.train.seed);
    o.model_dir = cfg.model.path;
    o.generate.max_new_tokens = k.max_completion_length;
    o.generate.sampling.temperature = k.temperature;
    o.generate.sampling.top_p = k.top_p;
    o.generate.sampling.top_k = k.top_k;
    rl::RolloutOptions& ro = o.rollout;
    ro.level = static_cast<int>(cfg.eval.level);
    ro.gpu_name = cfg.eval.gpu_name;
    ro.thinking = cfg.generate.thinking;
    ro.system_prompt = k.system_prompt;
    ro.mask_truncated = k.mask_truncated_completions;
    ro.judge_while_sampling = k.judge_while_sampling;
    o.num_iterations = k.num_iterations;
    if (k.token_weights == "cuset") {  // the CuSeT objective's own mask and region keys
        Config c = cfg;
        c.objective.method = "cuset";
        if (c.objective.confidence_source != "online")
            throw UsageError("config error: 'objective.grpo.token_weights' cuset takes the policy's own confidences: "
                             "objective.confidence.source must be online");
        if (c.objective.mask_confidence && c.objective.threshold_mode == "batch_quantile")
            throw UsageError("config error: 'objective.grpo.token_weights' cuset takes a per-completion or fixed "
                             "threshold: set objective.mask.threshold.mode to sample_quantile or fixed");
        o.token_weights.enabled = true;
        o.token_weights.cuset = objective_options_from(c);
        o.token_weights.tagger = tagger_options_from(cfg);
    }
    const eval::JudgeMode mode = eval::resolve_judge(k.judge, nullptr);
    ro.judge = judge_options_from(cfg, mode, "", /*keep_work=*/false);  // work folder: the run's (GrpoSteps)
    ro.rewards.format = k.reward_format;
    ro.rewards.compiles = k.reward_compiles;
    ro.rewards.runs = k.reward_runs;
    ro.rewards.functional = k.reward_functional;
    ro.rewards.speedup = k.reward_speedup;
    ro.rewards.speedup_cap = k.reward_speedup_cap;
    ro.rewards.unjudged = k.reward_unjudged == "skip" ? judge::UnjudgedReward::kSkip : judge::UnjudgedReward::kFail;
    judge::check_reward_weights(ro.rewards, "objective.grpo.reward");
    if (k.reward_speedup > 0) {
        if (mode != eval::JudgeMode::kGpu)
            throw UsageError(std::string("config error: 'objective.grpo.reward.speedup' times programs against their "
                                         "reference on a GPU, but the judge is ") +
                             judge::judge_mode_name(mode) +
                             ": set objective.grpo.judge to gpu (or auto on a GPU machine), or the weight to 0 (an "
                             "emulated or compile-only run's time says nothing about a GPU)");
        ro.judge.runner.speedup.enabled = true;
        ro.judge.runner.speedup.warmup = static_cast<int>(k.speedup_warmup);
        ro.judge.runner.speedup.repeats = static_cast<int>(k.speedup_repeats);
    }
    GrpoStepOptions& so = o.step;
    so.loss.loss_type = grpo_loss_type_from(k.loss_type, "objective.grpo.loss_type");
    so.loss.scale_rewards = reward_scaling_from(k.scale_rewards, "objective.grpo.scale_rewards");
    so.loss.beta = k.beta;
    so.loss.epsilon = k.epsilon;
    if (k.epsilon_high > 0) so.loss.epsilon_high = k.epsilon_high;
    so.loss.max_completion_length = k.max_completion_length;
    so.num_generations = k.num_generations;
    so.temperature = k.temperature;
    so.micro_batch = cfg.train.micro_batch_size;
    so.chunk_size = cfg.objective.chunk_size;
    return o;
}

std::string schedule_neutral_hash(Config cfg) {
    cfg.train.max_steps = 0;
    cfg.train.epochs = 1;
    return config_hash(cfg);
}

TrainOptions train_options_from(const Config& cfg, const Runtime& runtime) {
    TrainOptions o;
    o.run.dir = run_dir_of(cfg);
    o.run.config_yaml = config_to_yaml(cfg);
    o.run.config_hash = config_hash(cfg);
    o.run.schedule_hash = schedule_neutral_hash(cfg);
    o.run.schedule_hash_of = [](const std::string& file) { return schedule_neutral_hash(config_load(file, {})); };
    const TrainKeys& t = cfg.train;
    OptimizeOptions& op = o.train;
    op.seed = t.seed;
    op.micro_batch_size = t.micro_batch_size;
    op.grad_accum = t.grad_accum;
    op.epochs = t.epochs;
    op.max_steps = t.max_steps;
    op.lr = t.lr;
    op.schedule = t.schedule;
    op.warmup_steps = t.warmup_steps;
    op.warmup_ratio = t.warmup_ratio;
    op.min_lr_ratio = t.min_lr_ratio;
    op.weight_decay = t.weight_decay;
    op.decay_norm_and_bias = t.decay_norm_and_bias;
    op.beta1 = t.beta1;
    op.beta2 = t.beta2;
    op.eps = t.eps;
    op.grad_clip = t.grad_clip;
    op.eval_every = t.eval_every;
    op.max_bad_steps = t.max_bad_steps;
    const DataKeys& d = cfg.data;
    o.data.train = d.train;
    o.data.eval = d.eval;
    o.data.max_seq_len = d.max_seq_len;
    o.data.truncation = d.truncation;
    o.data.packing = d.packing;
    o.data.group_by_length = d.group_by_length;
    o.data.shuffle = d.shuffle;
    o.data.tokenize = tokenize_options_from(cfg);
    o.checkpoint.every = cfg.checkpoint.every;
    o.checkpoint.keep_last = cfg.checkpoint.keep_last;
    o.checkpoint.max_shard_mb = cfg.checkpoint.max_shard_mb;
    o.log.every = cfg.log.every;
    o.log.progress = cfg.log.progress;
    o.log.sample_weights = cfg.log.sample_weights;
    o.log.tensorboard = cfg.log.tensorboard;
    o.distributed.zero_stage = cfg.distributed.zero_stage;
    o.distributed.offload_optimizer = cfg.distributed.offload_optimizer;
    o.distributed.bucket_mb = cfg.distributed.bucket_mb;
    TrainModelOptions& m = o.model;
    m.path = cfg.model.path;
    m.dtype = cfg.model.dtype;
    m.activation_checkpointing = cfg.model.activation_checkpointing;
    m.lora = cfg.model.lora.enabled;
    m.adapter = cfg.model.lora.path;
    m.method = cfg.objective.method;
    m.confidence_cache = cfg.objective.confidence_cache;
    m.rho1_reference_scores = cfg.objective.rho1_reference_scores;
    m.tasks = cfg.objective.grpo.tasks;
    m.chat_format = cfg.data.chat_format;
    o.runtime = runtime;
    o.text = text_options_from(cfg);
    if (cfg.objective.method == "grpo") o.steps = std::make_shared<rl::GrpoSteps>(grpo_steps_options_from(cfg));
    else o.objective = objective_options_from(cfg);
    o.lora = lora_options_from(cfg);
    return o;
}

ProcessGroupOptions process_group_options_from(const Config& cfg) {
    ProcessGroupOptions o;
    o.backend = cfg.distributed.backend;
    o.timeout_s = cfg.distributed.timeout_s;
    o.bucket_mb = cfg.distributed.bucket_mb;
    return o;
}

TokenizeOptions tokenize_options_from(const Config& cfg) {
    TokenizeOptions o;
    o.cache_dir = cfg.data.cache_dir;
    o.progress = cfg.log.progress;
    return o;
}

DataShowOptions data_show_options_from(const Config& cfg, DataShowOptions o) {
    o.train = cfg.data.train;
    o.eval = cfg.data.eval;
    o.max_seq_len = cfg.data.max_seq_len;
    o.drop_too_long = cfg.data.truncation == "drop";
    return o;
}

namespace {

judge::SandboxLimits sandbox_limits_from(const Config& cfg) {
    const EvalSandboxKeys& k = cfg.eval.sandbox;
    return {k.cpu_s, k.memory_mb, k.file_mb, k.processes, k.open_files};
}

}  // namespace

DataCheckOptions data_check_options_from(const Config& cfg, DataCheckOptions o) {
    o.max_seq_len = cfg.data.max_seq_len;
    o.drop_too_long = cfg.data.truncation == "drop";
    o.contain = cfg.eval.sandbox.enabled;
    o.limits = sandbox_limits_from(cfg);
    return o;
}

ScoreSetup score_setup_from(const Config& cfg) {
    ScoreSetup o;
    o.model = cfg.model.path;
    o.tokenizer = cfg.model.tokenizer;
    o.adapter = cfg.model.lora.path;
    o.train = cfg.data.train;
    o.eval = cfg.data.eval;
    o.max_seq_len = cfg.data.max_seq_len;
    o.chunk_size = cfg.objective.chunk_size;
    o.micro_batch_size = cfg.train.micro_batch_size;
    o.run_dir = run_dir_of(cfg);
    o.tokenize = tokenize_options_from(cfg);
    return o;
}

AnalysisOptions analysis_options_from(const Config& cfg) {
    AnalysisOptions o;
    o.window = cfg.analysis.window;
    o.low_threshold = cfg.analysis.low_threshold;
    o.overlap = cfg.analysis.overlap;
    o.bins = cfg.analysis.bins;
    return o;
}

GenerateRequest generate_request_from(const Config& cfg, GenerateRequest o) {
    if (o.model.empty()) o.model = cfg.model.path;
    o.adapter = cfg.model.lora.path;
    o.tokenizer = cfg.model.tokenizer;
    const GenerateKeys& g = cfg.generate;
    GenerateSettings& s = o.settings;
    s.max_new_tokens = g.max_new_tokens;
    s.n = g.n;
    s.sampling.temperature = g.temperature;
    s.sampling.top_k = g.top_k;
    s.sampling.top_p = g.top_p;
    s.sampling.min_p = g.min_p;
    s.sampling.repetition_penalty = g.repetition_penalty;
    s.seed = g.seed;
    s.batch_size = g.batch_size;
    s.stop = g.stop;
    s.thinking = g.thinking;
    s.skip_invalid = g.skip_invalid;
    s.progress = cfg.log.progress;
    s.backend = g.backend;
    s.server.url = g.url;
    s.server.model = g.served_model;
    s.server.api_key_env = g.api_key_env;
    s.server.concurrency = g.concurrency;
    s.server.timeout_s = g.timeout_s;
    s.server.retries = g.retries;
    return o;
}

eval::JudgeSettings judge_settings_from(const Config& cfg) {
    const EvalKeys& e = cfg.eval;
    eval::JudgeSettings o;
    o.nvcc = e.nvcc;
    o.python = e.python;
    o.jobs = static_cast<int>(e.jobs);
    o.compile_timeout_s = e.compile_timeout_s;
    o.run_timeout_s = e.run_timeout_s;
    o.gen_timeout_s = e.gen_timeout_s;
    o.compare_timeout_s = e.compare_timeout_s;
    o.emulate_timeout_s = e.emulate_timeout_s;
    o.contain = e.sandbox.enabled;
    o.limits = sandbox_limits_from(cfg);
    return o;
}

eval::JudgeOptions judge_options_from(const Config& cfg, eval::JudgeMode mode, const std::string& work_dir,
                                      bool keep_work) {
    return eval::judge_options_for(judge_settings_from(cfg), mode, work_dir, keep_work);
}

eval::EvalRequest eval_request_from(const Config& cfg, eval::EvalRequest o) {
    o.run_dir = run_dir_of(cfg);
    o.gpu_name = cfg.eval.gpu_name;
    o.progress = cfg.log.progress;
    o.generate = generate_request_from(cfg, GenerateRequest{});
    o.judge_settings = judge_settings_from(cfg);
    return o;
}

}  // namespace cuset
