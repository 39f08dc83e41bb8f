// What a training run reports (train/metrics_log.h).
#include "cuset/train/metrics_log.h"

#include <cmath>
#include <filesystem>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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

double tokens_per_s(const StepReport& r) { return r.seconds > 0 ? r.tokens / r.seconds : 0.0; }

// The objective's statistics of a metrics line (docs/training.md, What the log reports).
json objective_fields(const ObjectiveStats& s) {
    return {{"ce", metric_number(s.nll_mean())},
            {"kept_fraction", metric_number(s.kept_fraction())},
            {"sensitive_fraction", metric_number(s.sensitive_fraction())},
            {"kept_only_sensitive_fraction", metric_number(s.kept_only_sensitive_fraction())},
            {"mean_tau", metric_number(s.mean_tau())},
            {"w_min", metric_number(s.w_min)},
            {"w_mean", metric_number(s.w_mean())},
            {"w_max", metric_number(s.w_max)},
            {"conf_sensitive", metric_number(s.conf_mean_sensitive())},
            {"conf_plain", metric_number(s.conf_mean_plain())},
            {"token_weight_mean", metric_number(s.tok_w_mean())},
            {"kl_mean", metric_number(s.kl_mean())}};
}

}  // namespace

json metric_number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

MetricsLog::MetricsLog(const TrainOptions& opts, const Comm& comm, std::string run_dir)
    : log_(opts.log), method_(opts.model.method), comm_(comm), run_dir_(std::move(run_dir)),
      source_(static_cast<bool>(opts.steps)), start_(std::chrono::steady_clock::now()) {}

void MetricsLog::open() {
    if (!comm_.is_main()) return;
    metrics_.open((fs::path(run_dir_) / "metrics.jsonl").string(), std::ios::app);
    if (!metrics_) throw RuntimeFailure("cannot write " + run_dir_ + "/metrics.jsonl");
    if (log_.tensorboard) {
        tb_ = std::make_unique<TensorBoardWriter>(run_dir_);
        log_info("TensorBoard events in %s (tensorboard --logdir %s)", tb_->path().c_str(), run_dir_.c_str());
    }
}

void MetricsLog::start(const TrainerState& state) {
    // A bar on a terminal; otherwise the per-step log lines are the progress report.
    if (progress_bar_wanted(log_.progress) && comm_.is_main())
        progress_ = std::make_unique<Progress>("train", state.total_steps, "steps", true);
    start_ = std::chrono::steady_clock::now();
    start_step_ = state.step;
}

double MetricsLog::seconds() const { return seconds_since(start_); }

void MetricsLog::finish_progress() {
    if (progress_) progress_->finish();
}

void MetricsLog::step(const StepReport& r, const TrainerState& state) {
    const double elapsed = seconds();
    run_stats_.merge(r.stats);  // a StepSource's steps have none: merging them changes nothing
    if (r.applied) {
        tokens_per_s_sum_ += tokens_per_s(r);
        ++tokens_per_s_n_;
        last_loss_ = r.loss;
    }
    if (!comm_.is_main()) return;
    if (state.step % log_.every == 0 || state.step == state.total_steps) {
        const json m = step_line(r, state, elapsed);
        metrics_ << m.dump() << "\n" << std::flush;
        tensorboard_line(tb_.get(), m, "train", state.step);  // the numbers (a StepSource's status counts are not)
    }
    log_progress(r, state, elapsed);
}

json MetricsLog::step_line(const StepReport& r, const TrainerState& state, double elapsed) const {
    json m = {{"step", state.step},
              {"loss", metric_number(r.loss)},
              {"lr", r.lr},
              {"grad_norm", metric_number(r.grad_norm)},
              {"tokens", r.tokens},
              {"tokens_per_s", tokens_per_s(r)},
              {"step_time_s", r.seconds},
              {"elapsed_s", elapsed},
              {"skipped", !r.applied}};
    if (source_) {
        for (auto it = r.source_metrics.begin(); it != r.source_metrics.end(); ++it) m[it.key()] = it.value();
    } else {
        m["epoch"] = state.epoch;
        m["targets"] = r.targets;
        m.update(objective_fields(r.stats));
    }
    if (r.peak_bytes >= 0) m["peak_mem_mb"] = r.peak_bytes / double(1 << 20);
    return m;
}

void MetricsLog::log_progress(const StepReport& r, const TrainerState& state, double elapsed) {
    const std::string suffix = source_ ? strprintf("loss %.4f | lr %.2e | %s", r.loss, r.lr, r.source_progress.c_str())
                                       : strprintf("loss %.4f | lr %.2e | %.0f tok/s", r.loss, r.lr, tokens_per_s(r));
    if (progress_) {
        progress_->update(state.step - start_step_, suffix);
        return;
    }
    if (state.step % log_.every != 0) return;
    const std::string eta =
        format_duration(elapsed / (state.step - start_step_) * (state.total_steps - state.step));
    if (source_)
        log_info("step %lld/%lld | %s | grad norm %.3f | %.1fs | ETA %s", (long long)state.step,
                 (long long)state.total_steps, suffix.c_str(), r.grad_norm, r.seconds, eta.c_str());
    else
        log_info("step %lld/%lld | loss %.4f | lr %.2e | grad norm %.3f | kept %.1f%% | %.0f tokens/s | ETA %s",
                 (long long)state.step, (long long)state.total_steps, r.loss, r.lr, r.grad_norm,
                 100 * r.stats.kept_fraction(), tokens_per_s(r), eta.c_str());
}

