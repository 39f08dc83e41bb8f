// The one runner of untrusted CUDA programs: a program a model wrote is compiled (nvcc), built for
// the CPU emulator where asked, run, and checked against a task, every command inside the
// sandbox (judge/sandbox.h). Callers (`eval`, `data check --compile/--run`) never spawn a
// candidate themselves. Per program, in its own folder:
//   compile   nvcc kernel.cu -o kernel (the flags CUDABench uses: none)
//   emulate   the program rewritten for the emulator (emu/transform.h), built with the host C++
//             compiler against the emulator's runtime (built once per machine and cached)
//   generate  the task's gen.py, once per task, in a folder the candidate never sees
//   run       ./kernel (or the emulated build) with only the task's inputs beside it
//   check     compare.py in a fresh folder holding the reference outputs and a copy of only the
//             program's declared output files, with an isolated Python (-I: no current folder or
//             user site on its import path); functional = it exited 0 and its last line is "T"
// A task without gen.py (a self-checking program, `data check --run`) stops after the run: exit 0
// is its verdict. Failures of one program are its status; only a judge that cannot work (its Python
// lacks a module a task script imports) ends the whole run (JudgeEnvironmentError).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuset/core/error.h"
#include "cuset/judge/kernelbench_judge.h"
#include "cuset/judge/sandbox.h"
#include "cuset/judge/task_files.h"
#include "cuset/judge/timing.h"
#include "cuset/judge/toolchain.h"

