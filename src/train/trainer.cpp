// The training loop: set-up, steps with the objective's exact normalisation, evaluation,
// metrics.jsonl / summary.json, checkpoints, resume, signals.
#include "cuset/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>
#include <nlohmann/json.hpp>

#include "cuset/data/batching.h"
#include "cuset/train/checkpoint.h"
#include "cuset/data/dataset.h"
#include "cuset/model/device.h"
#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "cuset/train/objective.h"
#include "cuset/train/optim.h"
#include "cuset/train/distributed.h"  // dist_env_from_environment (the dry run's world size)
#include "cuset/train/memory_plan.h"
#include "cuset/train/model_card.h"
#include "cuset/train/zero.h"
#include "cuset/train/train_step.h"
#include "cuset/core/progress.h"
#include "cuset/core/signals.h"
#include "cuset/model/safetensors_torch.h"
#include "cuset/data/score_file.h"
#include "cuset/core/hash.h"
#include "cuset/core/tensorboard.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Waits for the GPU work of a step so that its time and peak memory are the step's own.
void torch_cuda_synchronize(c10::Device device) {
    at::Tensor probe = at::zeros({1}, at::TensorOptions().device(device));
    (void)probe.cpu();
}


// Seeds LibTorch's default generators (the CPU's and every GPU's) from (train.seed, rank), so
// that whatever draws from them (initialisation, dropout) is reproducible; a resume restores
// the saved state over this. SplitMix64 of seed and rank: ranks get unrelated streams.
void seed_generators(int64_t seed, int64_t rank) {
    uint64_t z = static_cast<uint64_t>(seed) + 0x9E3779B97F4A7C15ull * (static_cast<uint64_t>(rank) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    torch::manual_seed(z ^ (z >> 31));
}

// What stopped this rank: its own signal, or another rank's (the ranks agree on stopping).
std::string stop_cause() {
    return signals_received() != 0 ? "signal " + std::to_string(signals_received()) : std::string("a signal to another rank");
}

// Appended to a checkpoint that cannot be resumed: what the user can do instead.
constexpr const char* kResumeHint =
    " (resume from another checkpoint with --resume PATH, or start afresh with --run-name NAME)";

// NaN-safe JSON number (nlohmann writes NaN/inf as null, which is what we want in metrics).
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// The numbers of a metrics line as TensorBoard scalars: "<prefix>/<key>" at `step` (an eval
// line's "eval_loss" becomes "eval/loss"); nulls, booleans and the step itself are left out.
void tensorboard_line(TensorBoardWriter* tb, const json& m, const std::string& prefix, int64_t step) {
    if (!tb) return;
    for (auto it = m.begin(); it != m.end(); ++it) {
        if (it.key() == "step" || !it.value().is_number()) continue;
        std::string key = it.key();
        if (prefix == "eval" && key.rfind("eval_", 0) == 0) key = key.substr(5);
        tb->scalar(prefix + "/" + key, it.value().get<double>(), step);
    }
    tb->flush();
}

struct EvalResult {
    double loss = std::numeric_limits<double>::quiet_NaN();  // the objective's loss
    double ce = std::numeric_limits<double>::quiet_NaN();    // plain token-mean cross-entropy
    int64_t n_targets = 0;
};

// Rank 0's string on every rank (a checkpoint's temporary folder name), through a broadcast of
// its bytes.
std::string broadcast_string(const Comm& comm, const std::string& s) {
    constexpr int64_t kMax = 4096;
    if (s.size() >= static_cast<size_t>(kMax)) throw RuntimeFailure("broadcast_string: path longer than 4095 bytes");
    at::Tensor buf = at::zeros({kMax}, at::kByte);  // [kMax] uint8, NUL-terminated
    if (comm.is_main()) std::memcpy(buf.data_ptr<uint8_t>(), s.data(), s.size());
    comm.broadcast(buf, 0);
    return std::string(reinterpret_cast<const char*>(buf.data_ptr<uint8_t>()));
}

// A training step as the trainer reports it: the step itself plus its time and memory.
struct StepResult : TrainStepResult {
    double lr = 0.0;
    double seconds = 0.0;
    int64_t peak_bytes = -1;      // peak device memory allocated during the step (-1: CPU)
    json source_metrics;          // a StepSource's fields of the metrics line (null for SFT steps)
    std::string source_progress;  // and its text for the progress line
};

class Trainer {
public:
    Trainer(const TrainOptions& opts, const Comm& comm)
        : opts_(opts), comm_(comm), device_(c10::kCPU), steps_(opts.steps) {}

    int run();

private:
    void setup();
    void load_data();
    void build_model_and_optimizer();
    void plan_steps();
    void restore(const std::string& ckpt);
    void load_cached_confidences();
    std::vector<std::vector<float>> load_score_probs(const std::string& file, bool check_model, const char* what);
    StepResult step(const std::vector<Row>& rows);
    StepResult source_step();
    StepContext step_context();
    void account(const StepResult& r);
    EvalResult evaluate(const PreparedData& data);
    void eval_and_record(const char* when);
    void save_checkpoint();
    NamedTensors state_with_rng() const;
    void restore_rng_state(const OptimizerFiles& files);
    void log_step(const StepResult& r, double elapsed);
    void write_summary(double train_seconds);
    std::vector<Row> rows_for_epoch(int64_t epoch);

    TrainOptions opts_;
    Comm comm_;
    c10::Device device_;
    c10::ScalarType dtype_ = at::kFloat;
    std::string run_dir_;
    std::string resume_from_;
    TextPipeline pipe_;
    PreparedData train_, eval_;
    std::string data_hash_;
    Decoder model_ = nullptr;
    std::optional<LoraOptions> lora_;  // model.lora.enabled: the attached adapters' options
    std::unique_ptr<Objective> objective_;
    std::unique_ptr<Objective> eval_objective_;
    std::vector<std::vector<float>> cached_probs_;  // [sample][t] p(token t) from a score file
    std::vector<std::vector<float>> reference_probs_;  // rho1: [sample][t] p_ref(token t), reference score file
    Decoder reference_ = nullptr;  // asft, or a StepSource that needs one: frozen copy of the initial model
    std::shared_ptr<StepSource> steps_;  // opts_.steps: steps that make their own batches (null = SFT)
    int64_t train_n_samples_ = 0;
    std::unique_ptr<Optimizer> optim_;
    ScheduleOptions schedule_;
    OrderOptions order_;
    int64_t global_batch_ = 0;
    int64_t pad_id_ = 0;
    TrainerState state_;
    std::vector<int64_t> steps_in_epoch_;  // per planned epoch
    int64_t cached_epoch_ = -1;
    std::vector<Row> cached_rows_;
    ObjectiveStats run_stats_;  // over the whole run and every rank (merged from the steps')
    double tokens_per_s_sum_ = 0.0;
    int64_t tokens_per_s_n_ = 0;
    double last_loss_ = std::numeric_limits<double>::quiet_NaN();
    std::ofstream metrics_;
    std::unique_ptr<TensorBoardWriter> tb_;  // log.tensorboard, rank 0
    std::vector<std::pair<std::string, std::string>> file_hashes_;  // data files for the model card (hashed once)
    int64_t last_saved_step_ = -1;
};

void Trainer::setup() {
    run_dir_ = opts_.run.dir;
    // First undo interrupted writes (a complete checkpoint moved aside comes back), so that the
    // checkpoints below are what is really there.
    if (comm_.is_main()) checkpoint_remove_partial(run_dir_);
    comm_.barrier();
    const std::vector<std::string> unusable = checkpoint_unusable(run_dir_);
    auto unusable_list = [&] {
        std::string l;
        for (size_t i = 0; i < unusable.size() && i < 3; ++i) l += (i ? ", " : "") + unusable[i];
        return l + (unusable.size() > 3 ? ", ..." : "");
    };
    if (opts_.resume == "auto") {
        resume_from_ = checkpoint_latest(run_dir_);
        if (resume_from_.empty() && !unusable.empty())
            throw InputError("--resume auto: run folder '" + run_dir_ + "' holds " + unusable_list() +
                             " but no complete checkpoint (no trainer_state.json); resume from a complete "
                             "one with --resume PATH, or move it away, or start a new run with --run-name NAME");
        if (resume_from_.empty())
            log_info("--resume auto: no complete checkpoint in %s, starting a new run", run_dir_.c_str());
        for (const std::string& u : unusable)
            if (u > resume_from_)
                log_warn("--resume auto: skipping %s, newer than %s but not a complete checkpoint (no trainer_state.json)",
                         u.c_str(), resume_from_.c_str());
    } else if (!opts_.resume.empty()) {
        resume_from_ = opts_.resume;
        if (!fs::exists(fs::path(resume_from_) / "trainer_state.json"))
            throw InputError("--resume: '" + resume_from_ +
                             "' is not a complete checkpoint (no trainer_state.json); use a "
                             "checkpoint-<step> folder or --resume auto");
    } else if (!checkpoint_list(run_dir_).empty() || !unusable.empty()) {
        throw UsageError("run folder '" + run_dir_ +
                         "' already holds checkpoints: continue it with --resume auto, or start "
                         "a new run with --run-name NAME");
    }
    if (comm_.is_main()) {
        // The files the run writes into its folder are never one of its inputs (a data file kept
        // in the run folder as metrics.jsonl would be appended to, one named config.yaml replaced).
        const std::vector<std::string> inputs = {opts_.data.train, opts_.data.eval, opts_.model.confidence_cache,
                                                 opts_.model.rho1_reference_scores, opts_.model.tasks};
        for (const char* f : {"config.yaml", "train.log", "metrics.jsonl", "summary.json", "report.html", "rewards.jsonl"})
            refuse_output_equal_to_input((fs::path(run_dir_) / f).string(), inputs, "train");
    }
    if (comm_.is_main()) {
        std::error_code ec;
        fs::create_directories(run_dir_, ec);
        if (ec) throw RuntimeFailure("cannot create run folder '" + run_dir_ + "': " + ec.message());
        log_add_file((fs::path(run_dir_) / "train.log").string());
        file_write_atomic((fs::path(run_dir_) / "config.yaml").string(), opts_.run.config_yaml);
    }
    comm_.barrier();
    signals_install();
    runtime_use_threads(opts_.runtime);
    device_ = opts_.runtime.device;
    if (device_.is_cpu()) cpu_allocator_keep_pages();
    dtype_ = opts_.runtime.dtype;
    log_info("run %s | device %s | dtype %s | %d CPU threads | rank %lld of %lld", run_dir_.c_str(),
             device_.str().c_str(), dtype_name(dtype_).c_str(), at::get_num_threads(),
             (long long)comm_.rank, (long long)comm_.world);
}

void Trainer::load_data() {
    pipe_ = text_pipeline_from(opts_.text);
    log_info("tokenizer %s (%s, %lld tokens) | chat format %s", pipe_.tokenizer->source().c_str(),
             pipe_.tokenizer->backend().c_str(), (long long)pipe_.tokenizer->vocab_size(),
             pipe_.formatter->name().c_str());
    pad_id_ = pipe_.tokenizer->pad_id() >= 0 ? pipe_.tokenizer->pad_id()
              : pipe_.tokenizer->eos_id() >= 0 ? pipe_.tokenizer->eos_id() : 0;
    if (steps_) {  // its steps bring their own batches: no SFT data
        data_hash_ = steps_->data_hash();
        return;
    }
    PrepareOptions po{opts_.data.max_seq_len, opts_.data.truncation};
    TokenizedSplit train = dataset_tokenize(opts_.data.train, pipe_, opts_.data.tokenize, "train");
    data_hash_ = train.hash;
    train_n_samples_ = static_cast<int64_t>(train.samples.size());
    train_ = data_prepare(train.samples, po);
    log_info("train data %s: %lld samples, %lld tokens, %lld targets (%.1f%% sensitive); %lld truncated, %lld dropped (max_seq_len %lld, %s)",
             opts_.data.train.c_str(), (long long)train_.examples.size(), (long long)train_.n_tokens,
             (long long)train_.n_targets, 100.0 * train_.n_sensitive / std::max<int64_t>(1, train_.n_targets),
             (long long)train_.n_truncated, (long long)train_.n_dropped, (long long)opts_.data.max_seq_len,
             opts_.data.truncation.c_str());
    if (train_.examples.empty())
        throw InputError(opts_.data.train + ": no sample left to train on after formatting and truncation");
    if (!opts_.data.eval.empty()) {
        TokenizedSplit ev = dataset_tokenize(opts_.data.eval, pipe_, opts_.data.tokenize, "eval");
        eval_ = data_prepare(ev.samples, po);
        log_info("eval data %s: %lld samples, %lld targets", opts_.data.eval.c_str(),
                 (long long)eval_.examples.size(), (long long)eval_.n_targets);
    }
}

void Trainer::build_model_and_optimizer() {
    // A LoRA run loads its base from model.path, also on resume: its checkpoints hold the adapter.
    std::string src = resume_from_.empty() || opts_.model.lora ? opts_.model.path : resume_from_;
    try {
        model_ = model_load(src, dtype_, device_);
    } catch (const InputError& e) {
        if (resume_from_.empty()) throw;
        throw InputError(std::string(e.what()) + kResumeHint);
    }
    model_->set_activation_checkpointing(opts_.model.activation_checkpointing);
    if (opts_.model.lora) {
        // A new adapter (A from the seeded generator, B = 0), or model.lora.path's, or the
        // checkpoint's on resume; an existing adapter brings its own shape (r, alpha, targets).
        const std::string from = !resume_from_.empty() ? resume_from_ : opts_.model.adapter;
        lora_ = opts_.lora;
        try {
            if (!from.empty()) {
                LoraOptions file = lora_read_config(from);
                file.dropout = lora_->dropout;
                file.init = lora_->init;
                std::vector<std::string> a = file.target_modules, b = lora_->target_modules;
                std::sort(a.begin(), a.end());
                std::sort(b.begin(), b.end());
                if (file.r != lora_->r || file.alpha != lora_->alpha || file.rslora != lora_->rslora || a != b)
                    log_warn("adapter %s has r %lld, alpha %g%s: its shape is used, not model.lora.*'s", from.c_str(),
                             (long long)file.r, file.alpha, file.rslora ? ", rslora" : "");
                lora_ = file;
            }
            // A from a generator of train.seed alone: the same adapter on every rank (the default
            // generators are seeded per rank, for dropout).
            lora_attach(model_, *lora_, at::detail::createCPUGenerator(static_cast<uint64_t>(opts_.train.seed)));
            if (!from.empty()) lora_load_weights(model_, from);
        } catch (const InputError& e) {
            if (resume_from_.empty()) throw;
            throw InputError(std::string(e.what()) + kResumeHint);
        }
        log_info("LoRA: r %lld, alpha %g (scale %g), dropout %g on %zu projections%s; base weights frozen (%s)",
                 (long long)lora_->r, lora_->alpha, lora_->scale(), lora_->dropout, lora_adapters(model_).size(),
                 from.empty() ? ", new adapter" : (", from " + from).c_str(), dtype_name(dtype_).c_str());
    }
    const ModelConfig& mc = model_->config();
    if (pipe_.tokenizer->vocab_size() > mc.vocab_size)
        throw InputError(strprintf("tokenizer %s has %lld tokens but model %s has only %lld embedding rows",
                                   pipe_.tokenizer->source().c_str(), (long long)pipe_.tokenizer->vocab_size(),
                                   src.c_str(), (long long)mc.vocab_size));
    std::vector<OptimParam> params = optim_params_of(model_->trainable_parameters(), opts_.train.decay_norm_and_bias);
    int64_t n_params = 0;
    for (const OptimParam& p : params) n_params += p.param.numel();
    log_info("model %s: %s, %lld layers, hidden %lld, vocab %lld, %.2fM parameters%s", src.c_str(),
             mc.architecture.c_str(), (long long)mc.n_layer, (long long)mc.hidden_size,
             (long long)mc.vocab_size, n_params / 1e6,
             opts_.model.activation_checkpointing ? ", activation checkpointing" : "");
    if (opts_.model.method == "asft" || (steps_ && steps_->needs_reference() && !lora_)) {
        // pi_ref: the frozen initial model (model.path, also on resume); under LoRA a StepSource
        // takes the base with the adapters off instead
        reference_ = model_load(opts_.model.path, dtype_, device_);
        for (auto& [name, p] : reference_->trainable_parameters()) p.set_requires_grad(false);
    }
    const int64_t stage = opts_.distributed.zero_stage;
    if (stage >= 3 && lora_)
        throw UsageError("config error: 'distributed.zero_stage' 3 shards the weights a LoRA run keeps frozen and whole; "
                         "use zero_stage 0-2 with model.lora.enabled");
    // The training state stays resident for the whole run: refuse early when it cannot fit the
    // GPU (train/memory_plan.h, from the elements of the model as loaded).
    int64_t n_frozen = 0, n_whole = 0;  // the frozen LoRA base; what ZeRO stage 3 keeps whole
    if (lora_)
        for (const auto& [name, p] : hf_named_parameters(model_)) n_frozen += p.numel();
    for (const OptimParam& p : params)
        if (p.name.rfind("model.layers.", 0) != 0) n_whole += p.param.numel();
    MemoryCounts counts;
    counts.trainable = static_cast<double>(n_params);
    counts.whole = static_cast<double>(n_whole);
    counts.frozen = static_cast<double>(n_frozen);
    MemorySetup setup;
    setup.dtype = dtype_;
    setup.lora = lora_.has_value();
    setup.reference = static_cast<bool>(reference_);
    setup.world = comm_.world;
    setup.zero_stage = stage;
    setup.offload = opts_.distributed.offload_optimizer;
    const MemoryPlan plan = memory_plan(counts, setup);
    const double total = static_cast<double>(device_total_memory(device_));
    log_info("%s", memory_plan_text(plan, setup, total, device_.str()).c_str());
    memory_plan_check(plan, counts, setup, total, device_.str());
    AdamWOptions ao;
    ao.lr = opts_.train.lr;
    ao.beta1 = opts_.train.beta1;
    ao.beta2 = opts_.train.beta2;
    ao.eps = opts_.train.eps;
    ao.weight_decay = opts_.train.weight_decay;
    ZeroOptions zo;
    zo.stage = stage;
    zo.offload = opts_.distributed.offload_optimizer;
    zo.bucket_bytes = static_cast<int64_t>(opts_.distributed.bucket_mb * (1 << 20));
    optim_ = make_optimizer(std::move(params), ao, zo, comm_, model_);
    if (steps_) return;  // its own loss
    objective_ = std::make_unique<Objective>(opts_.objective);
    // Evaluation has no score file: it always takes confidences from its own forward pass.
    ObjectiveOptions eo = objective_->options();
    eo.cached_confidence = false;
    // Nor a reference model or reference scores: asft is evaluated as its DFT part, rho1 as sft.
    if (eo.method == Method::kAsft) eo.method = Method::kDft;
    if (eo.method == Method::kRho1) eo.method = Method::kSft;
    eval_objective_ = std::make_unique<Objective>(eo);
    if (objective_->options().cached_confidence) load_cached_confidences();
    if (objective_->needs_reference_scores())
        reference_probs_ = load_score_probs(opts_.model.rho1_reference_scores, false, "rho1 reference scores");
}

void Trainer::load_cached_confidences() {
    cached_probs_ = load_score_probs(opts_.model.confidence_cache, true, "confidences");
}

// A score file's per-token probabilities for the training data; check_model: made by model.path
// (a rho1 reference model may be another one; tokenizer and data must match either way).
std::vector<std::vector<float>> Trainer::load_score_probs(const std::string& file, bool check_model, const char* what) {
    std::vector<std::vector<float>> probs;
    ScoreHeader h;
    std::vector<ScoreRecord> records = score_load_all(file, &h);
    ScoreKey want;
    // The model that scored: the base, with model.lora.path's adapter when this LoRA run starts from one.
    want.model_hash = hash_model_with_adapter(opts_.model.path, opts_.model.lora ? opts_.model.adapter : "");
    want.pipeline_hash = pipe_.key;
    want.data_hash = Hasher().add(data_hash_).add_u64(static_cast<uint64_t>(opts_.data.max_seq_len)).hex();
    std::string why;
    if (check_model && h.key.model_hash != want.model_hash) why += " model (" + h.model + " vs " + opts_.model.path + ")";
    if (h.key.pipeline_hash != want.pipeline_hash) why += " tokenizer/chat format/tagger settings";
    if (h.key.data_hash != want.data_hash) why += " data (" + h.data + " vs " + opts_.data.train + ", or data.max_seq_len)";
    if (!why.empty())
        throw InputError("score file " + file + " does not match this run:" + why +
                         "; make a matching one with `cuset-train score --config <this config> --out " + file + "`");
    if (static_cast<int64_t>(records.size()) != train_n_samples_)
        throw InputError(strprintf("score file %s has %zu samples, the training data %lld", file.c_str(),
                                   records.size(), (long long)train_n_samples_));
    probs.resize(records.size());
    for (size_t i = 0; i < records.size(); ++i) probs[i] = std::move(records[i].prob);
    log_info("%s from the score file %s (model %s)", what, file.c_str(), h.model.c_str());
    return probs;
}

std::vector<Row> Trainer::rows_for_epoch(int64_t epoch) {
    if (epoch != cached_epoch_) {
        cached_rows_ = epoch_rows(train_, order_, epoch);
        cached_epoch_ = epoch;
    }
    return cached_rows_;
}

void Trainer::plan_steps() {
    global_batch_ = opts_.train.micro_batch_size * opts_.train.grad_accum * comm_.world;
    order_.seed = static_cast<uint64_t>(opts_.train.seed);
    order_.shuffle = opts_.data.shuffle;
    order_.group_by_length = opts_.data.group_by_length;
    order_.group_window = std::max<int64_t>(64, 16 * global_batch_);
    order_.packing = opts_.data.packing;
    order_.max_seq_len = opts_.data.max_seq_len;
    int64_t total = 0;
    if (opts_.train.max_steps > 0) {
        total = opts_.train.max_steps;
    } else {
        for (int64_t e = 0; e < opts_.train.epochs; ++e)
            total += steps_per_epoch(static_cast<int64_t>(epoch_rows(train_, order_, e).size()), global_batch_);
    }
    schedule_.kind = opts_.train.schedule;
    schedule_.total_steps = total;
    schedule_.warmup_steps = opts_.train.warmup_steps > 0
                                 ? opts_.train.warmup_steps
                                 : static_cast<int64_t>(std::ceil(opts_.train.warmup_ratio * total));
    schedule_.min_lr_ratio = opts_.train.min_lr_ratio;
    state_.total_steps = total;
    state_.global_batch = global_batch_;
    state_.world_size = comm_.world;
    state_.config_hash = opts_.run.config_hash;
    state_.data_hash = data_hash_;
    if (device_.is_cuda()) {
        const ModelConfig& mc = model_->config();
        const std::string causal =
            sdpa_backend_for(device_, dtype_, mc.n_head, mc.n_head_kv, mc.head_dim, opts_.data.max_seq_len, false);
        if (opts_.data.packing)
            log_info("attention kernel on %s: %s (packed rows: segment mask)", device_.str().c_str(),
                     sdpa_backend_for(device_, dtype_, mc.n_head, mc.n_head_kv, mc.head_dim, opts_.data.max_seq_len, true).c_str());
        else
            log_info("attention kernel on %s: %s (causal; right padding needs no mask)", device_.str().c_str(),
                     causal.c_str());
    }
    if (steps_)
        log_info("%lld optimizer steps of %s; warmup %lld, %s schedule, peak lr %g", (long long)total,
                 steps_->name().c_str(), (long long)schedule_.warmup_steps, schedule_.kind.c_str(), opts_.train.lr);
    else
    log_info("%lld optimizer steps of %lld rows (micro-batch %lld x accumulation %lld x %lld rank(s)); warmup %lld, %s schedule, peak lr %g",
             (long long)total, (long long)global_batch_, (long long)opts_.train.micro_batch_size,
             (long long)opts_.train.grad_accum, (long long)comm_.world, (long long)schedule_.warmup_steps,
             schedule_.kind.c_str(), opts_.train.lr);
}

void Trainer::restore(const std::string& ckpt) {
    std::string state_file = (fs::path(ckpt) / "trainer_state.json").string();
    if (fs::is_directory(state_file)) throw InputError(state_file + " is a folder, not a file");
    if (!fs::exists(state_file)) throw InputError(state_file + ": cannot read (not a complete checkpoint)");
    const json j = json_read_file(state_file, "trainer state");
    TrainerState s = trainer_state_from_json(j, state_file);
    bool extended = false;
    if (s.config_hash != state_.config_hash) {
        // Only the schedule length differs? (--extend accepts that; the message says so otherwise.)
        bool schedule_only = false;
        try {
            schedule_only = opts_.run.schedule_hash_of((fs::path(ckpt) / "config.yaml").string()) ==
                            opts_.run.schedule_hash;
        } catch (const Error&) {
        }
        if (!(opts_.extend && schedule_only))
            throw InputError("checkpoint " + ckpt + " was written by a run with a different configuration (config hash " +
                             s.config_hash + ", this run " + state_.config_hash +
                             "): resume with the configuration in " + (fs::path(ckpt) / "config.yaml").string() +
                             ", or start a new run from its weights with --set model.path=" + ckpt + " --run-name NAME" +
                             (schedule_only ? "; only the schedule length (train.max_steps / train.epochs) differs: "
                                              "continue under the new length with --extend"
                                            : ""));
        extended = true;
    }
    if (s.data_hash != data_hash_)
        throw InputError("checkpoint " + ckpt + " was trained on different data (data hash " + s.data_hash +
                         ", now " + data_hash_ + "): resume with the same data.train file and tokenizer");
    if (s.global_batch != global_batch_)
        throw InputError(strprintf("checkpoint %s used %lld rows per step, this run %lld (micro_batch_size x grad_accum x ranks): "
                                   "keep the global batch when resuming on another number of ranks",
                                   ckpt.c_str(), (long long)s.global_batch, (long long)global_batch_));
    // The optimizer state in whatever layout wrote it (one file, or one shard file per rank of
    // any world size and ZeRO stage): each rank reads the elements it holds now.
    const OptimizerFiles files = optimizer_files_open(ckpt, s);
    optim_->load_state(state_reader_of(files.tensors), s.step);
    restore_rng_state(files);
    int64_t world = state_.world_size;
    const int64_t planned_total = state_.total_steps;
    const std::string planned_hash = state_.config_hash;
    state_ = s;
    state_.world_size = world;
    last_saved_step_ = s.step;
    if (extended) {
        if (planned_total <= s.step)
            throw InputError(strprintf("--extend: checkpoint %s is at step %lld, the new schedule has %lld steps: "
                                       "give a longer train.max_steps or more train.epochs",
                                       ckpt.c_str(), (long long)s.step, (long long)planned_total));
        state_.total_steps = planned_total;
        state_.config_hash = planned_hash;  // later checkpoints belong to the new configuration
        state_.history.push_back({{"step", s.step},
                                  {"when", "schedule extended"},
                                  {"total_steps_before", s.total_steps},
                                  {"total_steps", planned_total}});
        log_info("schedule extended at step %lld: %lld -> %lld steps (the learning-rate schedule is recomputed for the "
                 "new length; weights, optimizer state, data position and generators continue from the checkpoint)",
                 (long long)s.step, (long long)s.total_steps, (long long)planned_total);
    } else if (opts_.extend) {
        log_info("--extend: the checkpoint's schedule already has %lld steps; resuming as usual", (long long)s.total_steps);
    }
    log_info("resumed from %s at step %lld (epoch %lld, step %lld of it), %lld tokens seen", ckpt.c_str(),
             (long long)s.step, (long long)s.epoch, (long long)s.step_in_epoch, (long long)s.tokens);
}

StepResult Trainer::step(const std::vector<Row>& rows) {
    auto t0 = std::chrono::steady_clock::now();
    device_reset_peak(device_);
    const int64_t mbs = opts_.train.micro_batch_size;
    std::vector<MicroBatch> micro;
    for (size_t b = 0; b < rows.size(); b += mbs) {
        std::vector<Row> part(rows.begin() + b, rows.begin() + std::min(rows.size(), b + mbs));
        micro.push_back(make_micro_batch(train_, part, static_cast<int32_t>(pad_id_), device_,
                                         cached_probs_.empty() ? nullptr : &cached_probs_,
                                         reference_probs_.empty() ? nullptr : &reference_probs_));
    }
    TrainStepOptions so;
    so.lr = opts_.train.lr * lr_multiplier(schedule_, state_.step);
    so.grad_clip = opts_.train.grad_clip;
    so.step = state_.step;
    so.log_sample_weights = opts_.log.sample_weights;
    so.reference = reference_ ? &reference_ : nullptr;
    StepResult r;
    static_cast<TrainStepResult&>(r) = train_step(model_, *objective_, *optim_, comm_, micro, so);
    r.lr = so.lr;
    account(r);
    if (device_.is_cuda()) torch_cuda_synchronize(device_);
    r.peak_bytes = device_peak_allocated(device_);
    r.seconds = seconds_since(t0);
    return r;
}

// The run's bookkeeping of a step's outcome: skipped steps, non-finite steps in a row (stopping
// at train.max_bad_steps), tokens trained.
void Trainer::account(const StepResult& r) {
    if (r.non_finite) {
        ++state_.skipped_steps;
        ++state_.bad_in_row;
        log_warn("step %lld: non-finite loss or gradient, step skipped (%lld in a row, limit %lld)",
                 (long long)state_.step, (long long)state_.bad_in_row, (long long)opts_.train.max_bad_steps);
        if (state_.bad_in_row >= opts_.train.max_bad_steps)
            throw RuntimeFailure(strprintf("%lld non-finite steps in a row (train.max_bad_steps): stopping; "
                                           "lower train.lr or check the data (last complete checkpoint: %s)",
                                           (long long)state_.bad_in_row,
                                           checkpoint_latest(run_dir_).empty() ? "none" : checkpoint_latest(run_dir_).c_str()));
    } else if (r.nothing_kept) {
        ++state_.skipped_steps;
        log_warn("step %lld: no token kept by the objective (denominator 0); weights unchanged", (long long)state_.step);
    } else {
        state_.bad_in_row = 0;
    }
    state_.tokens += r.targets;
}

StepContext Trainer::step_context() {
    StepContext c{model_, *optim_, comm_, pipe_, device_, run_dir_};
    c.pad_id = static_cast<int32_t>(pad_id_);
    c.reference = reference_ ? &reference_ : nullptr;
    c.lora = lora_.has_value();
    c.step = state_.step;
    c.lr = opts_.train.lr * lr_multiplier(schedule_, state_.step);
    c.grad_clip = opts_.train.grad_clip;
    return c;
}

// One step of the StepSource, accounted as an SFT step is.
StepResult Trainer::source_step() {
    auto t0 = std::chrono::steady_clock::now();
    device_reset_peak(device_);
    const StepContext ctx = step_context();
    SourceStepResult s = steps_->step(ctx);
    StepResult r;
    r.applied = s.applied;
    r.non_finite = s.non_finite;
    r.loss = s.loss;
    r.grad_norm = s.grad_norm;
    r.tokens = s.tokens;
    r.targets = s.tokens;
    r.lr = ctx.lr;
    r.source_metrics = s.metrics;
    r.source_progress = s.progress;
    account(r);
    if (device_.is_cuda()) torch_cuda_synchronize(device_);
    r.peak_bytes = device_peak_allocated(device_);
    r.seconds = seconds_since(t0);
    return r;
}

EvalResult Trainer::evaluate(const PreparedData& data) {
    at::NoGradGuard no_grad;
    EvalModeScope eval_mode(model_);  // no LoRA dropout while evaluating
    EvalResult res;
    OrderOptions o = order_;
    o.shuffle = false;
    o.packing = false;
    o.group_by_length = true;  // less padding; the result does not depend on the order
    std::vector<Row> rows = epoch_rows(data, o, 0);
    std::vector<Row> mine = step_rows_for_rank(rows, static_cast<int64_t>(rows.size()), 0, comm_.rank, comm_.world);
    double numerator = 0.0, denominator = 0.0, nll = 0.0, n_valid = 0.0;
    const int64_t mbs = opts_.train.micro_batch_size;
    // ZeRO stages 2-3: as many passes on every rank (train_step.h).
    const int64_t n_local = (static_cast<int64_t>(mine.size()) + mbs - 1) / mbs;
    for (int64_t k = n_local, rounds = lockstep_rounds(comm_, *optim_, n_local); k < rounds; ++k)
        null_pass(model_, *optim_, comm_, false, false);
    for (size_t b = 0; b < mine.size(); b += mbs) {
        std::vector<Row> part(mine.begin() + b, mine.begin() + std::min(mine.size(), b + mbs));
        MicroBatch mb = make_micro_batch(data, part, static_cast<int32_t>(pad_id_), device_);
        at::Tensor hidden = model_->forward(mb.input_ids, mb.causal_mask(), mb.position_ids, mb.segment_ids);
        MicroBatchTargets t = targets_of(mb);
        std::optional<double> tau;
        if (eval_objective_->needs_two_passes()) {
            at::Tensor c = eval_objective_->confidences(hidden, model_->lm_head_weight(), t);
            if (c.numel() > 0) tau = quantile_linear(c, eval_objective_->options().q);
        }
        ObjectiveOutput out = eval_objective_->compute(hidden, model_->lm_head_weight(), t, tau);
        numerator += out.numerator.item<double>();
        denominator += out.denominator;
        nll += out.stats.nll_sum_valid;
        n_valid += static_cast<double>(out.stats.n_valid);
    }
    std::vector<double> s = comm_.sum_vec({numerator, denominator, nll, n_valid});
    res.loss = s[1] > 0 ? s[0] / s[1] : std::numeric_limits<double>::quiet_NaN();
    res.ce = s[3] > 0 ? s[2] / s[3] : std::numeric_limits<double>::quiet_NaN();
    res.n_targets = static_cast<int64_t>(s[3]);
    return res;
}

void Trainer::eval_and_record(const char* when) {
    if (eval_.examples.empty()) return;
    auto t0 = std::chrono::steady_clock::now();
    EvalResult e;
    try {
        e = evaluate(eval_);
    } catch (const NonFiniteError& err) {
        log_warn("eval (%s): %s", when, err.what());
    }
    log_info("eval (%s, step %lld): loss %.4f | cross-entropy %.4f over %lld targets (%.1fs)", when,
             (long long)state_.step, e.loss, e.ce, (long long)e.n_targets, seconds_since(t0));
    state_.history.push_back({{"step", state_.step}, {"when", when}, {"eval_loss", num(e.loss)}, {"eval_ce", num(e.ce)}});
    if (comm_.is_main() && metrics_) {
        json m = {{"step", state_.step}, {"eval_loss", num(e.loss)}, {"eval_ce", num(e.ce)}};
        metrics_ << m.dump() << "\n" << std::flush;
        tensorboard_line(tb_.get(), m, "eval", state_.step);
    }
}

void Trainer::save_checkpoint() {
    if (last_saved_step_ == state_.step) {
        // Saved already (checkpoint.every hit the last step): its model card gains the final
        // evaluation, replaced atomically in the complete folder.
        std::string dir = (fs::path(run_dir_) / checkpoint_name(state_.step)).string();
        if (comm_.is_main() && !file_hashes_.empty() && fs::exists(fs::path(dir) / "README.md"))
            atomic_write((fs::path(dir) / "README.md").string(),
                         model_card(opts_, state_, comm_.world, data_hash_, file_hashes_, opts_.command_line));
        return;
    }
    comm_.barrier();
    auto t0 = std::chrono::steady_clock::now();
    const std::string final_dir = (fs::path(run_dir_) / checkpoint_name(state_.step)).string();
    auto* zero = dynamic_cast<ZeroAdamW*>(optim_.get());
    // One temporary folder (with cuset's marker, see checkpoint_remove_partial), renamed onto
    // final_dir when complete; removed when anything below fails. With ZeRO every rank writes its
    // shard of the optimizer state into it (its name comes from rank 0).
    std::unique_ptr<AtomicDir> dir;
    std::string tmp;
    if (comm_.is_main()) {
        dir = std::make_unique<AtomicDir>(final_dir);
        tmp = dir->path();
    }
    if ((zero || steps_) && comm_.world > 1) tmp = broadcast_string(comm_, tmp);
    // The temporary folder's name is unique to this save (a random part) and known to every rank:
    // the checkpoint's identity, in trainer_state.json and every optimizer file.
    state_.save_id = fs::path(tmp).filename().string();
    std::map<std::string, std::string> identity = optimizer_file_identity(state_);
    if (zero) {
        std::map<std::string, std::string> meta = identity;
        meta.insert({{"format", "cuset-zero-shard"}, {"zero_stage", std::to_string(zero->stage())}});
        safetensors_save((fs::path(tmp) / optimizer_shard_name(comm_.rank, comm_.world)).string(), state_with_rng(),
                         meta);
        zero->gather_all();  // stage 3: the whole weights, for the model folder
    }
    if (steps_) steps_->save_state(tmp, state_.step, comm_);
    comm_.barrier();  // every shard is in place
    if (comm_.is_main()) {
        if (lora_) {  // the adapter in PEFT's layout; the frozen base stays model.path
            lora_save(model_, *lora_, tmp, fs::absolute(opts_.model.path).string());
        } else {
            model_save_files(model_, tmp, pipe_.tokenizer_dir, dtype_, opts_.checkpoint.max_shard_mb << 20);
        }
        if (!zero) {
            safetensors_save((fs::path(tmp) / "optimizer.safetensors").string(), state_with_rng(), identity);
        }
        atomic_write((fs::path(tmp) / "config.yaml").string(), opts_.run.config_yaml);
        if (file_hashes_.empty())
            for (const std::string& f : {opts_.data.train, opts_.data.eval, steps_ ? opts_.model.tasks : std::string()})
                if (!f.empty()) file_hashes_.emplace_back(f, hash_file(f));
        atomic_write((fs::path(tmp) / "README.md").string(),
                     model_card(opts_, state_, comm_.world, data_hash_, file_hashes_, opts_.command_line));
        atomic_write((fs::path(tmp) / "trainer_state.json").string(), trainer_state_to_json(state_).dump(2));
        dir->commit();
        checkpoint_prune(run_dir_, opts_.checkpoint.keep_last);
        log_info("saved %s (%.1fs)", final_dir.c_str(), seconds_since(t0));
    }
    if (zero) zero->release_all();
    comm_.barrier();
    last_saved_step_ = state_.step;
}

// What a checkpoint's optimizer file holds: the optimizer's state tensors (this rank's shard with
// ZeRO) and the generators' states, "rng.cpu" and on a GPU "rng.cuda", so that a resumed run
// draws what this one would have drawn next (restore_rng_state puts them back).
NamedTensors Trainer::state_with_rng() const {
    NamedTensors st = optim_->state_tensors();
    st.emplace_back("rng.cpu", at::detail::getDefaultCPUGenerator().get_state());
    if (device_.is_cuda()) st.emplace_back("rng.cuda", at::globalContext().defaultGenerator(device_).get_state());
    return st;
}

// The generators' states of this rank's optimizer file (rank 0's when the checkpoint was written
// by another number of ranks).
void Trainer::restore_rng_state(const OptimizerFiles& files) {
    auto rng = files.find("rng.cpu", comm_.rank, files.world == comm_.world);
    if (rng.defined()) {
        at::Generator gen = at::detail::getDefaultCPUGenerator();
        gen.set_state(rng.to(at::kByte).clone());
    }
    auto rng_cuda = files.find("rng.cuda", comm_.rank, files.world == comm_.world);
    if (rng_cuda.defined() && device_.is_cuda()) {
        at::Generator gen = at::globalContext().defaultGenerator(device_);  // a handle on the device's generator
        gen.set_state(rng_cuda.clone());
    }
}

void Trainer::log_step(const StepResult& r, double elapsed) {
    double tps = r.seconds > 0 ? r.tokens / r.seconds : 0.0;
    if (r.applied) {
        tokens_per_s_sum_ += tps;
        ++tokens_per_s_n_;
        last_loss_ = r.loss;
    }
    if (!comm_.is_main()) return;
    if (state_.step % opts_.log.every != 0 && state_.step != state_.total_steps) return;
    if (steps_) {
        json m = {{"step", state_.step},      {"loss", num(r.loss)},        {"lr", r.lr},
                  {"grad_norm", num(r.grad_norm)}, {"tokens", r.tokens},   {"step_time_s", r.seconds},
                  {"tokens_per_s", r.seconds > 0 ? r.tokens / r.seconds : 0.0},
                  {"elapsed_s", elapsed},       {"skipped", !r.applied}};
        for (auto it = r.source_metrics.begin(); it != r.source_metrics.end(); ++it) m[it.key()] = it.value();
        if (r.peak_bytes >= 0) m["peak_mem_mb"] = r.peak_bytes / double(1 << 20);
        metrics_ << m.dump() << "\n" << std::flush;
        tensorboard_line(tb_.get(), m, "train", state_.step);  // the numbers (the status counts are not)
        return;
    }
    const ObjectiveStats& s = r.stats;
    json m = {{"step", state_.step},
              {"epoch", state_.epoch},
              {"loss", num(r.loss)},
              {"ce", num(s.nll_mean())},
              {"lr", r.lr},
              {"grad_norm", num(r.grad_norm)},
              {"tokens", r.tokens},
              {"targets", r.targets},
              {"tokens_per_s", tps},
              {"step_time_s", r.seconds},
              {"elapsed_s", elapsed},
              {"skipped", !r.applied},
              {"kept_fraction", num(s.kept_fraction())},
              {"sensitive_fraction", num(s.sensitive_fraction())},
              {"kept_only_sensitive_fraction", num(s.kept_only_sensitive_fraction())},
              {"mean_tau", num(s.mean_tau())},
              {"w_min", num(s.w_min)},
              {"w_mean", num(s.w_mean())},
              {"w_max", num(s.w_max)},
              {"conf_sensitive", num(s.conf_mean_sensitive())},
              {"conf_plain", num(s.conf_mean_plain())},
              {"token_weight_mean", num(s.tok_w_mean())},
              {"kl_mean", num(s.kl_mean())}};
    if (r.peak_bytes >= 0) m["peak_mem_mb"] = r.peak_bytes / double(1 << 20);
    metrics_ << m.dump() << "\n" << std::flush;
    tensorboard_line(tb_.get(), m, "train", state_.step);
}

void Trainer::write_summary(double train_seconds) {
    if (!comm_.is_main()) return;
    json before = nullptr, after = nullptr;
    for (const json& h : state_.history) {
        if (!h.contains("eval_loss")) continue;
        if (before.is_null()) before = h;
        after = h;
    }
    const ObjectiveStats& s = run_stats_;
    std::string ckpt = checkpoint_latest(run_dir_);
    json summary = {{"run_dir", run_dir_},
                    {"method", opts_.model.method},
                    {"steps", state_.step},
                    {"total_steps", state_.total_steps},
                    {"skipped_steps", state_.skipped_steps},
                    {"targets_trained", state_.tokens},
                    {"train_seconds_this_session", train_seconds},
                    {"tokens_per_s", tokens_per_s_n_ ? tokens_per_s_sum_ / tokens_per_s_n_ : 0.0},
                    {"final_train_loss", num(last_loss_)},
                    {"eval_before", before},
                    {"eval_after", after},
                    {"kept_fraction", num(s.kept_fraction())},
                    {"sensitive_fraction", num(s.sensitive_fraction())},
                    {"kept_only_sensitive_fraction", num(s.kept_only_sensitive_fraction())},
                    {"weight", {{"min", num(s.w_min)}, {"mean", num(s.w_mean())}, {"max", num(s.w_max)}}},
                    {"token_weight_mean", num(s.tok_w_mean())},
                    {"kl_mean", num(s.kl_mean())},
                    {"checkpoint", ckpt}};
    for (const json& h : state_.history)
        if (h.value("when", "") == "schedule extended") {
            summary["schedule_extended_at_step"] = h["step"];
            summary["schedule_extended_from_total_steps"] = h["total_steps_before"];
        }
    file_write_atomic((fs::path(run_dir_) / "summary.json").string(), summary.dump(2) + "\n");
    auto fmt_eval = [](const json& e) {
        if (e.is_null()) return std::string("n/a");
        auto g = [&](const char* k) { return e[k].is_number() ? strprintf("%.4f", e[k].get<double>()) : std::string("n/a"); };
        return "loss " + g("eval_loss") + ", cross-entropy " + g("eval_ce");
    };
    log_info("---------------------------------------------------------------- summary");
    log_info("method %s, %lld steps (%lld skipped), %lld targets trained", opts_.model.method.c_str(),
             (long long)state_.step, (long long)state_.skipped_steps, (long long)state_.tokens);
    log_info("eval before: %s", fmt_eval(before).c_str());
    log_info("eval after:  %s", fmt_eval(after).c_str());
    if (summary.contains("schedule_extended_at_step"))
        log_info("schedule extended at step %lld (from %lld to %lld steps)",
                 (long long)summary["schedule_extended_at_step"].get<int64_t>(),
                 (long long)summary["schedule_extended_from_total_steps"].get<int64_t>(), (long long)state_.total_steps);
    if (s.n_valid > 0)
        log_info("kept %.1f%% of response tokens; %.1f%% sensitive; %.1f%% kept only because sensitive",
                 100 * s.kept_fraction(), 100 * s.sensitive_fraction(), 100 * s.kept_only_sensitive_fraction());
    if (s.n_samples > 0)
        log_info("sample weights: min %.3f, mean %.3f, max %.3f", s.w_min, s.w_mean(), s.w_max);
    if (steps_ && !steps_->summary().empty()) log_info("%s", steps_->summary().c_str());
    log_info("throughput %.0f tokens/s; checkpoint %s", tokens_per_s_n_ ? tokens_per_s_sum_ / tokens_per_s_n_ : 0.0,
             ckpt.empty() ? "none" : ckpt.c_str());
    log_info("summary written to %s", (fs::path(run_dir_) / "summary.json").c_str());
}

int Trainer::run() {
    setup();
    seed_generators(opts_.train.seed, comm_.rank);
    load_data();
    build_model_and_optimizer();
    plan_steps();
    if (!resume_from_.empty()) {
        try {
            restore(resume_from_);
        } catch (const InputError& e) {
            throw InputError(std::string(e.what()) + kResumeHint);
        }
    }
    if (comm_.is_main()) {
        metrics_.open((fs::path(run_dir_) / "metrics.jsonl").string(), std::ios::app);
        if (!metrics_) throw RuntimeFailure("cannot write " + run_dir_ + "/metrics.jsonl");
        if (opts_.log.tensorboard) {
            tb_ = std::make_unique<TensorBoardWriter>(run_dir_);
            log_info("TensorBoard events in %s (tensorboard --logdir %s)", tb_->path().c_str(), run_dir_.c_str());
        }
    }
    if (resume_from_.empty()) eval_and_record("before training");

    // A bar on a terminal; otherwise the per-step log lines below are the progress report.
    const bool bar = progress_bar_wanted(opts_.log.progress) && comm_.is_main();
    Progress progress("train", state_.total_steps, "steps", bar);
    auto t_start = std::chrono::steady_clock::now();
    int64_t start_step = state_.step;
    // A run in which every step was skipped trained nothing: it fails before its last checkpoint.
    auto fail_if_untrained = [&] {
        if (state_.step > 0 && state_.skipped_steps >= state_.step)
            throw RuntimeFailure(strprintf("all %lld steps were skipped (non-finite loss or no token kept by the objective): "
                                           "nothing was trained; check the data, train.lr and the objective's settings",
                                           (long long)state_.step));
    };
    if (steps_) steps_->begin(step_context(), state_.step, resume_from_);
    while (state_.step < state_.total_steps) {
        StepResult r;
        if (steps_) {
            try {
                r = source_step();
            } catch (const StoppedBySignal&) {
                // The signal cut the step short (its judging): it was not taken, the weights are
                // those of the last step, which is what the checkpoint holds; a resumed run takes
                // this step again, drawing the same samples.
                save_checkpoint();
                if (bar) progress.finish();
                throw StoppedBySignal(strprintf("stopped by %s during step %lld, which was not taken; checkpoint "
                                                "of step %lld saved in %s; continue with --resume auto",
                                                stop_cause().c_str(), (long long)state_.step + 1, (long long)state_.step,
                                                run_dir_.c_str()));
            }
        } else {
            std::vector<Row> rows = rows_for_epoch(state_.epoch);
            int64_t spe = steps_per_epoch(static_cast<int64_t>(rows.size()), global_batch_);
            if (state_.step_in_epoch >= spe) {
                ++state_.epoch;
                state_.step_in_epoch = 0;
                continue;
            }
            r = step(step_rows_for_rank(rows, global_batch_, state_.step_in_epoch, comm_.rank, comm_.world));
            run_stats_.merge(r.stats);
        }
        ++state_.step;
        ++state_.step_in_epoch;
        double elapsed = seconds_since(t_start);
        log_step(r, elapsed);
        if (comm_.is_main()) {
            std::string suffix = strprintf("loss %.4f | lr %.2e | %.0f tok/s", r.loss, r.lr,
                                           r.seconds > 0 ? r.tokens / r.seconds : 0.0);
            if (steps_) suffix = strprintf("loss %.4f | lr %.2e | %s", r.loss, r.lr, r.source_progress.c_str());
            if (bar) progress.update(state_.step - start_step, suffix);
            else if (steps_ && state_.step % opts_.log.every == 0)
                log_info("step %lld/%lld | %s | grad norm %.3f | %.1fs | ETA %s", (long long)state_.step,
                         (long long)state_.total_steps, suffix.c_str(), r.grad_norm, r.seconds,
                         format_duration(elapsed / (state_.step - start_step) * (state_.total_steps - state_.step)).c_str());
            else if (state_.step % opts_.log.every == 0)
                log_info("step %lld/%lld | loss %.4f | lr %.2e | grad norm %.3f | kept %.1f%% | %.0f tokens/s | ETA %s",
                         (long long)state_.step, (long long)state_.total_steps, r.loss, r.lr, r.grad_norm,
                         100 * r.stats.kept_fraction(), r.seconds > 0 ? r.tokens / r.seconds : 0.0,
                         format_duration(elapsed / (state_.step - start_step) * (state_.total_steps - state_.step)).c_str());
        }
        if (opts_.train.eval_every > 0 && state_.step % opts_.train.eval_every == 0 && state_.step < state_.total_steps)
            eval_and_record("during training");
        // Every rank stops at the same step, also when only some of them were signalled (the
        // others would wait in the next step's collectives).
        bool stop = signals_stop_requested();
        if (comm_.world > 1) stop = comm_.sum_vec({stop ? 1.0 : 0.0})[0] > 0;
        if (state_.step >= state_.total_steps && !stop) fail_if_untrained();
        if ((opts_.checkpoint.every > 0 && state_.step % opts_.checkpoint.every == 0) || stop) save_checkpoint();
        if (stop) {
            if (bar) progress.finish();
            throw StoppedBySignal(strprintf("stopped by %s at step %lld; checkpoint saved in %s; continue with --resume auto",
                                            stop_cause().c_str(), (long long)state_.step, run_dir_.c_str()));
        }
    }
    if (bar) progress.finish();
    fail_if_untrained();
    double train_seconds = seconds_since(t_start);
    eval_and_record("after training");
    save_checkpoint();
    write_summary(train_seconds);
    return 0;
}

}  // namespace

