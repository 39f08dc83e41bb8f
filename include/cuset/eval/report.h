// The figures of a judged results file, overall and per task family (task_name): compile rate,
// run rate, pass@1 (sample 1) and pass@K (any of the K samples, CUDABench's best-of-K), the
// unbiased pass@k estimator 1 - C(n-c, k) / C(n, k) for every k <= n, and the mean generated
// tokens per sample; written as eval.json, a console table and eval.html (one row per task).
// The success of a sample is "functional" (compare.py's verdict) when the judge ran the
// programs (on a GPU or emulated), "compiled" when it only compiled them: such figures are
// labelled compile-only, and the run figures are absent (null). With repair turns (eval --turns),
// the headline figures are turn 1's (what the model writes at once) and the repair section gives
// the figures after T turns, per turn, and what the repairs fixed.
// Unjudged is never a way to a higher score: the headline rates count every sample, one the
// judge could not judge (gen-failed, task-error, unjudged) as not passing; the same rates over
// the judged samples alone are kept beside them (the *_judged members), each with its counts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/eval/judge.h"

namespace cuset::eval {

// 1 - C(n - c, k) / C(n, k): the chance that k of n samples, c of them correct, hold a correct one.
double pass_at_k(int64_t n, int64_t c, int64_t k);

struct Figures {
    std::string label;          // "gpu" | "emulated" | "compile-only"
    std::string criterion;      // "functional" | "compiled"
    int64_t tasks = 0, samples = 0, max_samples = 0, min_samples = 0;
    int64_t no_code = 0, compiled = 0, ran = 0, functional = 0, unjudged = 0;
    int64_t pass1_tasks = 0, pass1 = 0;   // tasks with a sample 1; of them, those whose sample 1 succeeded
    int64_t passk_tasks = 0, passk = 0;   // tasks with a sample; with a successful one
    int64_t correct1 = 0, correctk = 0;   // CUDABench's correctness (exit 0) at 1 and best-of-K, of the same tasks
    std::vector<double> pass_at;          // [k-1]: unbiased pass@k over the tasks with n >= k samples
    // The same over the judged samples alone (the successes are the same: an unjudged sample never
    // succeeds): tasks whose sample 1 was judged, tasks with a judged sample, pass@k with n and c
    // counting judged samples only.
    int64_t pass1_judged_tasks = 0, passk_judged_tasks = 0;
    std::vector<double> pass_at_judged;
    std::map<std::string, int64_t> unjudged_by_cause;  // "emulator: build failed" -> samples
    double mean_tokens = -1;              // per sample with a known count; -1 = unknown
    bool runs() const { return criterion == "functional"; }
};

Figures figures_of(const std::vector<const TaskResult*>& tasks, JudgeMode mode);

// What an unjudged sample's figures leave out, as a group name: its status, and for the
// emulator's or a stage's own failures the stage ("emulator: build failed", "gen-failed").
std::string unjudged_cause(const SampleResult& s);

// "13 of 100 samples unjudged (emulator: build failed 9, gen-failed 4)".
std::string unjudged_text(int64_t unjudged, int64_t all, const std::map<std::string, int64_t>& causes);
// A rate with its counts, so that no rate is read without them: "62.0% (31/50; judged only 66.0%,
// 31/47)" (passed of all, and of the judged ones); "62.0% (31/50)" when every one was judged;
// "-" when there is none.
std::string rate_text(int64_t passed, int64_t all, int64_t judged);

// Multi-turn evaluation (eval --turns T): a sample whose program fails gets up to T-1 repair turns
// (eval/repair.h); its history is its attempts in order, turn 1 first, ending at a pass, at T, or
// where no repair applies. Its final result is its last attempt's.
struct TurnFigures {
    int64_t turn = 1;
    int64_t attempts = 0, passed = 0;  // samples judged at this turn; of them, those that succeeded
    int64_t samples_passing = 0;      // samples with a success by this turn (cumulative)
    int64_t tasks_passing = 0;        // tasks with a successful sample by this turn (cumulative)
};
struct RepairReport {
    int64_t turns = 1;  // T: attempts per sample at most
    // [task][sample][turn]: parallel to EvalReport::tasks and their samples; [..][..][0] is turn 1.
    std::vector<std::vector<std::vector<SampleResult>>> history;
    std::vector<TurnFigures> by_turn;  // turns 1..T
    Figures final_figures;             // every sample counted by its last attempt: pass@k after T turns
    int64_t fixed_samples = 0;         // failed at turn 1, succeeded at a later turn
    int64_t fixed_tasks = 0;           // no sample succeeded at turn 1; one did by turn T
};

// The figures of `history` ([task][sample][turn], turn 1 first) for `tasks` (turn 1's results, for
// their ids and names), with T = `turns`.
RepairReport repair_report(const std::vector<TaskResult>& tasks, std::vector<std::vector<std::vector<SampleResult>>> history,
                           JudgeMode mode, int64_t turns);

// KernelBench's fast_p (its score.py's fastp) over the KernelBench problems judged: the share of
// them whose sample 1 is correct and more than p times faster than the reference module, for
// p = 0, 1, 1.2, 1.5, 2. fast_0 is the correctness rate. A speed-up comes only from the judge's
// timing of the candidate against the reference (a GPU judge): without it, fast_p for p > 0 is
// unknown (nullopt) and `note` says why. A speed-up above kExcessiveSpeedup is flagged for
// inspection and never credited (KernelBench's excessive-speedup check, its threshold).
inline constexpr double kExcessiveSpeedup = 10;
struct FastP {
    int64_t tasks = 0, correct = 0;
    int64_t timed = 0;    // correct samples 1 with a speed-up
    int64_t flagged = 0;  // of them, above kExcessiveSpeedup
    std::vector<std::pair<double, std::optional<double>>> fast;  // (p, fast_p)
    std::string note;
};
// nullopt when no task is a KernelBench problem.
std::optional<FastP> kernelbench_fast_p(const std::vector<TaskResult>& tasks, JudgeMode mode);

struct EvalReport {
    JudgeMode mode = JudgeMode::kCompile;
    std::string notice;
    std::string containment;  // what contained the judged commands
    std::string python;       // gen.py's and compare.py's interpreter ("" = not used)
    std::string tasks_file, results_file;
    Figures overall;
    std::vector<std::pair<std::string, Figures>> families;  // by family name
    std::vector<TaskResult> tasks;  // the judged tasks, one row each in eval.html and eval.json (turn 1)
    std::optional<RepairReport> repair;  // eval --turns T with T > 1
    std::optional<FastP> fast_p;         // KernelBench problems among the tasks
};

EvalReport make_report(const JudgeSummary& s, const std::string& tasks_file, const std::string& results_file);

nlohmann::ordered_json report_json(const EvalReport& r);
std::string report_table(const EvalReport& r);   // the console table
std::string report_html(const EvalReport& r);    // one self-contained page

// eval.json and eval.html into `dir` (atomically).
void write_report(const EvalReport& r, const std::string& dir);

}  // namespace cuset::eval
