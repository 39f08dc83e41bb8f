// The training job (train/trainer.h): its set-up, the step of the data or of a StepSource, the
// loop with its evaluations, checkpoints and signals. What it writes and checks is in its parts:
// run_folder, checkpoint_writer, metrics_log, evaluation.
#include "cuset/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/core/signals.h"
#include "cuset/data/score_file.h"
#include "cuset/model/device.h"
#include "cuset/train/memory_plan.h"
#include "cuset/train/run_folder.h"
#include "cuset/train/train_step.h"
#include "cuset/train/zero.h"

namespace cuset {

namespace {

// Waits for the GPU work of a step so that its time and peak memory are the step's own.
void torch_cuda_synchronize(c10::Device device) {
    at::Tensor probe = at::zeros({1}, at::TensorOptions().device(device));
    (void)probe.cpu();
}

// Runs `take` (one step, returning its StepReport) and records its wall time and peak device
// memory, the step's device work waited for.
template <class Take>
StepReport timed_step(c10::Device device, Take take) {
    auto t0 = std::chrono::steady_clock::now();
    device_reset_peak(device);
    StepReport r = take();
    if (device.is_cuda()) torch_cuda_synchronize(device);
    r.peak_bytes = device_peak_allocated(device);
    r.seconds = seconds_since(t0);
    return r;
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

// An InputError of a resumed checkpoint, with what the user can do instead.
InputError with_resume_hint(const InputError& e) { return InputError(std::string(e.what()) + kResumeHint); }

}  // namespace

Trainer::Trainer(TrainOptions opts, const Comm& comm)
    : opts_(std::move(opts)),
      comm_(comm),
      device_(opts_.runtime.device),
      dtype_(opts_.runtime.dtype),
      steps_(opts_.steps),
      checkpoints_(opts_, comm_, opts_.run.dir),
      metrics_(opts_, comm_, opts_.run.dir) {}

int Trainer::run() {
    begin();
    while (!done()) step();
    end();
    return 0;
}

void Trainer::begin() {
    open_run();
    seed_generators(opts_.train.seed, comm_.rank);
    load_data();
    build_model_and_optimizer();
    if (!steps_) build_objective();
    plan_steps();
    if (!resume_from_.empty()) restore();
    metrics_.open();
    if (resume_from_.empty()) eval_and_record("before training");
    metrics_.start(state_);
    if (steps_) steps_->begin(step_context(), state_.step, resume_from_);
}

void Trainer::step() {
    StepReport r = steps_ ? source_step() : data_step();
    account(r);
    ++state_.step;
    ++state_.step_in_epoch;
    metrics_.step(r, state_);
    if (opts_.train.eval_every > 0 && state_.step % opts_.train.eval_every == 0 && !done())
        eval_and_record("during training");
    const bool stop = stop_agreed();
    if (done() && !stop) fail_if_untrained();
    if ((opts_.checkpoint.every > 0 && state_.step % opts_.checkpoint.every == 0) || stop) save_checkpoint();
    if (stop) {
        metrics_.finish_progress();
        throw StoppedBySignal(strprintf("stopped by %s at step %lld; checkpoint saved in %s; continue with --resume auto",
                                        stop_cause().c_str(), (long long)state_.step, opts_.run.dir.c_str()));
    }
}

void Trainer::end() {
    metrics_.finish_progress();
    fail_if_untrained();
    const double train_seconds = metrics_.seconds();
    eval_and_record("after training");
    save_checkpoint();
    metrics_.write_summary(state_, train_seconds, steps_.get());
}

void Trainer::save_checkpoint() {
    CheckpointContent c;
    c.model = &model_;
    c.optim = optim_.get();
    c.lora = lora_ ? &*lora_ : nullptr;
    c.steps = steps_.get();
    c.tokenizer_dir = pipe_.tokenizer_dir;
    c.data_hash = data_hash_;
    checkpoints_.save(state_, c);
}

// ------------------------------------------------------------------ set-up

void Trainer::open_run() {
    resume_from_ = run_folder_open(opts_, comm_);
    signals_install();
    runtime_use_threads(opts_.runtime);
    if (device_.is_cpu()) cpu_allocator_keep_pages();
    log_info("run %s | device %s | dtype %s | %d CPU threads | rank %lld of %lld", opts_.run.dir.c_str(),
             device_.str().c_str(), dtype_name(dtype_).c_str(), at::get_num_threads(),
             (long long)comm_.rank, (long long)comm_.world);
}

void Trainer::load_data() {
    pipe_ = text_pipeline_from(opts_.text);
    log_info("tokenizer %s (%s, %lld tokens) | chat format %s", pipe_.tokenizer->source().c_str(),
             pipe_.tokenizer->backend().c_str(), (long long)pipe_.tokenizer->vocab_size(),
             pipe_.formatter->name().c_str());
    pad_id_ = static_cast<int32_t>(pipe_.tokenizer->pad_id() >= 0   ? pipe_.tokenizer->pad_id()
                                   : pipe_.tokenizer->eos_id() >= 0 ? pipe_.tokenizer->eos_id()
                                                                    : 0);
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

// The model (the checkpoint's weights on resume, but a LoRA run's base is model.path: its
// checkpoints hold the adapter) with its adapters; returns the folder its weights came from.
std::string Trainer::load_model() {
    const std::string src = resume_from_.empty() || opts_.model.lora ? opts_.model.path : resume_from_;
    try {
        model_ = model_load(src, dtype_, device_);
    } catch (const InputError& e) {
        if (resume_from_.empty()) throw;
        throw with_resume_hint(e);
    }
    model_->set_activation_checkpointing(opts_.model.activation_checkpointing);
    if (opts_.model.lora) attach_lora();
    const ModelConfig& mc = model_->config();
    if (pipe_.tokenizer->vocab_size() > mc.vocab_size)
        throw InputError(strprintf("tokenizer %s has %lld tokens but model %s has only %lld embedding rows",
                                   pipe_.tokenizer->source().c_str(), (long long)pipe_.tokenizer->vocab_size(),
                                   src.c_str(), (long long)mc.vocab_size));
    return src;
}

// A new adapter (A from the seeded generator, B = 0), or model.lora.path's, or the checkpoint's on
// resume; an existing adapter brings its own shape (r, alpha, targets).
void Trainer::attach_lora() {
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
        throw with_resume_hint(e);
    }
    log_info("LoRA: r %lld, alpha %g (scale %g), dropout %g on %zu projections%s; base weights frozen (%s)",
             (long long)lora_->r, lora_->alpha, lora_->scale(), lora_->dropout, lora_adapters(model_).size(),
             from.empty() ? ", new adapter" : (", from " + from).c_str(), dtype_name(dtype_).c_str());
}

void Trainer::build_model_and_optimizer() {
    const std::string src = load_model();
    std::vector<OptimParam> params = optim_params_of(model_->trainable_parameters(), opts_.train.decay_norm_and_bias);
    int64_t n_params = 0;
    for (const OptimParam& p : params) n_params += p.param.numel();
    const ModelConfig& mc = model_->config();
    log_info("model %s: %s, %lld layers, hidden %lld, vocab %lld, %.2fM parameters%s", src.c_str(),
             mc.architecture.c_str(), (long long)mc.n_layer, (long long)mc.hidden_size,
             (long long)mc.vocab_size, n_params / 1e6,
             opts_.model.activation_checkpointing ? ", activation checkpointing" : "");
    if (run_needs_reference_model(opts_)) {
        // pi_ref: the frozen initial model (model.path, also on resume)
        reference_ = model_load(opts_.model.path, dtype_, device_);
        for (auto& [name, p] : reference_->trainable_parameters()) p.set_requires_grad(false);
    }
    check_memory(params);
    AdamWOptions ao;
    ao.lr = opts_.train.lr;
    ao.beta1 = opts_.train.beta1;
    ao.beta2 = opts_.train.beta2;
    ao.eps = opts_.train.eps;
    ao.weight_decay = opts_.train.weight_decay;
    ZeroOptions zo;
    zo.stage = opts_.distributed.zero_stage;
    zo.offload = opts_.distributed.offload_optimizer;
    zo.bucket_bytes = static_cast<int64_t>(opts_.distributed.bucket_mb * (1 << 20));
    optim_ = make_optimizer(std::move(params), ao, zo, comm_, model_);
}

// The training state stays resident for the whole run: refuse early when it cannot fit the GPU
// (train/memory_plan.h, from the elements of the model as loaded).
void Trainer::check_memory(const std::vector<OptimParam>& params) {
    if (opts_.distributed.zero_stage >= 3 && lora_)
        throw UsageError("config error: 'distributed.zero_stage' 3 shards the weights a LoRA run keeps frozen and whole; "
                         "use zero_stage 0-2 with model.lora.enabled");
    MemoryCounts counts;
    for (const OptimParam& p : params) {
        counts.trainable += static_cast<double>(p.param.numel());
        if (p.name.rfind("model.layers.", 0) != 0) counts.whole += static_cast<double>(p.param.numel());
    }
    if (lora_)
        for (const auto& [name, p] : hf_named_parameters(model_)) counts.frozen += static_cast<double>(p.numel());
    const MemorySetup setup = memory_setup_of(opts_, comm_.world);
    const MemoryPlan plan = memory_plan(counts, setup);
    const double total = static_cast<double>(device_total_memory(device_));
    log_info("%s", memory_plan_text(plan, setup, total, device_.str()).c_str());
    memory_plan_check(plan, counts, setup, total, device_.str());
}

void Trainer::build_objective() {
    objective_ = std::make_unique<Objective>(opts_.objective);
    eval_objective_ = std::make_unique<Objective>(eval_objective_options(objective_->options()));
    if (objective_->options().cached_confidence)
        cached_probs_ = load_score_probs(opts_.model.confidence_cache, true, "confidences");
    if (objective_->needs_reference_scores())
        reference_probs_ = load_score_probs(opts_.model.rho1_reference_scores, false, "rho1 reference scores");
}

// A score file's per-token probabilities for the training data; check_model: made by model.path
// (a rho1 reference model may be another one; tokenizer and data must match either way).
std::vector<std::vector<float>> Trainer::load_score_probs(const std::string& file, bool check_model,
                                                          const char* what) const {
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
    std::vector<std::vector<float>> probs(records.size());
    for (size_t i = 0; i < records.size(); ++i) probs[i] = std::move(records[i].prob);
    log_info("%s from the score file %s (model %s)", what, file.c_str(), h.model.c_str());
    return probs;
}

void Trainer::plan_steps() {
    global_batch_ = opts_.train.micro_batch_size * opts_.train.grad_accum * comm_.world;
    order_.seed = static_cast<uint64_t>(opts_.train.seed);
    order_.shuffle = opts_.data.shuffle;
    order_.group_by_length = opts_.data.group_by_length;
    order_.group_window = std::max<int64_t>(64, 16 * global_batch_);
    order_.packing = opts_.data.packing;
    order_.max_seq_len = opts_.data.max_seq_len;
    int64_t total = opts_.train.max_steps;
    if (total <= 0) {
        total = 0;
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
    log_plan();
}

// The attention kernel on a GPU and the plan of steps, in the log.
void Trainer::log_plan() const {
    if (device_.is_cuda()) {
        const ModelConfig& mc = model_->config();
        auto kernel = [&](bool packed) {
            return sdpa_backend_for(device_, dtype_, mc.n_head, mc.n_head_kv, mc.head_dim, opts_.data.max_seq_len, packed);
        };
        if (opts_.data.packing)
            log_info("attention kernel on %s: %s (packed rows: segment mask)", device_.str().c_str(), kernel(true).c_str());
        else
            log_info("attention kernel on %s: %s (causal; right padding needs no mask)", device_.str().c_str(),
                     kernel(false).c_str());
    }
    if (steps_)
        log_info("%lld optimizer steps of %s; warmup %lld, %s schedule, peak lr %g", (long long)state_.total_steps,
                 steps_->name().c_str(), (long long)schedule_.warmup_steps, schedule_.kind.c_str(), opts_.train.lr);
    else
        log_info("%lld optimizer steps of %lld rows (micro-batch %lld x accumulation %lld x %lld rank(s)); warmup %lld, "
                 "%s schedule, peak lr %g",
                 (long long)state_.total_steps, (long long)global_batch_, (long long)opts_.train.micro_batch_size,
                 (long long)opts_.train.grad_accum, (long long)comm_.world, (long long)schedule_.warmup_steps,
                 schedule_.kind.c_str(), opts_.train.lr);
}

// The checkpoint's state (checked against this run's plan), optimizer state and generators.
void Trainer::restore() {
    try {
        state_ = resumed_state(resume_from_, opts_, state_);
        // The optimizer state in whatever layout wrote it (one file, or one shard file per rank of
        // any world size and ZeRO stage): each rank reads the elements it holds now.
        const OptimizerFiles files = optimizer_files_open(resume_from_, state_);
        optim_->load_state(state_reader_of(files.tensors), state_.step);
        generators_restore(files, comm_, device_);
    } catch (const InputError& e) {
        throw with_resume_hint(e);
    }
    checkpoints_.saved_at(state_.step);
    log_info("resumed from %s at step %lld (epoch %lld, step %lld of it), %lld targets trained", resume_from_.c_str(),
             (long long)state_.step, (long long)state_.epoch, (long long)state_.step_in_epoch,
             (long long)state_.targets_trained);
}

// ------------------------------------------------------------------ steps

const std::vector<Row>& Trainer::rows_for_epoch(int64_t epoch) {
    if (epoch != cached_epoch_) {
        cached_rows_ = epoch_rows(train_, order_, epoch);
        cached_epoch_ = epoch;
    }
    return cached_rows_;
}

// The next step on the training data: this rank's rows of it (an epoch whose steps are all taken
// is passed over), their micro-batches, train_step.
StepReport Trainer::data_step() {
    while (state_.step_in_epoch >=
           steps_per_epoch(static_cast<int64_t>(rows_for_epoch(state_.epoch).size()), global_batch_)) {
        ++state_.epoch;
        state_.step_in_epoch = 0;
    }
    const std::vector<Row> rows =
        step_rows_for_rank(rows_for_epoch(state_.epoch), global_batch_, state_.step_in_epoch, comm_.rank, comm_.world);
    return timed_step(device_, [&] {
        const size_t mbs = static_cast<size_t>(opts_.train.micro_batch_size);
        std::vector<MicroBatch> micro;
        for (size_t b = 0; b < rows.size(); b += mbs) {
            std::vector<Row> part(rows.begin() + b, rows.begin() + std::min(rows.size(), b + mbs));
            micro.push_back(make_micro_batch(train_, part, pad_id_, device_, cached_probs_.empty() ? nullptr : &cached_probs_,
                                             reference_probs_.empty() ? nullptr : &reference_probs_));
        }
        TrainStepOptions so;
        so.lr = opts_.train.lr * lr_multiplier(schedule_, state_.step);
        so.grad_clip = opts_.train.grad_clip;
        so.step = state_.step;
        so.log_sample_weights = opts_.log.sample_weights;
        so.reference = reference_ ? &reference_ : nullptr;
        StepReport r;
        static_cast<TrainStepResult&>(r) = train_step(model_, *objective_, *optim_, comm_, micro, so);
        r.lr = so.lr;
        return r;
    });
}

StepContext Trainer::step_context() {
    StepContext c{model_, *optim_, comm_, pipe_, device_, opts_.run.dir};
    c.pad_id = pad_id_;
    c.reference = reference_ ? &reference_ : nullptr;
    c.lora = lora_.has_value();
    c.step = state_.step;
    c.lr = opts_.train.lr * lr_multiplier(schedule_, state_.step);
    c.grad_clip = opts_.train.grad_clip;
    return c;
}

// One step of the StepSource, reported as a data step is. A signal during it (its judging) stops
// the run with the last step's checkpoint: the step was not taken, and a resumed run takes it
// again, drawing the same samples.
StepReport Trainer::source_step() {
    const StepContext ctx = step_context();
    try {
        return timed_step(device_, [&] {
            SourceStepResult s = steps_->step(ctx);
            StepReport r;
            r.applied = s.applied;
            r.non_finite = s.non_finite;
            r.loss = s.loss;
            r.grad_norm = s.grad_norm;
            r.tokens = s.tokens;
            r.targets = s.tokens;
            r.lr = ctx.lr;
            r.source_metrics = s.metrics;
            r.source_progress = s.progress;
            return r;
        });
    } catch (const StoppedBySignal&) {
        save_checkpoint();
        metrics_.finish_progress();
        throw StoppedBySignal(strprintf("stopped by %s during step %lld, which was not taken; checkpoint "
                                        "of step %lld saved in %s; continue with --resume auto",
                                        stop_cause().c_str(), (long long)state_.step + 1, (long long)state_.step,
                                        opts_.run.dir.c_str()));
    }
}

// The run's bookkeeping of a step's outcome: skipped steps, non-finite steps in a row (stopping
// at train.max_bad_steps), target tokens trained.
void Trainer::account(const StepReport& r) {
    if (r.non_finite) {
        ++state_.skipped_steps;
        ++state_.bad_in_row;
        log_warn("step %lld: non-finite loss or gradient, step skipped (%lld in a row, limit %lld)",
                 (long long)state_.step, (long long)state_.bad_in_row, (long long)opts_.train.max_bad_steps);
        if (state_.bad_in_row >= opts_.train.max_bad_steps) {
            const std::string last = checkpoint_latest(opts_.run.dir);
            throw RuntimeFailure(strprintf("%lld non-finite steps in a row (train.max_bad_steps): stopping; "
                                           "lower train.lr or check the data (last complete checkpoint: %s)",
                                           (long long)state_.bad_in_row, last.empty() ? "none" : last.c_str()));
        }
    } else if (r.nothing_kept) {
        ++state_.skipped_steps;
        log_warn("step %lld: no token kept by the objective (denominator 0); weights unchanged", (long long)state_.step);
    } else {
        state_.bad_in_row = 0;
    }
    state_.targets_trained += r.targets;
}

// Every rank stops at the same step, also when only some of them were signalled (the others
// would wait in the next step's collectives).
bool Trainer::stop_agreed() const {
    bool stop = signals_stop_requested();
    if (comm_.world > 1) stop = comm_.sum_vec({stop ? 1.0 : 0.0})[0] > 0;
    return stop;
}

// A run in which every step was skipped trained nothing: it fails before its last checkpoint.
void Trainer::fail_if_untrained() const {
    if (state_.step > 0 && state_.skipped_steps >= state_.step)
        throw RuntimeFailure(strprintf("all %lld steps were skipped (non-finite loss or no token kept by the objective): "
                                       "nothing was trained; check the data, train.lr and the objective's settings",
                                       (long long)state_.step));
}

void Trainer::eval_and_record(const char* when) {
    if (eval_.examples.empty()) return;
    auto t0 = std::chrono::steady_clock::now();
    EvalBatching b;
    b.micro_batch_size = opts_.train.micro_batch_size;
    b.group_window = order_.group_window;
    b.pad_id = pad_id_;
    b.device = device_;
    EvalResult e;
    try {
        e = evaluate(model_, *eval_objective_, *optim_, comm_, eval_, b);
    } catch (const NonFiniteError& err) {
        log_warn("eval (%s): %s", when, err.what());
    }
    log_info("eval (%s, step %lld): loss %.4f | cross-entropy %.4f over %lld targets (%.1fs)", when,
             (long long)state_.step, e.loss, e.ce, (long long)e.n_targets, seconds_since(t0));
    state_.history.push_back(
        {{"step", state_.step}, {"when", when}, {"eval_loss", metric_number(e.loss)}, {"eval_ce", metric_number(e.ce)}});
    metrics_.eval(e, state_.step);
}

int train_run(const TrainOptions& opts, const Comm& comm) {
    Trainer t(opts, comm);
    return t.run();
}

}  // namespace cuset