// The dry run's memory estimate from config.json alone (no weights read): the breakdown by kind
// (model/lora.h), the trainer's memory plan (train/memory_plan.h) plus, with activation
// checkpointing, the activations of one micro-batch of data.max_seq_len tokens.
static void log_memory_estimate(const TrainOptions& opts) {
    ModelConfig mc;
    try {
        mc = model_config_load(opts.model.path);
    } catch (const InputError&) {
        return;  // model_inspect() below reports it
    }
    const c10::ScalarType dtype = opts.runtime.dtype;  // the run's (the same rule, resolved once)
    std::optional<LoraOptions> lora;
    if (opts.model.lora) lora = opts.lora;
    const TrainingMemory m = training_memory(mc, dtype, lora ? &*lora : nullptr);
    std::string what = lora ? strprintf("LoRA r %lld on %zu projection kinds: %.1fM trainable, %.2fB frozen",
                                        (long long)lora->r, lora->target_modules.size(), m.n_trainable / 1e6, m.n_frozen / 1e9)
                            : strprintf("full fine-tune: %.2fB trainable", m.n_trainable / 1e9);
    log_info("memory estimate (%s, %s): resident training state %.2f GB = weights %.2f + gradients %.2f + "
             "optimizer %.2f + adapters %.2f GB", what.c_str(), dtype_name(dtype).c_str(), m.total() / 1e9,
             m.weights / 1e9, m.gradients / 1e9, m.optimizer / 1e9, m.adapters / 1e9);
    // The trainer's plan (train/memory_plan.h), from config.json's counts: per rank under ZeRO
    // (train/zero.h) on the launcher's world size (1 without torchrun), and for every stage on 8
    // ranks, the usual node.
    const MemoryCounts counts = memory_counts_of(mc, lora ? &*lora : nullptr);
    MemorySetup setup;
    setup.dtype = dtype;
    setup.lora = lora.has_value();
    setup.reference = opts.model.method == "asft" || (opts.steps && opts.steps->needs_reference() && !lora);
    try {
        setup.world = dist_env_from_environment().world;
    } catch (const Error&) {
    }
    setup.zero_stage = opts.distributed.zero_stage;
    setup.offload = opts.distributed.offload_optimizer;
    const MemoryPlan plan = memory_plan(counts, setup);
    const double state = plan.resident;
    if (plan.reference > 0) log_info("memory estimate: frozen asft reference model %.2f GB", plan.reference / 1e9);
    if (!lora) {
        const ShardBytes& z = plan.shard;
        log_info("memory plan per rank (ZeRO stage %lld%s, %lld rank(s)): weights %.2f + gradients %.2f + fp32 masters "
                 "%.2f + AdamW moments %.2f = %.2f GB on the device%s",
                 (long long)setup.zero_stage, setup.offload ? ", optimizer offloaded" : "", (long long)setup.world,
                 z.weights / 1e9, z.gradients / 1e9, z.masters / 1e9, z.moments / 1e9, z.device_total() / 1e9,
                 z.host > 0 ? strprintf(", %.2f GB in CPU memory", z.host / 1e9).c_str() : "");
        auto on_8 = [&](int64_t stage, bool offload) {
            MemorySetup e = setup;
            e.world = 8;
            e.zero_stage = stage;
            e.offload = offload;
            return memory_plan(counts, e).shard.device_total() / 1e9;
        };
        std::string row;
        for (int64_t st = 0; st <= 3; ++st) row += strprintf("%sstage %lld %.1f", st ? ", " : "", (long long)st, on_8(st, false));
        log_info("memory plan per rank on 8 ranks (GB): %s; stage 3 + offload %.1f", row.c_str(), on_8(3, true));
    }
    if (!opts.model.activation_checkpointing) {
        log_info("memory estimate: activations not estimated (only with model.activation_checkpointing)");
        return;
    }
    const double act = activation_memory_checkpointed(mc, dtype, opts.train.micro_batch_size, opts.data.max_seq_len,
                                                      opts.objective.chunk_size);
    const double need = state + act;
    // The trainer's own margin: it refuses a resident state above kMemoryMargin of the GPU.
    const char* fits = need <= kMemoryMargin * 24e9 ? "fits one 24 GB GPU"
                       : need <= kMemoryMargin * 48e9 ? "needs a 48 GB GPU"
                       : need <= kMemoryMargin * 80e9 ? "needs an 80 GB GPU"
                       : need <= kMemoryMargin * 141e9 ? "needs a 141 GB GPU"
                                                       : "does not fit one GPU";
    log_info("memory estimate: activations %.2f GB (micro-batch %lld x %lld tokens, checkpointed, loss chunk %lld); "
             "total %.1f GB: %s", act / 1e9, (long long)opts.train.micro_batch_size, (long long)opts.data.max_seq_len,
             (long long)opts.objective.chunk_size, need / 1e9, fits);
}

