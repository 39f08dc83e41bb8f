// The judge of a results file, CUDABench's evaluation done by cuset itself: every sample's
// program is compiled (`nvcc kernel.cu -o kernel`, 60 s) in a fresh work folder; with a GPU,
// gen.py writes the inputs and reference outputs under data/, ./kernel runs (60 s; exit 0 =
// CUDABench's "correctness") and compare.py gives the verdict (CUDABench's rule: compare.py
// failing = not functional; an "F" in its standard output = mismatch; otherwise functional).
// Every command runs in its own process group with a timeout (core/process.h); samples are
// judged in parallel jobs. Emulation (scripts/cuemu: the program rewritten for the CPU, every
// CUDA thread a fiber) replaces the GPU where there is none; its results are labelled
// "emulated", and a program the emulator cannot build is "unjudged", never pass or fail.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cuset/eval/cudabench.h"

namespace cuset::eval {

enum class JudgeMode { kCompile, kGpu, kEmulate };
const char* judge_mode_name(JudgeMode m);  // "compile" | "gpu" | "emulate"
// The label every figure carries: "compile-only" | "gpu" | "emulated".
const char* judge_label(JudgeMode m);

struct JudgeOptions {
    JudgeMode mode = JudgeMode::kCompile;
    std::string nvcc = "nvcc";
    std::vector<std::string> nvcc_flags;  // after "kernel.cu -o kernel"; CUDABench uses none
    std::string python = "python3";       // runs gen.py, compare.py (and the emulator's transform)
    double compile_timeout_s = 60;        // CUDABench's
    double run_timeout_s = 60;            // CUDABench's
    double gen_timeout_s = 180;           // CUDABench's for gen.py in a subprocess
    double compare_timeout_s = 60;
    double emulate_timeout_s = 600;       // an emulated run (slower than a GPU's)
    int jobs = 2;                         // samples judged at once
    std::string work_dir;                 // per-sample folders go under it (required)
    bool keep_work = false;               // keep each sample's folder (default: removed when judged)
    std::string cuemu_dir;                // scripts/cuemu (emulate)
    std::string cxx = "g++";              // builds emulated programs
    std::string cuda_include = "/usr/local/cuda/include";
    // Called from the judging thread with (samples done, samples in all).
    std::function<void(int64_t, int64_t)> on_progress;
};

enum class SampleStatus {
    kNoCode,          // the answer has no fenced program (code = null)
    kCompileError,
    kCompileTimeout,
    kCompiled,        // compile-only: compiled, nothing run
    kGenFailed,       // gen.py failed or timed out: not judged against a reference
    kRunFailed,       // the program exited non-zero or was killed
    kRunTimeout,
    kCompareFailed,   // compare.py failed (CUDABench: correct but not functional)
    kMismatch,        // compare.py printed "F"
    kPass,            // functional
    kUnjudged,        // emulate: the emulator could not build the program
};
const char* sample_status_name(SampleStatus s);  // "no-code", "compile-error", ... "pass", "unjudged"

struct SampleResult {
    int index = 1;                   // 1-based sample number (code<index>)
    SampleStatus status = SampleStatus::kNoCode;
    bool compiled = false;
    std::optional<bool> ran;         // exit 0 (CUDABench's correctness); nullopt = not run
    std::optional<bool> functional;  // compare.py's verdict; nullopt = not judged
    bool emulated = false;
    std::string error;               // first compiler / runtime / script error line ("" = none)
    double seconds = 0;              // this sample's judging wall time
    int64_t generated_tokens = -1;   // tokens of its answer; -1 = unknown
};

struct TaskResult {
    nlohmann::json id;
    std::string id_text, task_name;
    std::vector<SampleResult> samples;
};

struct JudgeSummary {
    JudgeMode mode = JudgeMode::kCompile;
    std::string notice;  // one line when stages were skipped or emulated ("" = none)
    std::vector<TaskResult> tasks;
};

// Judges `records` against `tasks` (matched by id; an id that is not a task is an InputError
// naming the results line).
JudgeSummary judge_results(const std::vector<Task>& tasks, const std::vector<ResultRecord>& records,
                           const JudgeOptions& opts);

// The records that judge each task's own reference solution (bench.cu) as its only sample.
std::vector<ResultRecord> reference_records(const std::vector<Task>& tasks);

// Whether this machine has a GPU: CUSET_ASSUME_GPU=0|1, else `nvidia-smi -L` listing one, else
// /dev/nvidia0. `how` says what decided.
bool gpu_present(std::string* how);

// The first line of compiler output worth showing: the first holding "error" (any case), else
// the first non-empty one; "" when there is none.
std::string first_error_line(const std::string& output);

}  // namespace cuset::eval
