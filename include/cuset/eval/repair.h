// Repair turns: the judge's finding about a program, sent back to the model as the next user turn
// of its conversation so that it can answer with a corrected program. One renderer for every
// conversation that goes on after a verdict: `data build`'s repair rounds, `eval --turns` and
// multi-turn GRPO, for CUDABench tasks and KernelBench problems.
#pragma once

#include <cstddef>
#include <string>

#include "cuset/eval/cudabench.h"
#include "cuset/judge/runner.h"

namespace cuset::eval {

// The judge's finding is quoted up to this many bytes (a compiler can print megabytes).
inline constexpr size_t kFindingMaxBytes = 2000;

// The user turn after an attempt judged `status` with first error `error`: what went wrong (the
// compiler's first error, the run's failure, the mismatch) and the request for the complete
// corrected program. "" for a pass and for a status that is not the program's fault (gen-failed,
// task-error, unjudged): such a conversation is not continued.
std::string repair_turn(judge::Status status, const std::string& error);

// The user turn after an answer to `task` was judged `status`: repair_turn(status, error) for a
// CUDABench task; for a KernelBench problem the same findings said of its ModelNew module (it does
// not build or import, its run fails, its outputs differ from the reference Model's) and, for
// the anti-hacking statuses, which of the benchmark's rules it broke, then the request for the
// complete corrected module in one ```python code block. "" where repair_turn(status, error) is.
std::string repair_turn(const Task& task, judge::Status status, const std::string& error);

// The user turn after an answer to `task` passed with `speedup` (the reference's time over the
// program's, a GPU judge's timing): the figure and the request for a faster program (module, for
// a KernelBench problem) that stays correct, complete, in one code block of the task's fence.
std::string speedup_turn(const Task& task, double speedup);

// The fence language of an answer to `task` ("python" for a KernelBench problem, else "cuda"):
// how a program is shown again when an earlier answer is cut to its program.
const char* answer_fence(const Task& task);

// judge::status_name's inverse; false for a name that is not a status.
bool status_parse(const std::string& name, judge::Status* out);

}  // namespace cuset::eval
