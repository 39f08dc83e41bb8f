// GRPO as the trainer's steps (rl/grpo_steps.h).
#include "cuset/rl/grpo_steps.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/input_file.h"
#include "cuset/core/journal.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/eval/eval_run.h"
#include "cuset/eval/repair.h"
#include "cuset/generate/generate_run.h"
#include "cuset/model/model_config.h"
#include "cuset/model/safetensors.h"
#include "cuset/model/safetensors_torch.h"

namespace cuset::rl {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Per group of a rollout's `groups`: true when no answer passed and every trajectory has the same
// finite return (a single-turn row's reward, a multi-turn trajectory's first-turn return): all
// advantages 0, nothing learnt.
std::vector<bool> groups_without_signal(const std::vector<RolloutRecord>& records, size_t groups) {
    std::vector<bool> passed(groups, false), differ(groups, false), seen(groups, false);
    std::vector<double> value(groups, 0.0);
    for (const RolloutRecord& r : records) {
        const size_t g = static_cast<size_t>(r.group);
        if (g >= groups) throw RuntimeFailure("grpo: a rollout record of group " + std::to_string(g));
        if (judge::status_passed(r.status)) passed[g] = true;
        if (r.turn > 1) continue;
        const double v = r.turn == 0 ? r.reward : r.ret;
        if (!std::isfinite(v) || (seen[g] && v != value[g])) differ[g] = true;
        seen[g] = true;
        value[g] = v;
    }
    std::vector<bool> out(groups);
    for (size_t g = 0; g < groups; ++g) out[g] = seen[g] && !passed[g] && !differ[g];
    return out;
}

// The rewards file cut back to the records of steps <= `step` (a stopped run may have written
// past its last checkpoint), replaced atomically; a line that is not a record ends the cut there.
void cut_rewards(const std::string& path, int64_t step) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) return;
    require_own_file(path, "rewards file");
    std::ifstream in(path);
    std::string kept, line;
    int64_t dropped = 0;
    while (std::getline(in, line)) {
        int64_t s = -1;
        try {
            const json j = json::parse(line);
            if (j.is_object() && j.contains("step") && j["step"].is_number_integer()) s = j["step"].get<int64_t>();
        } catch (const json::exception&) {
        }
        if (s >= 1 && s <= step) kept += line + "\n";
        else ++dropped;
    }
    in.close();
    if (dropped == 0) return;
    atomic_write(path, kept, "rewards file");
    if (step > 0) log_info("%s: %lld record(s) past step %lld removed (written after the checkpoint)", path.c_str(),
                           (long long)dropped, (long long)step);
}

}  // namespace

GrpoSteps::GrpoSteps(GrpoStepsOptions o) : o_(std::move(o)) {
    try {
        tasks_ = eval::load_tasks(o_.tasks_file);
    } catch (const InputError& e) {
        throw InputError(std::string("objective.grpo.tasks: ") + e.what());
    }
    if (tasks_.empty()) throw InputError(o_.tasks_file + ": no task (objective.grpo.tasks)");
    data_hash_ = Hasher().add("grpo").add(hash_file(o_.tasks_file)).hex();
    o_.rollout.group_size = o_.step.num_generations;
}

GrpoSteps::~GrpoSteps() {
    if (work_dir_.empty()) return;
    std::error_code ec;  // the judge's scratch folder (begin() checked it is cuset's)
    fs::remove_all(work_dir_, ec);
    fs::remove(fs::path(work_dir_).parent_path(), ec);  // grpo-work/, once no rank's folder is left
}

std::string GrpoSteps::name() const {
    return strprintf("GRPO: %lld task(s) x %lld completions (%s, judge %s) from %s (%zu tasks)",
                     (long long)o_.tasks_per_step, (long long)o_.step.num_generations,
                     grpo_loss_type_name(o_.step.loss.loss_type), judge::judge_mode_name(o_.rollout.judge.runner.mode),
                     o_.tasks_file.c_str(), tasks_.size());
}