void MetricsLog::eval(const EvalResult& e, int64_t step) {
    if (!comm_.is_main() || !metrics_) return;
    const json m = {{"step", step}, {"eval_loss", metric_number(e.loss)}, {"eval_ce", metric_number(e.ce)}};
    metrics_ << m.dump() << "\n" << std::flush;
    tensorboard_line(tb_.get(), m, "eval", step);
}

double MetricsLog::mean_tokens_per_s() const {
    return tokens_per_s_n_ ? tokens_per_s_sum_ / tokens_per_s_n_ : 0.0;
}

json MetricsLog::summary_json(const TrainerState& state, double train_seconds) const {
    json before = nullptr, after = nullptr;
    for (const json& h : state.history) {
        if (!h.contains("eval_loss")) continue;
        if (before.is_null()) before = h;
        after = h;
    }
    const ObjectiveStats& s = run_stats_;
    json summary = {{"run_dir", run_dir_},
                    {"method", method_},
                    {"steps", state.step},
                    {"total_steps", state.total_steps},
                    {"skipped_steps", state.skipped_steps},
                    {"targets_trained", state.targets_trained},
                    {"train_seconds_this_session", train_seconds},
                    {"tokens_per_s", mean_tokens_per_s()},
                    {"final_train_loss", metric_number(last_loss_)},
                    {"eval_before", before},
                    {"eval_after", after},
                    {"kept_fraction", metric_number(s.kept_fraction())},
                    {"sensitive_fraction", metric_number(s.sensitive_fraction())},
                    {"kept_only_sensitive_fraction", metric_number(s.kept_only_sensitive_fraction())},
                    {"weight", {{"min", metric_number(s.w_min)}, {"mean", metric_number(s.w_mean())}, {"max", metric_number(s.w_max)}}},
                    {"token_weight_mean", metric_number(s.tok_w_mean())},
                    {"kl_mean", metric_number(s.kl_mean())},
                    {"checkpoint", checkpoint_latest(run_dir_)}};
    for (const json& h : state.history)
        if (h.value("when", "") == "schedule extended") {
            summary["schedule_extended_at_step"] = h["step"];
            summary["schedule_extended_from_total_steps"] = h["total_steps_before"];
        }
    return summary;
}

void MetricsLog::write_summary(const TrainerState& state, double train_seconds, const StepSource* steps) const {
    if (!comm_.is_main()) return;
    const json summary = summary_json(state, train_seconds);
    file_write_atomic((fs::path(run_dir_) / "summary.json").string(), summary.dump(2) + "\n");
    auto fmt_eval = [](const json& e) {
        if (e.is_null()) return std::string("n/a");
        auto g = [&](const char* k) { return e[k].is_number() ? strprintf("%.4f", e[k].get<double>()) : std::string("n/a"); };
        return "loss " + g("eval_loss") + ", cross-entropy " + g("eval_ce");
    };
    const ObjectiveStats& s = run_stats_;
    const std::string ckpt = summary["checkpoint"];
    log_info("---------------------------------------------------------------- summary");
    log_info("method %s, %lld steps (%lld skipped), %lld targets trained", method_.c_str(), (long long)state.step,
             (long long)state.skipped_steps, (long long)state.targets_trained);
    log_info("eval before: %s", fmt_eval(summary["eval_before"]).c_str());
    log_info("eval after:  %s", fmt_eval(summary["eval_after"]).c_str());
    if (summary.contains("schedule_extended_at_step"))
        log_info("schedule extended at step %lld (from %lld to %lld steps)",
                 (long long)summary["schedule_extended_at_step"].get<int64_t>(),
                 (long long)summary["schedule_extended_from_total_steps"].get<int64_t>(), (long long)state.total_steps);
    if (s.n_valid > 0)
        log_info("kept %.1f%% of response tokens; %.1f%% sensitive; %.1f%% kept only because sensitive",
                 100 * s.kept_fraction(), 100 * s.sensitive_fraction(), 100 * s.kept_only_sensitive_fraction());
    if (s.n_samples > 0) log_info("sample weights: min %.3f, mean %.3f, max %.3f", s.w_min, s.w_mean(), s.w_max);
    if (steps && !steps->summary().empty()) log_info("%s", steps->summary().c_str());
    log_info("throughput %.0f tokens/s; checkpoint %s", mean_tokens_per_s(), ckpt.empty() ? "none" : ckpt.c_str());
    log_info("summary written to %s", (fs::path(run_dir_) / "summary.json").c_str());
}

}  // namespace cuset
