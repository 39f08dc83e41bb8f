// The libraries' typed options from a run configuration (the application layer, app/options.h).
// A section that is a library's options is handed over as it is; the rest is copied here.
#include "cuset/app/options.h"

#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/eval/eval_run.h"

namespace cuset {

TaggerOptions tagger_options_from(const Config& cfg) {
    return cfg.tagger;
}

ChatFormatOptions chat_format_options_from(const Config& cfg) {
    ChatFormatOptions o;
    o.format = cfg.data.chat_format;
    o.system_prompt = cfg.data.system_prompt;
    o.chat_template = cfg.data.chat_template;
    o.template_kwargs = json_parse<nlohmann::ordered_json>(cfg.data.chat_template_kwargs, "key 'data.chat_template_kwargs'", ExitCode::kUsage);  // an object: config_validate
    o.templ = cfg.data.templ;
    return o;
}

DataLoadOptions data_load_options_from(const Config& cfg) {
    return cfg.data.load;
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
    ObjectiveOptions o = k.loss;
    const std::optional<Method> m = method_named(k.method);  // the table's names (train/method.h)
    if (!m) throw UsageError("objective.method: unknown method '" + k.method + "'");
    o.method = *m;
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
    for (const std::string& m : lora_target_list(k.target_modules))
        if (!m.empty()) o.target_modules.push_back(m);
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
        if (c.objective.loss.cached_confidence)
            throw UsageError("config error: 'objective.grpo.token_weights' cuset takes the policy's own confidences: "
                             "objective.confidence.source must be online");
        if (c.objective.loss.mask_confidence && c.objective.loss.threshold_mode == ThresholdMode::kBatchQuantile)
            throw UsageError("config error: 'objective.grpo.token_weights' cuset takes a per-completion or fixed "
                             "threshold: set objective.mask.threshold.mode to sample_quantile or fixed");
        o.token_weights.enabled = true;
        o.token_weights.cuset = objective_options_from(c);
        o.token_weights.tagger = tagger_options_from(cfg);
    }
    const eval::JudgeMode mode = eval::resolve_judge(k.judge, nullptr);
    ro.judge = judge_options_from(cfg, mode, "", /*keep_work=*/false);  // work folder: the run's (GrpoSteps)
    ro.rewards = k.reward;
    judge::check_reward_weights(ro.rewards, "objective.grpo.reward");
    if (k.reward.speedup > 0) {
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
    if (k.delta > 0) so.loss.delta = k.delta;
    so.loss.importance_sampling = importance_sampling_from(k.importance_sampling_level, "objective.grpo.importance_sampling_level");
    so.loss.sapo_temperature_pos = k.sapo_temperature_pos;
    so.loss.sapo_temperature_neg = k.sapo_temperature_neg;
    // TRL's advice on these pairs, given as TRL gives it (a warning: the run is what was asked).
    const bool per_sequence = so.loss.importance_sampling == ImportanceSampling::kSequence;
    if (so.loss.loss_type == GrpoLossType::kLuspo && !per_sequence)
        log_warn("objective.grpo.loss_type luspo is a sequence-level loss: set objective.grpo.importance_sampling_level "
                 "to sequence for the paper's setup");
    if (per_sequence && so.loss.loss_type != GrpoLossType::kGrpo && so.loss.loss_type != GrpoLossType::kSapo &&
        so.loss.loss_type != GrpoLossType::kLuspo)
        log_warn("objective.grpo.loss_type %s sums per-token terms, so with importance_sampling_level sequence each "
                 "completion weighs by its length; GSPO's setup is loss_type grpo",
                 grpo_loss_type_name(so.loss.loss_type));
    if (so.loss.loss_type == GrpoLossType::kCispo && !so.loss.epsilon_high)
        log_warn("objective.grpo.loss_type cispo caps the importance ratio at epsilon_high, which is unset (= epsilon, "
                 "%g): TRL recommends 5.0", so.loss.epsilon);
    so.loss.max_completion_length = k.max_completion_length;
    so.num_generations = k.num_generations;
    so.temperature = k.temperature;
    so.micro_batch = cfg.train.micro_batch_size;
    so.chunk_size = cfg.objective.loss.chunk_size;
    rl::MultiTurnOptions& mt = o.multi_turn;
    mt.turns = k.turns;
    mt.returns.discount = k.turn_discount;
    mt.returns.advantage = turn_advantage_parse(k.turn_advantage, "objective.grpo.turn_advantage");
    mt.returns.scale = so.loss.scale_rewards;
    mt.returns.anchor_first_turn = k.turn_anchor;
    mt.history = rl::turn_history_parse(k.history, "objective.grpo.history");
    mt.max_context = cfg.data.max_seq_len;
    mt.max_new_tokens = k.max_completion_length;
    o.retry_all_failed = k.retry_all_failed;
    if (k.continue_after_pass && (k.turns < 2 || k.reward.speedup <= 0))
        throw UsageError("config error: 'objective.grpo.continue_after_pass' asks a passing answer for a faster "
                         "program: it needs objective.grpo.turns above 1 and the speed-up reward "
                         "(objective.grpo.reward.speedup > 0, a gpu judge)");
    mt.continue_after_pass = k.continue_after_pass;
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
    o.train = cfg.train;
    o.data = cfg.data;
    o.data.tokenize = tokenize_options_from(cfg);
    o.checkpoint = cfg.checkpoint;
    o.log = cfg.log;
    o.distributed = cfg.distributed;
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
    o.cache_dir = cfg.data.tokenize.cache_dir;
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

DataCheckOptions data_check_options_from(const Config& cfg, DataCheckOptions o) {
    o.max_seq_len = cfg.data.max_seq_len;
    o.drop_too_long = cfg.data.truncation == "drop";
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
    o.chunk_size = cfg.objective.loss.chunk_size;
    o.micro_batch_size = cfg.train.micro_batch_size;
    o.run_dir = run_dir_of(cfg);
    o.tokenize = tokenize_options_from(cfg);
    return o;
}

AnalysisOptions analysis_options_from(const Config& cfg) {
    return cfg.analysis;
}

GenerateRequest generate_request_from(const Config& cfg, GenerateRequest o) {
    if (o.model.empty()) o.model = cfg.model.path;
    o.adapter = cfg.model.lora.path;
    o.tokenizer = cfg.model.tokenizer;
    o.settings = cfg.generate;
    o.settings.progress = cfg.log.progress;
    return o;
}

eval::JudgeSettings judge_settings_from(const Config& cfg) {
    return cfg.eval;
}

eval::JudgeOptions judge_options_from(const Config& cfg, eval::JudgeMode mode, const std::string& work_dir,
                                      bool keep_work) {
    return eval::judge_options_for(judge_settings_from(cfg), mode, work_dir, keep_work);
}

eval::EvalRequest eval_request_from(const Config& cfg, eval::EvalRequest o) {
    o.run_dir = run_dir_of(cfg);
    o.gpu_name = cfg.eval.gpu_name;
    o.turns = cfg.eval.turns;
    o.progress = cfg.log.progress;
    o.generate = generate_request_from(cfg, GenerateRequest{});
    o.judge_settings = judge_settings_from(cfg);
    return o;
}

}  // namespace cuset
