// `cuset-train eval`: CUDABench end to end. With a model: the prompts of the chosen tasks at one
// description level (CUDABench's system prompt and user prompt, rendered by the model's chat
// format with its generation prompt), K samples each through the generate library, the programs
// extracted by CUDABench's rule, results.jsonl in CUDABench's format; then (or for a given
// results file) the judge and the report: eval.json, eval.html and the console table.
// With turns T > 1, a sample whose program fails for a reason of its own (no code, compile
// error, failed run, mismatch) gets the judge's finding as the next user turn and the model
// answers again, up to T turns or a pass; every turn's answer and program go into results.jsonl
// (repairs<i>), its verdict into eval.json, and the report gives pass@k at turn 1 and after T
// turns and what the repairs fixed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cuset/data/dataset.h"
#include "cuset/eval/report.h"
#include "cuset/generate/generate_run.h"
#include "cuset/judge/sandbox.h"
#include "cuset/model/device.h"

namespace cuset::eval {

// The judge's tools and limits as a run configures them (eval.*), before judge_options_for finds
// the tools.
struct JudgeSettings {
    std::string nvcc = "nvcc";        // eval.nvcc (find_nvcc)
    std::string python;               // eval.python: "" = the project's .venv, else python3 (find_python)
    int jobs = 2;                     // samples judged at once
    double compile_timeout_s = 60;    // CUDABench's
    double run_timeout_s = 60;        // CUDABench's
    double gen_timeout_s = 180;       // CUDABench's, for gen.py
    double compare_timeout_s = 60;
    double emulate_timeout_s = 600;   // an emulated run
    int64_t kernelbench_max_input_elements = int64_t{1} << 18;  // judge::RunnerOptions'
    bool contain = true;              // eval.sandbox.enabled; false: programs run unconfined, as the user
    judge::SandboxLimits limits;      // eval.sandbox.*
};

// An answer from elsewhere than a model (eval --candidates): the response of sample `sample`
// (1-based) of task `task` (its id as text) at turn `turn` (1-based), given the conversation so far;
// nullopt = none (at turn 1 the sample has no answer, later its conversation ends).
using AnswerFn = std::function<std::optional<std::string>(const std::string& task, int64_t sample, int64_t turn)>;

struct EvalRequest {
    std::string tasks;              // CUDABench-Set.jsonl (required)
    std::string results;            // judge this results file instead of generating
    bool reference = false;         // judge each task's bench.cu as its only sample
    std::string model;              // the model generated with: overrides generate.model when set
    std::string out;                // output folder; "" = see eval_out_dir()
    std::string judge = "auto";     // auto (gpu where one is present, else compile) | gpu | emulate | compile
    int level = 3;                  // CUDABench's default
    int64_t samples = 3;            // K, CUDABench's default
    int64_t turns = 1;              // attempts per sample: up to turns-1 repair turns (eval/repair.h); needs a model
    int64_t limit = 0;              // the first N tasks (after --task-ids); 0 = all
    std::vector<std::string> task_ids;
    bool keep_work = false;         // keep the per-sample work folders under OUT/work
    AnswerFn answers;               // set: every turn's answers come from it instead of a model (no runtime needed)
    std::string answers_file;       // where they come from (an input no output may be; for the log)
    // What the application layer fills from the configuration:
    std::string run_dir;            // the run folder: the default output folder goes into it
    std::string gpu_name = "NVIDIA GeForce RTX 4090";  // eval.gpu_name: the prompts' GPU label; "" = the task's
    std::string progress = "auto";  // log.progress
    GenerateRequest generate;       // model.*, generate.* (its n is `samples`; prompts and out are eval's)
    JudgeSettings judge_settings;   // eval.*
};

// Where the judge builds its runtimes once per machine (the emulator's, the emulated KernelBench
// extensions' toolchain): $XDG_CACHE_HOME/cuset/judge, ~/.cache/cuset/judge, else a folder under
// the system's temporary folder.
std::string judge_cache_dir();

// The tasks a request selects, in file order (UsageError for an unknown id).
std::vector<Task> select_tasks(const std::vector<Task>& all, const std::vector<std::string>& ids, int64_t limit);

// The judge mode of a request: "auto" = gpu when gpu_present(), else compile; an explicit "gpu"
// without a GPU is a UsageError.
JudgeMode resolve_judge(const std::string& judge, std::string* how);

// The judge of `settings` (nvcc and Python found, timeouts, containment, jobs) in `mode`, with
// `work_dir` as its scratch folder; shared by eval, `data tasks`, `data build` and GRPO.
JudgeOptions judge_options_for(const JudgeSettings& settings, JudgeMode mode, const std::string& work_dir,
                               bool keep_work);

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
// application layer for the model generated with: req.model, else req.generate.model); `runtime`
// must be given when the request generates (no req.results, no req.reference) and is not used
// otherwise.
EvalOutcome eval_run(const EvalRequest& req, const TextOptions& text, const Runtime* runtime);

}  // namespace cuset::eval