namespace {

// The file of rank `rank`'s generation batch in a checkpoint folder.
std::string rollout_file(const std::string& dir, int64_t rank) {
    return (fs::path(dir) / ("grpo-rollout-rank" + std::to_string(rank) + ".safetensors")).string();
}

// The tensors of that file, by name: what a step on a batch again trains on.
const std::pair<const char*, at::Tensor GrpoRollout::*> kBatchTensors[] = {
    {"prompt_ids", &GrpoRollout::prompt_ids},         {"prompt_mask", &GrpoRollout::prompt_mask},
    {"completion_ids", &GrpoRollout::completion_ids}, {"completion_mask", &GrpoRollout::completion_mask},
    {"rewards", &GrpoRollout::rewards},               {"old_logps", &GrpoRollout::old_logps},
    {"token_weights", &GrpoRollout::token_weights},   // only with objective.grpo.token_weights: cuset
    {"advantages", &GrpoRollout::advantages}};        // only with objective.grpo.turns > 1

}  // namespace

namespace {

// The file of the task schedule in a checkpoint folder (retry_all_failed).
std::string schedule_file(const std::string& dir) { return (fs::path(dir) / "grpo-schedule.json").string(); }

}  // namespace

void GrpoSteps::save_state(const std::string& dir, int64_t steps_taken, const Comm& comm) const {
    if (schedule_ && comm.rank == 0) {  // the same on every rank: the order after the last generation taken
        if (scheduled_generation_ != (steps_taken - 1) / o_.num_iterations)
            throw RuntimeFailure(strprintf("grpo: a checkpoint of step %lld with the task schedule of generation %lld",
                                           (long long)steps_taken, (long long)scheduled_generation_ + 1));
        const json j = {{"schedule", schedule_->to_json()}, {"generation", scheduled_generation_}, {"tasks", data_hash_}};
        atomic_write(schedule_file(dir), j.dump(1) + "\n", "task schedule");
    }
    // Only a checkpoint inside a generation needs its batch: the next step trains on it again.
    if (steps_taken % o_.num_iterations == 0) return;
    if (held_generation_ != (steps_taken - 1) / o_.num_iterations)
        throw RuntimeFailure(strprintf("grpo: a checkpoint of step %lld without the generation batch it trains on",
                                       (long long)steps_taken));
    NamedTensors t;
    for (const auto& [name, field] : kBatchTensors)
        if ((held_.*field).defined()) t.emplace_back(name, held_.*field);
    // Its identity, verified on resume: the generation it was sampled for, the checkpoint's step,
    // the rank and the number of ranks, the task file.
    safetensors_save(rollout_file(dir, comm.rank), t,
                     {{"generation", std::to_string(held_generation_)},
                      {"step", std::to_string(steps_taken)},
                      {"rank", std::to_string(comm.rank)},
                      {"world", std::to_string(comm.world)},
                      {"tasks", data_hash_}});
}

