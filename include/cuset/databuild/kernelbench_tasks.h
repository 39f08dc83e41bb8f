// KernelBench (github.com/ScalingIntelligence/KernelBench) as tasks: its problems, read as its
// LocalKernelBenchDataset reads them (KernelBench/level<N>/<id>_<name>.py), become task records
// carrying the module's source, get_inputs/get_init_inputs, level, problem id and name, the
// tolerance of the precision, and the prompt KernelBench's own builder sends for the problem
// (get_prompt_for_backend, backend "cuda"), byte for byte. `cuset-train data tasks
// --from-kernelbench DIR`.
// Not here: judging a candidate (a Python file defining ModelNew), and running the modules: their
// sizes are chosen for GPUs (a 4096 x 393216 activation), so a record is made from the text alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuset::databuild {

// KernelBench's prompt options (its prompt_option; one_shot is the default of its
// generate_samples.py): zero_shot has no example, one_shot its element-wise addition example.
enum class KernelBenchPromptOption { kZeroShot, kOneShot };
// KernelBench's precisions (its precision option): the inputs' dtype in its evaluation.
enum class KernelBenchPrecision { kFp32, kFp16, kBf16 };

const char* kernelbench_option_name(KernelBenchPromptOption option);      // "zero_shot", "one_shot"
const char* kernelbench_precision_name(KernelBenchPrecision precision);   // "fp32", "fp16", "bf16"
// The option or precision named so; nullopt for another name.
std::optional<KernelBenchPromptOption> kernelbench_option_named(const std::string& name);
std::optional<KernelBenchPrecision> kernelbench_precision_named(const std::string& name);

// KernelBench's tolerance for a precision (atol = rtol; after torchbench): 1e-4 for fp32, 1e-2
// for fp16 and bf16.
double kernelbench_tolerance(KernelBenchPrecision precision);

// The prompt KernelBench's builder makes for the reference module `ref_arch_src` (as KernelBench
// reads it: line ends made '\n'), backend cuda, no hardware block.
std::string kernelbench_prompt(const std::string& ref_arch_src, KernelBenchPromptOption option,
                               KernelBenchPrecision precision);

struct KernelBenchProblem {
    int level = 0;
    int64_t problem_id = 0;  // the number before the first '_' of the file name
    std::string name;        // the file name, "19_ReLU.py" (KernelBench's Problem.name)
    std::string path;
    std::string source;      // the file's text, line ends made '\n'
};

// The folder holding level1 .. level4: DIR itself when it has one of them, else DIR/KernelBench
// (DIR a checkout). InputError naming DIR when it does not exist or has neither.
std::string kernelbench_levels_dir(const std::string& dir);

// The problems of `levels` (empty: every level folder present) under kernelbench_levels_dir(dir),
// by level then id. As KernelBench: a level's *.py files whose name starts with a number and '_'
// ("19_ReLU.py"); other files are not problems. InputError for a level asked for that has no
// folder, a level with no problem, two files of one id, a file that is not UTF-8.
std::vector<KernelBenchProblem> kernelbench_problems(const std::string& dir, const std::vector<int>& levels = {});

// The text of the top-level `def NAME(` of a module, through its last non-blank line before the
// next line at column 0 ("" when there is none).
std::string top_level_function(const std::string& source, const std::string& name);

struct KernelBenchOptions {
    KernelBenchPromptOption option = KernelBenchPromptOption::kOneShot;
    KernelBenchPrecision precision = KernelBenchPrecision::kFp32;
    std::vector<int> levels;  // empty: every level folder present
};

// A problem's task record (one JSON line, no newline), in CUDABench's record format with no
// inputs, outputs or programs: id "level<L>_<file name without .py>", task_name the name without
// .py, "family": "kernelbench", the prompt as task_description and every level's prompt, and
//   kernelbench_level, kernelbench_problem_id, kernelbench_name, kernelbench_source,
//   kernelbench_get_inputs, kernelbench_get_init_inputs (top_level_function's text),
//   kernelbench_precision, kernelbench_tolerance, kernelbench_prompt_option, kernelbench_prompt.
std::string kernelbench_task_record(const KernelBenchProblem& problem, const KernelBenchOptions& options);

// What a KernelBench task record holds, read back (for the judge of KernelBench candidates).
struct KernelBenchTask {
    std::string id;
    KernelBenchProblem problem;  // path empty
    std::string get_inputs, get_init_inputs;
    KernelBenchPrecision precision = KernelBenchPrecision::kFp32;
    double tolerance = 0;
    KernelBenchPromptOption option = KernelBenchPromptOption::kOneShot;
    std::string prompt;
};
// nullopt when `record` is not a KernelBench task (its "family" is not "kernelbench"); InputError
// naming `where` and the field when it is one with a missing or mistyped field.
std::optional<KernelBenchTask> kernelbench_task_of(const nlohmann::json& record, const std::string& where);

struct KernelBenchTasks {
    std::string jsonl;                  // one task record a line, by level then id
    int64_t converted = 0;
    std::vector<std::string> problems;  // "FILE: what is wrong", one per module that is not a task
};
// Every problem of the levels asked for, each checked as --from-modules checks a module's text
// (module_static_problem).
KernelBenchTasks tasks_from_kernelbench(const std::string& dir, const KernelBenchOptions& options);

}  // namespace cuset::databuild
