// The tools the judge runs and how they are found, once per run: nvcc, the host C++ compiler of
// the emulator, the Python of gen.py/compare.py (by default the project's own environment), and
// whether a GPU is present. Also the one reading of compiler and program output for error lines.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cuset/core/process.h"

namespace cuset::judge {

// nvcc: `configured` (a path, or a name on PATH; "" = "nvcc"), else /usr/local/cuda/bin/nvcc
// when the name was the default. Returns an absolute path; UsageError naming `key` and the fix
// when there is none.
std::string find_nvcc(const std::string& configured, const std::string& key);

// The toolkit folder of an nvcc (its bin/..), resolved through links.
std::string cuda_root_of(const std::string& nvcc);

// A program by name or path, as an absolute path ("" when there is none).
std::string find_program(const std::string& name);

// The Python that runs tasks' scripts and what the sandbox must show of it.
struct PythonInfo {
    std::string executable;          // absolute
    std::vector<std::string> roots;  // sys.prefix, sys.base_prefix and the interpreter's folder
    std::string version;             // "3.12.3"
    std::string origin;              // "eval.python", or "the project's environment" ...
};
// `configured` = "" picks the project's environment (.venv beside the build folder of this
// binary) when it exists, else python3 on PATH. UsageError when it cannot be run.
PythonInfo find_python(const std::string& configured, const std::string& key);

// Whether this machine has a GPU: CUSET_ASSUME_GPU=0|1, else `nvidia-smi -L` listing one, else
// /dev/nvidia0. `how` says what decided.
bool gpu_present(std::string* how);

// The first line of compiler output worth showing: the first holding "error" (any case) or
// "undefined reference", else the first non-empty one; "" when there is none. Valid UTF-8,
// clipped on a character boundary (utf8_sanitize, 240 bytes).
std::string first_error_line(const std::string& output);

// The last non-empty line of a program's output, as valid UTF-8 clipped like first_error_line;
// "" when there is none.
std::string last_output_line(const std::string& output);

// How a command ended, for messages: "timed out after 600 s", "stopped", "killed by signal 9",
// "exit status 1".
std::string process_ending(const ProcessResult& r, double timeout_s);

// A runtime the host compiler builds once per machine into the cache folder `dir` (the
// emulator's, and the emulated KernelBench extensions'): under an exclusive lock on <dir>.lock
// (other cuset processes wait), unless <dir>/ready exists: `write_files()` (it returns "" or why
// it cannot), then with `flags` the object `object` from `source` and, as an optimisation,
// `header` precompiled into <header>.gch (a failure leaves the plain header in use), then, when
// `library` is not empty, one more command (the compiler, `flags`, then `library`: a shared
// library's sources, output and libraries), <dir>/ready last. Returns "" when the folder is ready, else why not, e.g. "the emulator's runtime does not
// build (exit status 1): <its first error>" (`whose` = "the emulator's").
struct CachedRuntime {
    std::string source, object, header;
    std::vector<std::string> library;  // one more command after the flags (a shared library); {} = none
};
std::string build_cached_runtime(const std::string& cxx, const std::vector<std::string>& flags, const std::string& dir,
                                 const std::function<std::string()>& write_files, const CachedRuntime& runtime,
                                 double timeout_s, const std::string& whose);

}  // namespace cuset::judge
