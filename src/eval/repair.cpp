// The user turn that carries the judge's finding (eval/repair.h).
#include "cuset/eval/repair.h"

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

bool status_parse(const std::string& name, judge::Status* out) {
    for (int s = 0; s < judge::kStatusCount; ++s)
        if (name == judge::status_name(static_cast<judge::Status>(s))) {
            *out = static_cast<judge::Status>(s);
            return true;
        }
    return false;
}

}  // namespace cuset::eval