namespace {

// A generation batch read back from a checkpoint is the one this resumed step trains on, and its
// tensors are well formed: InputError naming the file and what differs, never a silent use.
void check_generation_batch(const std::string& f, const std::map<std::string, std::string>& meta,
                            const std::map<std::string, std::string>& want, const std::map<std::string, at::Tensor>& t,
                            int64_t vocab) {
    for (const auto& [key, value] : want) {
        const auto it = meta.find(key);
        if (it == meta.end() || it->second != value)
            throw InputError(f + ": a generation batch of " + key + " " + (it == meta.end() ? "(none)" : it->second) +
                             ", but the step resumed from this checkpoint needs " + key + " " + value +
                             ": the checkpoint's files do not belong together; resume from another checkpoint");
    }
    auto bad = [&](const std::string& what) {
        throw InputError(f + ": " + what + " (a damaged generation batch; resume from another checkpoint)");
    };
    const at::Tensor& ids = t.at("completion_ids");
    if (ids.dim() != 2) bad("completion_ids is not [N, T]");
    const int64_t n = ids.size(0), len = ids.size(1);
    auto want_shape = [&](const char* name, std::vector<int64_t> shape, c10::ScalarType dtype) {
        const auto it = t.find(name);
        if (it == t.end()) return;
        if (it->second.sizes().vec() != shape || it->second.scalar_type() != dtype)
            bad(std::string(name) + " is " + c10::toString(it->second.scalar_type()) + " " +
                c10::str(it->second.sizes()) + ", not " + c10::toString(dtype) + " " + c10::str(at::IntArrayRef(shape)));
    };
    const int64_t p = t.at("prompt_ids").dim() == 2 ? t.at("prompt_ids").size(1) : -1;
    want_shape("prompt_ids", {n, p}, at::kLong);
    want_shape("prompt_mask", {n, p}, at::kLong);
    want_shape("completion_ids", {n, len}, at::kLong);
    want_shape("completion_mask", {n, len}, at::kLong);
    want_shape("rewards", {n}, at::kFloat);
    want_shape("old_logps", {n, len}, at::kFloat);
    want_shape("token_weights", {n, len}, at::kFloat);
    want_shape("advantages", {n}, at::kFloat);
    for (const char* name : {"prompt_ids", "completion_ids"}) {
        const at::Tensor& x = t.at(name);
        if (x.numel() > 0 && (x.min().item<int64_t>() < 0 || x.max().item<int64_t>() >= vocab))
            bad(std::string(name) + " holds token ids outside the model's vocabulary [0, " + std::to_string(vocab) + ")");
    }
    for (const char* name : {"prompt_mask", "completion_mask"}) {
        const at::Tensor& m = t.at(name);
        if (!at::logical_or(m == 0, m == 1).all().item<bool>()) bad(std::string(name) + " holds values other than 0 and 1");
    }
    if (const auto it = t.find("old_logps"); it != t.end()) {
        const at::Tensor real = it->second.masked_select(t.at("completion_mask").to(at::kBool));
        if (!at::isfinite(real).all().item<bool>()) bad("old_logps is not finite on completion tokens");
    }
}

}  // namespace

