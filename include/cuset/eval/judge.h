// The judge of a results file, CUDABench's evaluation done by cuset: every sample's program goes
// through the one runner of untrusted programs (judge/runner.h: nvcc, the emulator, gen.py, the
// program and compare.py, each contained), in parallel jobs. A task's gen.py runs once for all
// its samples. Emulated results are labelled "emulated"; a program the emulator cannot build, a
// task whose gen.py fails or whose files cannot be told apart are "unjudged" (with their own
// statuses), never pass or fail.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cuset/eval/cudabench.h"
#include "cuset/judge/runner.h"

namespace cuset::eval {

using judge::JudgeMode;
using judge::judge_label;
using judge::judge_mode_name;
using SampleStatus = judge::Status;
inline const char* sample_status_name(SampleStatus s) { return judge::status_name(s); }

struct SampleResult {
    int index = 1;                   // 1-based sample number (code<index>)
    SampleStatus status = SampleStatus::kNoCode;
    bool compiled = false;
    std::optional<bool> ran;         // exit 0 (CUDABench's correctness); nullopt = not run
    std::optional<bool> functional;  // compare.py's verdict; nullopt = not judged
    bool emulated = false;
    std::string error;               // first compiler / runtime / script error line ("" = none)
    double seconds = 0;              // this sample's judging wall time
    double run_seconds = -1;         // the program's own run (wall time); -1 = not run
    int64_t generated_tokens = -1;   // tokens of its answer; -1 = unknown
    std::string containment;         // what contained its commands (judge::Runner::containment())
    std::optional<double> speedup;   // judge::Verdict::speedup (RunnerOptions::speedup on, a pass)
    std::string speedup_note;        // why it was not measured
    std::string note;                // judge::Verdict::note ("" = none)
};

struct JudgeOptions {
    judge::RunnerOptions runner;  // mode, tools, timeouts, containment, work folder
    int jobs = 2;                 // samples judged at once
    // Called from the judging thread with (samples done, samples in all).
    std::function<void(int64_t, int64_t)> on_progress;
    // Called from a worker as soon as a sample is judged, with the index of its record in the
    // records judged and its result (calls may come from several workers at once).
    std::function<void(size_t, const SampleResult&)> on_sample;
    // A journal (core/journal.h) of judged samples: each verdict is appended as it is reached, and
    // a sample the journal already holds, for the same task files, program and judge settings,
    // is taken from it instead of being judged again, so that a stopped run continues where it
    // stopped ("" = none). Samples taken from it are not passed to on_sample.
    std::string journal;
};

struct TaskResult {
    nlohmann::json id;
    std::string id_text, task_name;
    std::vector<SampleResult> samples;
    bool kernelbench = false;  // a KernelBench problem (Task::kernelbench)
};

struct JudgeSummary {
    JudgeMode mode = JudgeMode::kCompile;
    int64_t from_journal = 0;  // samples whose verdict was read back from JudgeOptions::journal
    std::string notice;       // one line when stages were skipped or emulated ("" = none)
    std::string containment;  // what contained every command (judge::Runner::containment())
    std::string python;       // the interpreter of gen.py and compare.py ("" = not used)
    std::vector<TaskResult> tasks;
};

// Judges `records` against `tasks` (matched by id; an id that is not a task is an InputError
// naming the results line). A judge that cannot work (JudgeEnvironmentError) stops it; a stop
// signal ends it with StoppedBySignal (exit 75) once the samples being judged are done, every
// finished one kept in the journal.
JudgeSummary judge_results(const std::vector<Task>& tasks, const std::vector<ResultRecord>& records,
                           const JudgeOptions& opts);

// The records that judge each task's own reference solution (bench.cu) as its only sample.
std::vector<ResultRecord> reference_records(const std::vector<Task>& tasks);

// InputError naming the task's file and line when `eval --reference` cannot judge it: a
// KernelBench problem has no reference kernel.
void require_reference(const Task& t);

// The runner's view of a CUDABench task: its gen.py, compare.py, bench.cu and declared inputs.
judge::CheckedTask checked_task_of(const Task& t);

}  // namespace cuset::eval
