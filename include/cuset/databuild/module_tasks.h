// Tasks from PyTorch modules in KernelBench's layout (a .py file that defines `class
// Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`, with module-level size constants),
// in CUDABench's record format (eval/cudabench.h), so that the one judge serves them as it serves
// every other task. `cuset-train data tasks --from-modules PATH`.
//
// A module's task:
//   gen.py      holds the module's source; seeds torch (kModuleSeed), builds
//               Model(*get_init_inputs()) and the inputs of get_inputs(), writes every tensor
//               input of forward and every parameter and buffer of the module (a CUDA program
//               cannot reproduce torch's initialisation, so weights are inputs too) to
//               data/<name>.bin, runs forward on the CPU in float32 and writes each output to
//               data/<output>_ref.bin. Files are raw little-endian, row-major (C order), no
//               header, in the tensor's dtype (bool as one byte 0/1).
//   compare.py  reads data/<output>.bin (the program's) and data/<output>_ref.bin; prints T when
//               every element agrees (|got - want| <= tol + tol * |want|, with KernelBench's
//               tolerance per dtype: 1e-4 for float32, 1e-2 for float16 and bfloat16; integers
//               and bool exactly), else the first mismatch and F; a missing or wrong-size file is F.
//   inputs, outputs, the description and the three prompts state the files, dtypes and shapes.
//   No reference solution (bench.cu is empty).
// What can be seen in the text (no Model, get_inputs or get_init_inputs at the top level) is
// refused before anything runs; the rest (a syntax error, an input that is neither a tensor nor
// a number, an unsupported dtype, an output that is not a tensor or a tuple of tensors, a NaN in
// an output, a random forward) when gen.py runs once, contained by the judge's runner.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/judge/runner.h"

namespace cuset::databuild {

// The seed of torch's generator before the module is built and again before get_inputs() runs.
inline constexpr int kModuleSeed = 42;

// The .py files a --from-modules PATH names: the file itself, or the folder's *.py files (not
// its subfolders; names starting with '_' left out), sorted. InputError when there is none.
std::vector<std::string> module_files(const std::string& path);

// What the text of a module lacks ("" = nothing seen): "no top-level `class Model(...)`",
// "no top-level `def get_inputs()`", "no top-level `def get_init_inputs()`".
std::string module_static_problem(const std::string& source);

// The task's gen.py for a module (`file_name` as its errors name it).
std::string module_gen_py(const std::string& file_name, const std::string& source);

// The task record (one JSON line, no newline) of a module from the manifest its gen.py printed
// (the JSON after kManifestTag on its last such line of standard output).
inline constexpr const char* kManifestTag = "CUSET-MODULE-MANIFEST ";
std::string module_task_record(const std::string& task_name, const std::string& source, const nlohmann::json& manifest);

// The task's compare.py for its outputs (each {"name", "dtype", "shape": [..]}).
std::string module_compare_py(const std::string& task_name, const nlohmann::json& outputs);

// What a task without a reference solution is checked with (Runner::judge_files): each
// data/<output>_ref.bin that gen.py wrote given as the program's data/<output>.bin.
std::vector<std::pair<std::string, std::string>> reference_outputs_of(const std::vector<std::string>& output_names);

struct ModuleTasks {
    std::string jsonl;                  // one task record a line, in file order
    int64_t converted = 0;
    std::vector<std::string> problems;  // "FILE: what is wrong", one per module that is not a task
};
// Converts every module PATH names, running each gen.py with `runner` (contained; its Python
// must have torch and numpy), `jobs` modules at a time, and checking what it wrote: the files
// the manifest names, of the sizes their shapes and dtypes make, told apart by the judge's rule;
// then the reference outputs, given as a program's outputs, must pass the task's own compare.py
// (a second, contained run of gen.py). A stop signal ends it with StoppedBySignal once the
// running scripts are done.
ModuleTasks tasks_from_modules(const std::string& path, judge::Runner& runner, int jobs = 1);

}  // namespace cuset::databuild