void GrpoSteps::begin(const StepContext& ctx, int64_t resumed_step, const std::string& resumed_from) {
    grpo_step_tasks(o_.seed, tasks_.size(), o_.tasks_per_step, 0, ctx.comm.rank, ctx.comm.world);  // its split rule, checked now
    grpo_step_check(o_.step, ctx.comm.world);  // before anything is sampled
    std::vector<std::string> stop = o_.generate.stop_strings;
    std::vector<int64_t> model_eos;
    if (!o_.model_dir.empty()) {
        const ModelConfig mc = model_config_load(o_.model_dir);
        model_eos = mc.eos_token_ids;
        o_.generate.context_length = mc.max_position_embeddings;
    }
    o_.generate.eos_ids = generate_eos_ids(*ctx.pipe.tokenizer, *ctx.pipe.formatter, o_.model_dir, model_eos, &stop);
    o_.generate.stop_strings = stop;
    // The judge's scratch folder, this rank's, inside the run folder.
    work_dir_ = (fs::path(ctx.run_dir) / "grpo-work" / ("rank" + std::to_string(ctx.comm.rank))).string();
    eval::judge_work_dir_check(work_dir_, {o_.tasks_file}, "train (grpo)");
    eval::judge_work_dir_create(work_dir_, "train (grpo)");
    o_.rollout.judge.runner.work_dir = work_dir_;
    // A program judged once in this session is not judged again (the same task, program, sample
    // index and judge settings: eval/judge.h's journal): a policy repeats itself often.
    o_.rollout.judge.journal = (fs::path(work_dir_) / "verdicts.jsonl").string();
    rewards_path_ = (fs::path(ctx.run_dir) / (ctx.comm.rank == 0 ? std::string("rewards.jsonl")
                                                                  : "rewards-rank" + std::to_string(ctx.comm.rank) + ".jsonl"))
                        .string();
    cut_rewards(rewards_path_, resumed_step);
    if (resumed_step % o_.num_iterations != 0) {  // resumed inside a generation: its batch, as saved
        const std::string f = rollout_file(resumed_from, ctx.comm.rank);
        if (!fs::exists(f))
            throw InputError(strprintf("checkpoint %s is inside a GRPO generation (step %lld, num_iterations %lld) but "
                                       "holds no %s: it was written by another number of ranks or by an older cuset; "
                                       "resume it with the ranks that wrote it",
                                       resumed_from.c_str(), (long long)resumed_step, (long long)o_.num_iterations,
                                       fs::path(f).filename().c_str()));
        const std::map<std::string, std::string> meta = SafetensorsFile(f).metadata();
        const auto w = meta.find("world");
        if (w == meta.end() || w->second != std::to_string(ctx.comm.world))
            throw InputError(strprintf("%s: a generation batch of %s rank(s), this run has %lld: resume a checkpoint "
                                       "inside a GRPO generation with the ranks that wrote it",
                                       f.c_str(), w == meta.end() ? "an unknown number of" : w->second.c_str(),
                                       (long long)ctx.comm.world));
        std::map<std::string, at::Tensor> t = safetensors_load(f, c10::kCPU);
        for (const auto& [name, field] : kBatchTensors) {
            auto it = t.find(name);
            const std::string n = name;
            const bool needed = n == "token_weights" ? o_.token_weights.enabled
                                : n == "advantages"  ? o_.multi_turn.turns > 1
                                                     : true;
            if (it == t.end() && needed)
                throw InputError(f + ": no tensor '" + name + "' (not a GRPO generation batch of this run's settings)");
            if (it != t.end() && !needed)
                throw InputError(f + ": a generation batch with " +
                                 (n == "advantages" ? std::string("per-turn advantages, but this run has objective.grpo.turns 1")
                                                    : std::string("CuSeT token weights, but this run has no "
                                                                  "objective.grpo.token_weights: cuset")) +
                                 "; resume it with the settings that wrote it");
            if (it != t.end()) held_.*field = it->second;
        }
        held_generation_ = (resumed_step - 1) / o_.num_iterations;
        check_generation_batch(f, meta,
                               {{"generation", std::to_string(held_generation_)},
                                {"step", std::to_string(resumed_step)},
                                {"rank", std::to_string(ctx.comm.rank)},
                                {"tasks", data_hash_}},
                               t, ctx.model->config().vocab_size);
    }
    if (o_.retry_all_failed) {
        schedule_.emplace(o_.seed, tasks_.size());
        if (resumed_step > 0) {  // the schedule with the retries queued so far, as saved
            const std::string f = schedule_file(resumed_from);
            if (!fs::exists(f))
                throw InputError("checkpoint " + resumed_from + " holds no grpo-schedule.json: it was written without "
                                 "objective.grpo.retry_all_failed; resume it with the settings that wrote it");
            const json j = json_parse(read_input_file(f, "task schedule", size_t(64) << 20), f);
            const int64_t want = (resumed_step - 1) / o_.num_iterations;
            if (!j.is_object() || !j.contains("generation") || !j["generation"].is_number_integer() ||
                j["generation"].get<int64_t>() != want || !j.contains("tasks") || j["tasks"] != data_hash_)
                throw InputError(f + ": not the task schedule of generation " + std::to_string(want + 1) + " of this "
                                 "task file: the checkpoint's files do not belong together; resume from another checkpoint");
            schedule_ = TaskSchedule::from_json(j.value("schedule", json()), o_.seed, tasks_.size(), f);
            scheduled_generation_ = want;
        }
    } else if (resumed_step > 0 && fs::exists(schedule_file(resumed_from))) {
        throw InputError("checkpoint " + resumed_from + " holds a task schedule with retries, but this run has no "
                         "objective.grpo.retry_all_failed; resume it with the settings that wrote it");
    }
    rewards_.open(rewards_path_, std::ios::app);  // cut_rewards checked that it is the run's own file
    if (!rewards_) throw RuntimeFailure("cannot write " + rewards_path_);
}

