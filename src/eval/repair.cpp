// The user turn that carries the judge's finding (eval/repair.h).
#include "cuset/eval/repair.h"

#include <cstdio>

#include "cuset/core/error.h"

namespace cuset::eval {

namespace {

// How the findings are said of an answer: a CUDABench program, or a KernelBench problem's module.
struct Wording {
    const char* no_code;    // the whole turn for an answer without a program
    const char* compile;    // before the first error
    const char* run;        // before the run's failure
    const char* mismatch;   // before "(<finding>)."
    const char* ask;        // after every finding
};

const Wording kProgram = {
    "Your answer holds no complete program. Answer with the whole CUDA program in one ```cuda code block.",
    "The program does not compile. The compiler's first error:\n", "The program compiles but fails when it runs: ",
    "The program runs, but its output does not match the reference output (",
    "\n\nFix it and answer with the complete corrected program in one ```cuda code block."};

const Wording kModule = {
    "Your answer holds no complete module. Answer with the whole Python module defining ModelNew, its CUDA kernels "
    "inline (torch.utils.cpp_extension.load_inline), in one ```python code block.",
    "The module does not build or import (its inline CUDA sources are compiled with load_inline). The first error:\n",
    "The module builds, but running ModelNew fails: ", "ModelNew runs, but its outputs do not match the reference Model's (",
    "\n\nFix it and answer with the complete corrected module (ModelNew and its inline CUDA sources) in one ```python "
    "code block."};

std::string finding_turn(const Wording& w, judge::Status status, const std::string& error) {
    const std::string finding = quote_bounded(error, kFindingMaxBytes);
    switch (status) {
        case judge::Status::kNoCode: return w.no_code;
        case judge::Status::kCompileError:
        case judge::Status::kCompileTimeout: return w.compile + finding + w.ask;
        case judge::Status::kRunFailed:
        case judge::Status::kRunTimeout: return w.run + finding + w.ask;
        case judge::Status::kCompareFailed:
        case judge::Status::kNoVerdict:
        case judge::Status::kMismatch: return w.mismatch + finding + ")." + w.ask;
        default: break;
    }
    if (const char* rule = judge::status_rule(status); rule && &w == &kModule)
        return std::string("ModelNew breaks a rule of the benchmark: ") + rule + " (" + finding +
               "). The work of forward must be done by your own CUDA kernels." + w.ask;
    return "";  // a pass, or nothing judged about the program: no repair
}

}  // namespace

std::string repair_turn(judge::Status status, const std::string& error) { return finding_turn(kProgram, status, error); }

std::string repair_turn(const Task& task, judge::Status status, const std::string& error) {
    return finding_turn(task.kernelbench ? kModule : kProgram, status, error);
}

std::string speedup_turn(const Task& task, double speedup) {
    char figure[32];
    std::snprintf(figure, sizeof figure, "%.2fx", speedup);
    const bool kb = task.kernelbench.has_value();
    return std::string(kb ? "ModelNew is correct" : "The program is correct") + " and runs " + figure +
           " as fast as the reference (its time over yours). Make it faster: answer with the complete " +
           (kb ? "module (ModelNew and its inline CUDA sources)" : "program") + " in one ```" + answer_fence(task) +
           " code block; it must stay correct.";
}

const char* answer_fence(const Task& task) { return task.kernelbench ? "python" : "cuda"; }

bool status_parse(const std::string& name, judge::Status* out) {
    const std::optional<judge::Status> s = judge::status_from_name(name);
    if (s) *out = *s;
    return s.has_value();
}

}  // namespace cuset::eval
