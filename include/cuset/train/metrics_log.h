// What a training run reports: metrics.jsonl, TensorBoard, the progress bar or the per-step log
// line, and at the end summary.json with the summary in the log; with the accounting over the run
// they need (throughput, the last loss, the objective's statistics). Rank 0 writes; every rank
// keeps the accounting. It takes no step and reads no checkpoint.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cuset/core/progress.h"
#include "cuset/core/tensorboard.h"
#include "cuset/train/checkpoint.h"
#include "cuset/train/comm.h"
#include "cuset/train/evaluation.h"
#include "cuset/train/train_options.h"
#include "cuset/train/train_step.h"

namespace cuset {

// A training step as the run reports it: the step itself, its learning rate, time and memory.
struct StepReport : TrainStepResult {
    double lr = 0.0;
    double seconds = 0.0;         // the step's wall time, its device work included
    int64_t peak_bytes = -1;      // peak device memory allocated during the step (-1: CPU)
    nlohmann::json source_metrics;  // a StepSource's fields of the metrics line (null for SFT steps)
    std::string source_progress;    // and its text for the progress line
};

// A number of a metrics or history line: null when not finite.
nlohmann::json metric_number(double v);

class MetricsLog {
public:
    MetricsLog(const TrainOptions& opts, const Comm& comm, std::string run_dir);

    // Opens metrics.jsonl (appended to) and, with log.tensorboard, an events file (rank 0).
    void open();
    // Starts the session's clock and, on a terminal, the progress bar at `state`'s step.
    void start(const TrainerState& state);
    // Step `state.step` has been taken: its accounting, its metrics line (every log.every steps
    // and the last) and its progress (the bar, or a log line every log.every steps).
    void step(const StepReport& r, const TrainerState& state);
    // The metrics line of an evaluation at `step`.
    void eval(const EvalResult& e, int64_t step);
    // Ends the progress bar, before the run's last messages.
    void finish_progress();
    // Seconds since start().
    double seconds() const;
    // summary.json and the summary in the log (rank 0): the evaluations of state.history, the
    // statistics over the session's steps, the newest checkpoint; `steps`' own line when not null.
    void write_summary(const TrainerState& state, double train_seconds, const StepSource* steps) const;

private:
    nlohmann::json step_line(const StepReport& r, const TrainerState& state, double elapsed) const;
    void log_progress(const StepReport& r, const TrainerState& state, double elapsed);
    nlohmann::json summary_json(const TrainerState& state, double train_seconds) const;
    double mean_tokens_per_s() const;

    TrainLogOptions log_;
    std::string method_;   // objective.method as named
    Comm comm_;
    std::string run_dir_;
    bool source_ = false;  // the steps are a StepSource's (opts.steps)
    std::ofstream metrics_;
    std::unique_ptr<TensorBoardWriter> tb_;  // log.tensorboard, rank 0
    std::unique_ptr<Progress> progress_;     // the bar, on a terminal (rank 0)
    std::chrono::steady_clock::time_point start_;
    int64_t start_step_ = 0;
    ObjectiveStats run_stats_;  // over the session's steps and every rank
    double tokens_per_s_sum_ = 0.0;
    int64_t tokens_per_s_n_ = 0;
    double last_loss_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace cuset
