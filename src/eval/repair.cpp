// The user turn that carries the judge's finding (eval/repair.h).
#include "cuset/eval/repair.h"

#include <cstdio>

#include "cuset/core/error.h"

namespace cuset::eval {

std::string repair_turn(judge::Status status, const std::string& error) {
    const std::string finding = quote_bounded(error, kFindingMaxBytes);
    const std::string ask = "\n\nFix it and answer with the complete corrected program in one ```cuda code block.";
    switch (status) {
        case judge::Status::kNoCode:
            return "Your answer holds no complete program. Answer with the whole CUDA program in one ```cuda code block.";
        case judge::Status::kCompileError:
        case judge::Status::kCompileTimeout:
            return "The program does not compile. The compiler's first error:\n" + finding + ask;
        case judge::Status::kRunFailed:
        case judge::Status::kRunTimeout:
            return "The program compiles but fails when it runs: " + finding + ask;
        case judge::Status::kCompareFailed:
        case judge::Status::kNoVerdict:
        case judge::Status::kMismatch:
            return "The program runs, but its output does not match the reference output (" + finding + ")." + ask;
        default:
            return "";  // a pass, or nothing judged about the program: no repair
    }
}

std::string repair_turn(const Task& task, judge::Status status, const std::string& error) {
    if (!task.kernelbench) return repair_turn(status, error);
    const std::string finding = quote_bounded(error, kFindingMaxBytes);
    const std::string ask =
        "\n\nFix it and answer with the complete corrected module (ModelNew and its inline CUDA sources) in one "
        "```python code block.";
    auto rule = [&](const char* what) {
        return std::string("ModelNew breaks a rule of the benchmark: ") + what + " (" + finding +
               "). The work of forward must be done by your own CUDA kernels." + ask;
    };
    switch (status) {
        case judge::Status::kNoCode:
            return "Your answer holds no complete module. Answer with the whole Python module defining ModelNew, its "
                   "CUDA kernels inline (torch.utils.cpp_extension.load_inline), in one ```python code block.";
        case judge::Status::kCompileError:
        case judge::Status::kCompileTimeout:
            return "The module does not build or import (its inline CUDA sources are compiled with load_inline). "
                   "The first error:\n" + finding + ask;
        case judge::Status::kRunFailed:
        case judge::Status::kRunTimeout:
            return "The module builds, but running ModelNew fails: " + finding + ask;
        case judge::Status::kCompareFailed:
        case judge::Status::kNoVerdict:
        case judge::Status::kMismatch:
            return "ModelNew runs, but its outputs do not match the reference Model's (" + finding + ")." + ask;
        case judge::Status::kStaticCheck: return rule("its source fails the static check");
        case judge::Status::kInputMutated: return rule("forward changes its input tensors");
        case judge::Status::kNoKernel: return rule("forward launches no kernel of its own");
        case judge::Status::kTorchOp: return rule("forward computes with torch operators");
        case judge::Status::kSideStream: return rule("forward launches its kernels on a stream of its own, not the current one");
        case judge::Status::kTimerPatch: return rule("the module replaces a function the timer reads");
        case judge::Status::kFallback: return rule("forward still returns when its kernels fail (a fallback)");
        case judge::Status::kConstantOutput: return rule("an output is constant where the reference's is not");
        default:
            return "";  // a pass, or nothing judged about the module: no repair
    }
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
    for (int s = 0; s < judge::kStatusCount; ++s)
        if (name == judge::status_name(static_cast<judge::Status>(s))) {
            *out = static_cast<judge::Status>(s);
            return true;
        }
    return false;
}

}  // namespace cuset::eval