void train_dry_run(const TrainOptions& opts) {
    log_info("the run would compute on device %s | dtype %s", opts.runtime.device.str().c_str(),
             dtype_name(opts.runtime.dtype).c_str());
    log_memory_estimate(opts);
    std::string summary = model_inspect(opts.model.path);
    log_info("model %s is readable:\n%s", opts.model.path.c_str(), summary.c_str());
    TextPipeline pipe = text_pipeline_from(opts.text);
    log_info("tokenizer %s (%s, %lld tokens) | chat format %s", pipe.tokenizer->source().c_str(),
             pipe.tokenizer->backend().c_str(), (long long)pipe.tokenizer->vocab_size(), pipe.formatter->name().c_str());
    const DataLoadOptions& lo = pipe.load;
    if (opts.steps) log_info("steps: %s", opts.steps->name().c_str());  // its own data, read already
    for (const std::string& f : {opts.data.train, opts.data.eval}) {
        if (f.empty() || opts.steps) continue;
        LoadReport rep;
        data_load_jsonl(f, lo, &rep);
        log_info("data %s: %lld samples (%lld lines, %lld skipped)", f.c_str(), (long long)rep.loaded,
                 (long long)rep.lines, (long long)rep.skipped);
    }
    log_info("run folder would be %s; configuration hash %s", opts.run.dir.c_str(), opts.run.config_hash.c_str());
}

int train_run(const TrainOptions& opts, const Comm& comm) {
    Trainer t(opts, comm);
    return t.run();
}

}  // namespace cuset
