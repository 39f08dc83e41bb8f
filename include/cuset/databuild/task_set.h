// Task sets for `data build`, in CUDABench's record format (eval/cudabench.h), so that one judge
// serves training tasks and benchmark tasks: converting prompt/response pairs whose response holds
// a self-checking program (the bundled data/cuda-sft: the program checks itself against a CPU
// reference and exits non-zero on a mismatch) into tasks, and checking a tasks file (every task's
// reference solution, its gen.py included, passes the judge). `cuset-train data tasks`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuset/data/data.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"

namespace cuset::databuild {

// A self-checking task: task_name and id from the sample's id, the sample's prompt as the
// description and as every level's prompt, no inputs or outputs, the response's program (its
// first fenced block) as bench.cu, and empty gen.py and compare.py (the judge then takes the
// program's exit status as its verdict).
struct SftTasks {
    std::string jsonl;                  // one task record a line
    int64_t converted = 0, skipped = 0;
    std::vector<std::string> skipped_why;  // "FILE: sample ID: no fenced program in the response"
};
SftTasks tasks_from_sft(const std::string& path, const DataLoadOptions& load);

struct TaskProblem {
    std::string where;   // "FILE:LINE"
    std::string id, status, error;
};
struct TaskCheck {
    int64_t tasks = 0, passed = 0;
    int64_t generated = 0;              // tasks without a reference solution, checked by their gen.py and compare.py
    std::vector<TaskProblem> problems;  // failed and unjudged references, in file order
    std::string notice;                 // the judge's notice ("" = none)
};
// Judges every task's reference (bench.cu) as eval --reference does; a reference passes when
// compare.py (or, for a self-checking task, the program) says so, or with a compile-only judge
// when it compiles. A task without a reference solution but with a gen.py (databuild/
// module_tasks.h) passes, with any judge (opts.runner.python must then be set), when its gen.py
// runs, writes files the judge can tell apart, and its reference outputs (data/<output>_ref.bin)
// given as the program's outputs pass its compare.py.
TaskCheck tasks_check(const std::vector<eval::Task>& tasks, const eval::JudgeOptions& opts);

}  // namespace cuset::databuild