namespace cuset::judge {

enum class JudgeMode { kCompile, kGpu, kEmulate };
const char* judge_mode_name(JudgeMode m);  // "compile" | "gpu" | "emulate"
const char* judge_label(JudgeMode m);      // the label figures carry: "compile-only" | "gpu" | "emulated"

// Every status of a verdict, declared once: its value, its name (in results, journals,
// rewards.jsonl, compare.py's status line), its kind and, for KernelBench's anti-hacking rules,
// the benchmark's rule a candidate broke (repair turns quote it). The enum, the name maps, the
// kinds and the rules all derive from this list; a new status is one row here (and, for a
// KernelBench rule, the check that prints its name in kernelbench/compare.py).
//   kind: kPassed  the program succeeded (pass; compiled, where compile-only judging ends)
//         kFailed  the program failed a stage of the pipeline
//         kUnjudged nothing was judged about the program (left out of the rates, counted apart)
//         kRule    a KernelBench candidate broke an anti-hacking rule (judge/kernelbench_judge.h)
#define CUSET_JUDGE_STATUSES(X)                                                                                   \
    X(kNoCode, "no-code", kFailed, nullptr)              /* no program (no fenced block in the answer) */         \
    X(kCompileError, "compile-error", kFailed, nullptr)                                                          \
    X(kCompileTimeout, "compile-timeout", kFailed, nullptr)                                                      \
    X(kCompiled, "compiled", kPassed, nullptr)           /* compile-only: compiled, nothing run */               \
    X(kGenFailed, "gen-failed", kUnjudged, nullptr)      /* the task's gen.py failed or timed out */             \
    X(kTaskError, "task-error", kUnjudged, nullptr)      /* its files cannot be told apart (task_files.h) */     \
    X(kRunFailed, "run-failed", kFailed, nullptr)        /* exited non-zero, was killed or could not start */    \
    X(kRunTimeout, "run-timeout", kFailed, nullptr)                                                              \
    X(kCompareFailed, "compare-failed", kFailed, nullptr) /* compare.py failed (CUDABench: not functional) */    \
    X(kNoVerdict, "no-verdict", kFailed, nullptr)        /* compare.py exited 0 without a last line T or F */    \
    X(kMismatch, "mismatch", kFailed, nullptr)           /* compare.py's verdict F */                            \
    X(kPass, "pass", kPassed, nullptr)                   /* functional (without gen.py: exited 0) */             \
    X(kUnjudged, "unjudged", kUnjudged, nullptr)         /* emulate: could not build it, or no end in time */    \
    X(kStaticCheck, "static-check", kRule, "its source fails the static check")                                 \
    X(kInputMutated, "input-mutated", kRule, "forward changes its input tensors")                               \
    X(kNoKernel, "no-kernel", kRule, "forward launches no kernel of its own")                                   \
    X(kTorchOp, "torch-op", kRule, "forward computes with torch operators")                                     \
    X(kSideStream, "side-stream", kRule, "forward launches its kernels on a stream of its own, not the current one") \
    X(kTimerPatch, "timer-patch", kRule, "the module replaces a function the timer reads")                      \
    X(kFallback, "fallback", kRule, "forward still returns when its kernels fail (a fallback)")                 \
    X(kConstantOutput, "constant-output", kRule, "an output is constant where the reference's is not")          \
    X(kInputSpecific, "input-specific", kRule, "forward is right on the benchmark's trials only, not on other inputs") \
    X(kNotKernelOutput, "not-kernel-output", kRule,                                                              \
      "its host code touches device memory, or forward returns values its kernels did not write")

enum class Status {
#define CUSET_STATUS_ENUM(value, name, kind, rule) value,
    CUSET_JUDGE_STATUSES(CUSET_STATUS_ENUM)
#undef CUSET_STATUS_ENUM
};
enum class StatusKind { kPassed, kFailed, kUnjudged, kRule };
inline constexpr int kStatusCount = 0
#define CUSET_STATUS_COUNT(value, name, kind, rule) +1
    CUSET_JUDGE_STATUSES(CUSET_STATUS_COUNT)
#undef CUSET_STATUS_COUNT
    ;
const char* status_name(Status s);  // "no-code", "compile-error", ... "pass", "unjudged"
// The status named `name` (status_name's inverse); nullopt for a name no status has.
std::optional<Status> status_from_name(const std::string& name);
StatusKind status_kind(Status s);
// The benchmark's rule a kRule status stands for ("forward changes its input tensors"); nullptr
// for the other kinds.
const char* status_rule(Status s);
// The statuses of a program that succeeded: pass, or compiled (where compile-only judging ends).
bool status_passed(Status s);
// Statuses that judged nothing about the program (left out of the rates, counted apart).
bool status_unjudged(Status s);

// One command of the pipeline, for callers that report stages.
struct StageReport {
    bool ran = false, ok = false, timed_out = false;
    int exit_code = -1, signal = 0;
    double seconds = 0;
    std::string line;  // first error line (compilers), last output line (programs)
};

struct Verdict {
    Status status = Status::kNoCode;
    bool compiled = false;
    std::optional<bool> ran;         // exit 0 (CUDABench's correctness); nullopt = not run
    std::optional<bool> functional;  // the checker's verdict; nullopt = not judged
    bool emulated = false;
    std::string error;               // what went wrong first ("" = nothing)
    double seconds = 0;              // wall time of this program's stages
    StageReport compile, run;
    std::string containment;         // Runner::containment() when it was judged
    // With RunnerOptions::speedup on, for a passing program: the task's reference solution's
    // median run time over the program's (> 1 = faster than the reference); nullopt = not
    // measured, and `speedup_note` says why.
    std::optional<double> speedup;
    std::string speedup_note;
    // What the judge noticed that does not decide the status ("" = nothing): a KernelBench
    // problem run at reduced sizes under emulation, the static check's warnings.
    std::string note;
};

// A task to check programs against: CUDABench's or one of cuset's own.
struct CheckedTask {
    std::string key;                           // unique per task: its gen.py runs once per key
    std::string gen_py, compare_py;            // empty gen_py = a self-checking program
    std::string reference_source;              // the reference program: names the inputs it reads
    std::vector<std::string> declared_inputs;  // input names of the task record (data/<name>.bin)
    // A KernelBench problem: its candidates are Python files defining ModelNew, judged by the
    // stages of judge/kernelbench_judge.h; gen_py, compare_py and reference_source are then unused.
    std::optional<KernelBenchProblemCheck> kernelbench;
};

// What a task's gen.py made when run on its own (Runner::generate_only), for tools that make tasks.
struct Generation {
    Status status = Status::kPass;      // kPass, kGenFailed, or kTaskError (its files cannot be told apart)
    std::string error;                  // "gen.py: <its last error line>" ("" = none)
    std::string out;                    // its standard output (the last 256 KiB)
    std::vector<std::string> produced;  // the regular files it wrote (relative paths), sorted
    std::vector<int64_t> sizes;         // their sizes in bytes
    TaskFiles files;                    // the judge's reading of them (judge/task_files.h)
};

struct RunnerOptions {
    JudgeMode mode = JudgeMode::kCompile;
    std::string nvcc;                     // absolute (find_nvcc)
    std::vector<std::string> nvcc_flags;  // after "kernel.cu -o kernel"
    std::string program_name = "kernel";  // the source is <name>.cu, the binary <name>
    PythonInfo python;                    // runs gen.py and compare.py (find_python); unused by compile
    std::string cxx = "g++";              // builds emulated programs
    double compile_timeout_s = 60;        // CUDABench's
    double run_timeout_s = 60;            // CUDABench's
    double gen_timeout_s = 180;           // CUDABench's for gen.py
    double compare_timeout_s = 60;
    double emulate_timeout_s = 600;       // an emulated run (slower than a GPU's)
    bool contain = true;                  // false: eval.sandbox off (unsafe: programs run as the user)
    SandboxLimits limits;
    std::string work_dir;                 // per-program and per-task folders go under it (required)
    bool keep_work = false;               // keep each program's folder
    std::string cache_dir;                // the emulator's runtime build ("" = <work_dir>/emu)
    SpeedupOptions speedup;               // off: no timing runs
    // Under emulation, a KernelBench problem whose inputs hold more elements runs at reduced sizes
    // (judge/kernelbench/reference.py: its size constants halved); 0 = always as written.
    int64_t kernelbench_max_input_elements = int64_t{1} << 18;
};

// What a verdict depends on besides the program, the task and the timeouts: under emulation, the
// emulator's runtime (its files and build flags) and the KernelBench stages' files; "" for the
// other modes. A journal of verdicts keys on it, so that verdicts of an older judge are not reused.
std::string verdict_salt(JudgeMode mode);

// An error of the judge's own environment (not of any program): it stops the run.
class JudgeEnvironmentError : public RuntimeFailure {
public:
    explicit JudgeEnvironmentError(const std::string& what) : RuntimeFailure(what) {}
};

class Runner {
public:
    // Prepares the tools, the sandbox (UsageError with the fix where it cannot be made, unless
    // `contain` is false) and, for emulation, the emulator's runtime (a failure is a notice:
    // every compiled program is then unjudged).
    explicit Runner(RunnerOptions opts);
    ~Runner();
    Runner(const Runner&) = delete;
    Runner& operator=(const Runner&) = delete;