// The step's tasks: with retry_all_failed, every rank takes the step's tasks from the schedule
// (all), then its share (mine); otherwise its share of the seeded order.
struct GrpoSteps::Draw {
    std::vector<ScheduledTask> all, mine;  // retry_all_failed only
    std::vector<eval::Task> tasks;         // this rank's tasks, in order
};

// Where the step's seconds went, and the tokens it sampled.
struct GrpoSteps::Times {
    double generate_s = 0, judge_s = 0, update_s = 0;
    int64_t generated = 0;
};

// What the step's completions came to, summed over the ranks.
struct GrpoSteps::Counts {
    std::vector<double> statuses = std::vector<double>(judge::kStatusCount, 0.0);  // by judge::Status
    double tokens = 0, truncated = 0, completions = 0;
    double judged_while_sampling = 0, trajectories = 0, turns_taken = 0, fixed = 0;
    std::vector<double> answered, passed;  // multi-turn: per turn, the rows that answered at it, that passed

    // Every field summed over the ranks (every rank packs the same positions).
    void reduce(const Comm& comm) {
        std::vector<double> v = statuses;
        v.insert(v.end(), {tokens, truncated, completions, judged_while_sampling, trajectories, turns_taken, fixed});
        v.insert(v.end(), answered.begin(), answered.end());
        v.insert(v.end(), passed.begin(), passed.end());
        v = comm.sum_vec(v);
        size_t at = 0;
        for (double& x : statuses) x = v[at++];
        for (double* x : {&tokens, &truncated, &completions, &judged_while_sampling, &trajectories, &turns_taken, &fixed})
            *x = v[at++];
        for (double& x : answered) x = v[at++];
        for (double& x : passed) x = v[at++];
    }
};

GrpoSteps::Draw GrpoSteps::draw(const StepContext& ctx, int64_t generation) {
    Draw d;
    std::vector<size_t> idx;
    if (schedule_) {
        if (scheduled_generation_ != generation - 1)
            throw RuntimeFailure(strprintf("grpo: generation %lld after the task schedule of generation %lld",
                                           (long long)generation + 1, (long long)scheduled_generation_ + 1));
        d.all = schedule_->take(o_.tasks_per_step);
        scheduled_generation_ = generation;
        const int64_t share = o_.tasks_per_step / ctx.comm.world;
        d.mine = std::vector<ScheduledTask>(d.all.begin() + ctx.comm.rank * share, d.all.begin() + (ctx.comm.rank + 1) * share);
        for (const ScheduledTask& s : d.mine) idx.push_back(s.task);
    } else {
        idx = grpo_step_tasks(o_.seed, tasks_.size(), o_.tasks_per_step, generation, ctx.comm.rank, ctx.comm.world);
    }
    for (size_t i : idx) d.tasks.push_back(tasks_[i]);
    return d;
}

Rollout GrpoSteps::roll_out(const StepContext& ctx, const Draw& d, int64_t generation, Times& t) {
    SampleFn sample = [&](const std::vector<GenerationInput>& inputs, const FinishFn& on_finish) {
        auto t0 = std::chrono::steady_clock::now();
        EvalModeScope eval_mode(ctx.model);  // sampled in eval mode (no LoRA dropout), trained in train mode
        Generator gen(ctx.model, *ctx.pipe.tokenizer, o_.generate, ctx.device);
        // One batch: every completion of the rank; a group is judged as soon as it is complete.
        std::vector<GenerationOutput> out = gen.generate(inputs, {}, on_finish);
        for (const GenerationOutput& g : out) t.generated += static_cast<int64_t>(g.tokens.size());
        t.generate_s += seconds_since(t0);
        return out;
    };
    RolloutOptions ro = o_.rollout;
    ro.seed = o_.seed;
    ro.step = generation;
    auto t_roll = std::chrono::steady_clock::now();
    // A signal stops this rank's judge at once; the ranks then agree to abandon the step, so
    // that none waits in the update's collectives for one that stopped.
    Rollout rollout;
    bool stopped = false;
    try {
        rollout = o_.multi_turn.turns > 1
                      ? multi_turn_rollout(sample, *ctx.pipe.formatter, d.tasks, ctx.pad_id, ro, o_.multi_turn)
                      : grpo_rollout(sample, *ctx.pipe.formatter, d.tasks, ctx.pad_id, ro);
    } catch (const StoppedBySignal&) {
        stopped = true;
    }
    if (ctx.comm.world > 1) stopped = ctx.comm.sum_vec({stopped ? 1.0 : 0.0})[0] > 0;
    if (stopped) throw StoppedBySignal("the step's judging was stopped by a signal");
    t.judge_s = seconds_since(t_roll) - t.generate_s;
    return rollout;
}

