// `cuset-train eval`: CUDABench end to end. With a model: the prompts of the chosen tasks at one
// description level (CUDABench's system prompt and user prompt, rendered by the model's chat
// format with its generation prompt), K samples each through the generate library, the programs
// extracted by CUDABench's rule, results.jsonl in CUDABench's format; then (or for a given
// results file) the judge and the report: eval.json, eval.html and the console table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuset/core/config.h"
#include "cuset/data/dataset.h"
#include "cuset/eval/report.h"
#include "cuset/model/device.h"

namespace cuset::eval {

struct EvalRequest {
    std::string tasks;              // CUDABench-Set.jsonl (required)
    std::string results;            // judge this results file instead of generating
    bool reference = false;         // judge each task's bench.cu as its only sample
    std::string model;              // overrides model.path when generating
    std::string out;                // output folder; "" = see eval_out_dir()
    std::string judge = "auto";     // auto (gpu where one is present, else compile) | gpu | emulate | compile
    int level = 3;                  // CUDABench's default
    int64_t samples = 3;            // K, CUDABench's default
    int64_t limit = 0;              // the first N tasks (after --task-ids); 0 = all
    std::vector<std::string> task_ids;
    bool keep_work = false;         // keep the per-sample work folders under OUT/work
};

// The tasks a request selects, in file order (UsageError for an unknown id).
std::vector<Task> select_tasks(const std::vector<Task>& all, const std::vector<std::string>& ids, int64_t limit);

// The judge mode of a request: "auto" = gpu when gpu_present(), else compile; an explicit "gpu"
// without a GPU is a UsageError.
JudgeMode resolve_judge(const std::string& judge, std::string* how);

// The judge of a configuration's eval.* keys (nvcc, Python, timeouts, containment, eval.jobs) in
// `mode`, with `work_dir` as its scratch folder; shared by eval and `data build`.
JudgeOptions judge_options_from(const Config& cfg, JudgeMode mode, const std::string& work_dir, bool keep_work);

// The judge's scratch folder is deleted when judging ends: UsageError (naming `what`, the command)
// when `work_dir` exists, is not empty and holds no marker of cuset's, or holds one of `inputs`.
void judge_work_dir_check(const std::string& work_dir, const std::vector<std::string>& inputs, const std::string& what);
// Creates it with the marker (RuntimeFailure when it cannot).
void judge_work_dir_create(const std::string& work_dir, const std::string& what);

// Runs the request: the judged samples, their report (written to out_dir) and the folder.
struct EvalOutcome {
    JudgeSummary summary;
    EvalReport report;
    std::string out_dir;
};
// `text` and `runtime`: the text pipeline's options and the runtime for generating (built by the
// application layer for the model generated with: req.model, else model.path); `runtime` must be
// given when the request generates (no req.results, no req.reference) and is not used otherwise.
// Of `cfg` it reads eval.*, generate.* (through generate_run), model.* and run.*.
EvalOutcome eval_run(const Config& cfg, const EvalRequest& req, const TextOptions& text, const Runtime* runtime);

}  // namespace cuset::eval