    // Judges one program (nullopt = no program) in the folder <work_dir>/<name>; `task` may be
    // null (compile, run: exit 0). Safe to call from several threads at once.
    Verdict judge(const std::optional<std::string>& source, const CheckedTask* task, const std::string& name);

    // Runs the task's gen.py once on its own, contained as the generate stage is, in the folder
    // <work_dir>/<name> (removed afterwards unless keep_work); no program is judged.
    Generation generate_only(const CheckedTask& task, const std::string& name);

    // Judges files in place of a program's outputs: runs the task's gen.py (as generate_only
    // does), copies each `from` file it wrote to `to` in a program's folder and checks them with
    // compare.py as a program's outputs are checked. With each reference output as its output, a
    // task's own checker must say T.
    Verdict judge_files(const CheckedTask& task, const std::vector<std::pair<std::string, std::string>>& outputs,
                        const std::string& name);

    // How many programs will be judged against `key`: its gen.py folder is removed after the last.
    void expect(const std::string& key, int64_t programs);

    const RunnerOptions& options() const { return opts_; }
    const std::string& notice() const;   // one line about skipped or unavailable stages ("" = none)
    std::string containment() const;     // Sandbox::describe(), or "off (eval.sandbox)"

private:
    struct Impl;
    RunnerOptions opts_;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cuset::judge