int64_t GrpoSteps::queue_retries(const StepContext& ctx, const Rollout& rollout, const Draw& d) {
    // The step's groups without signal or pass, over all ranks, queued in step order.
    const std::vector<bool> none = groups_without_signal(rollout.records, d.mine.size());
    std::vector<double> flags(d.all.size(), 0.0);
    const size_t first = d.mine.size() * static_cast<size_t>(ctx.comm.rank);
    for (size_t g = 0; g < none.size(); ++g) flags[first + g] = none[g] ? 1.0 : 0.0;
    if (ctx.comm.world > 1) flags = ctx.comm.sum_vec(flags);
    int64_t queued = 0;
    std::string ids;
    for (size_t j = 0; j < d.all.size(); ++j)
        if (flags[j] > 0 && !d.all[j].retry && schedule_->queue_retry(d.all[j].task)) {
            ++queued;
            ids += (ids.empty() ? "" : ", ") + tasks_[d.all[j].task].id_text;
        }
    if (queued > 0 && ctx.comm.rank == 0)
        log_info("grpo: step %lld: task(s) %s gave no signal (every trajectory failed with the same return): "
                 "taken again at the end of pass %lld",
                 (long long)ctx.step + 1, ids.c_str(), (long long)schedule_->pass() + 1);
    return queued;
}

void GrpoSteps::prepare_batch(const StepContext& ctx, Rollout& rollout, int64_t generation) {
    if (o_.num_iterations > 1)  // the sampling policy's log-probabilities, before its first update
        rollout.batch.old_logps = rollout_old_logps(ctx.model, rollout.batch, o_.step);  // [N, T]
    if (o_.token_weights.enabled) {  // CuSeT's coefficients of the sampling policy's confidences
        const CompletionWeights w =
            completion_token_weights(ctx.model, *ctx.pipe.tokenizer, rollout.batch, o_.step, o_.token_weights);
        rollout.batch.token_weights = w.weights;  // [N, T]
        weight_sums_ = ctx.comm.sum_vec({static_cast<double>(w.tokens), static_cast<double>(w.kept),
                                         static_cast<double>(w.sensitive), w.weight_sum,
                                         static_cast<double>(w.completions)});
    }
    held_ = rollout.batch;
    held_generation_ = generation;
}

GrpoStepResult GrpoSteps::update(const StepContext& ctx) {
    GrpoStepOptions so = o_.step;
    so.lr = ctx.lr;
    so.grad_clip = ctx.grad_clip;
    so.reference = ctx.reference;
    so.reference_is_base = so.loss.beta != 0.0 && ctx.lora;
    if (so.loss.beta != 0.0 && !so.reference_is_base && !so.reference)
        throw RuntimeFailure("grpo: beta != 0 but the trainer loaded no reference model");
    return grpo_step(ctx.model, ctx.optim, ctx.comm, held_, so);
}

void GrpoSteps::record(const StepContext& ctx, const Rollout& rollout, const Draw& d) {
    for (const RolloutRecord& rec : rollout.records) {
        json j = {{"step", ctx.step + 1},   {"task", rec.task},     {"sample", rec.sample},
                  {"status", judge::status_name(rec.status)}, {"reason", rec.reason}, {"tokens", rec.tokens},
                  {"finish", rec.finish}};
        j["reward"] = std::isfinite(rec.reward) ? json(rec.reward) : json(nullptr);
        if (!rec.error.empty()) j["error"] = rec.error;
        if (!d.mine.empty() && d.mine.at(static_cast<size_t>(rec.group)).retry) j["retry"] = true;
        if (rec.speedup) j["speedup"] = *rec.speedup;
        if (!rec.speedup_note.empty()) j["speedup_note"] = rec.speedup_note;
        if (rec.turn > 0) {  // a multi-turn rollout's row
            j["turn"] = rec.turn;
            j["return"] = std::isfinite(rec.ret) ? json(rec.ret) : json(nullptr);
            j["advantage"] = rec.advantage;
        }
        rewards_ << json_text(j) << "\n";
    }
    rewards_.flush();
}

GrpoSteps::Counts GrpoSteps::count(const StepContext& ctx, const Rollout& rollout) const {
    Counts c;
    const int64_t T = o_.multi_turn.turns;
    c.answered.assign(T > 1 ? static_cast<size_t>(T) : 0, 0.0);
    c.passed.assign(c.answered.size(), 0.0);
    c.judged_while_sampling = static_cast<double>(rollout.groups_judged_while_sampling);
    c.trajectories = static_cast<double>(rollout.trajectories);
    c.turns_taken = static_cast<double>(rollout.turns_taken);
    c.fixed = static_cast<double>(rollout.fixed);
    for (const RolloutRecord& rec : rollout.records) {
        c.statuses[static_cast<size_t>(rec.status)] += 1;
        c.tokens += static_cast<double>(rec.tokens);
        c.truncated += rec.finish == "length" ? 1 : 0;
        c.completions += 1;
        if (T > 1 && rec.turn >= 1 && rec.turn <= T) {
            c.answered[static_cast<size_t>(rec.turn - 1)] += 1;
            c.passed[static_cast<size_t>(rec.turn - 1)] += judge::status_passed(rec.status) ? 1 : 0;
        }
    }
    c.reduce(ctx.comm);
    return c;
}

SourceStepResult GrpoSteps::step(const StepContext& ctx) {
    const int64_t generation = ctx.step / o_.num_iterations;
    const bool fresh = held_generation_ != generation;
    if (fresh && ctx.step % o_.num_iterations != 0)
        throw RuntimeFailure(strprintf("grpo: step %lld trains on generation %lld, which this run does not hold",
                                       (long long)ctx.step + 1, (long long)generation));
    Times times;
    Draw d;
    Rollout rollout;
    int64_t queued = 0;  // tasks queued for a retry after this step
    if (fresh) {
        d = draw(ctx, generation);
        rollout = roll_out(ctx, d, generation, times);
        if (schedule_) queued = queue_retries(ctx, rollout, d);
    }
    const auto t_update = std::chrono::steady_clock::now();
    if (fresh) prepare_batch(ctx, rollout, generation);
    const GrpoStepResult r = update(ctx);
    times.update_s = seconds_since(t_update);
    record(ctx, rollout, d);  // every completion's record, this rank's file
    const Counts c = count(ctx, rollout);

    SourceStepResult out;
    out.applied = r.applied;
    out.non_finite = r.non_finite;
    out.loss = r.loss;
    out.grad_norm = r.grad_norm;
    out.tokens = static_cast<int64_t>(r.stats.tokens);
    json st = json::object();
    for (size_t k = 0; k < c.statuses.size(); ++k)
        if (c.statuses[k] > 0) st[judge::status_name(static_cast<judge::Status>(k))] = static_cast<int64_t>(c.statuses[k]);
    out.metrics = metrics(r, c, st, d, queued, times, fresh, generation);
    if (fresh) {
        std::string top;
        for (auto it = st.begin(); it != st.end(); ++it) top += (top.empty() ? "" : " ") + it.key() + " " + it.value().dump();
        out.progress = strprintf("reward %.3f | %s", r.reward_mean, top.c_str());
        if (std::isfinite(r.reward_mean)) {
            if (first_reward_ < 0) first_reward_ = r.reward_mean;
            last_reward_ = r.reward_mean;
        }
        completions_ += r.completions;
    } else {
        out.progress = strprintf("reward %.3f | generation %lld again", r.reward_mean, (long long)generation + 1);
    }
    return out;
}

// The step's fields of metrics.jsonl. What was sampled and judged is logged at the step that
// sampled it; a step that trains on a batch again (num_iterations > 1) logs its update only.
json GrpoSteps::metrics(const GrpoStepResult& r, const Counts& c, const json& statuses, const Draw& d, int64_t queued,
                        const Times& t, bool fresh, int64_t generation) const {
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    const GrpoStats& s = r.stats;
    const double n = std::max(1.0, c.completions);
    json m = json::object();
    if (fresh) {
        m = {{"reward", num(r.reward_mean)},
             {"reward_std", num(r.reward_std)},
             {"completions", r.completions},
             {"zero_std_fraction", r.completions > 0 ? double(r.zero_std) / double(r.completions) : 0.0},
             {"completion_length", c.tokens / n},
             {"truncated_fraction", c.truncated / n},
             {"groups_judged_while_sampling", static_cast<int64_t>(c.judged_while_sampling)}};
        if (o_.multi_turn.turns > 1 && c.trajectories > 0) {  // per trajectory: turns taken, fixed by a later turn
            m["mean_turns"] = c.turns_taken / c.trajectories;
            m["fixed_fraction"] = c.fixed / c.trajectories;
            for (size_t k = 0; k < c.answered.size(); ++k)  // pass rate of the answers given at turn k + 1
                if (c.answered[k] > 0) m["pass_turn" + std::to_string(k + 1)] = c.passed[k] / c.answered[k];
        }
    }
    m["clip_ratio_low"] = s.clip_units > 0 ? s.clipped_low / s.clip_units : 0.0;
    m["clip_ratio_high"] = s.clip_units > 0 ? s.clipped_high / s.clip_units : 0.0;
    m["clip_ratio_region"] = s.clip_units > 0 ? s.clipped_region / s.clip_units : 0.0;
    m["generate_s"] = t.generate_s;
    m["judge_s"] = t.judge_s;
    m["update_s"] = t.update_s;
    if (fresh) m["generated_tokens_per_s"] = t.generate_s > 0 ? double(t.generated) / t.generate_s : 0.0;
    if (o_.num_iterations > 1) m["generation"] = generation + 1;
    if (fresh && schedule_) {  // the same on every rank
        m["retried_tasks"] = std::count_if(d.all.begin(), d.all.end(), [](const ScheduledTask& x) { return x.retry; });
        m["queued_for_retry"] = queued;
    }
    if (fresh && o_.token_weights.enabled) {  // the CuSeT weights of this generation's completion tokens
        const std::vector<double>& w = weight_sums_;
        m["cuset_kept_fraction"] = w[0] > 0 ? w[1] / w[0] : 0.0;
        m["cuset_sensitive_fraction"] = w[0] > 0 ? w[2] / w[0] : 0.0;
        m["cuset_weight_mean"] = w[4] > 0 ? w[3] / w[4] : 1.0;
    }
    if (o_.step.loss.beta != 0.0) m["kl"] = s.tokens > 0 ? s.kl / s.tokens : 0.0;
    if (fresh) m["status"] = statuses;
    return m;
}

std::string GrpoSteps::summary() const {
    if (completions_ == 0) return "";
    return strprintf("grpo: %lld completions judged this session; mean reward %.3f at the first step, %.3f at the last; "
                     "every verdict in %s",
                     (long long)completions_, first_reward_, last_reward_, rewards_path_.c_str());
}

}  // namespace cuset::rl
