// The tools the judge runs and how they are found, once per run: nvcc, the host C++ compiler of
// the emulator, the Python of gen.py/compare.py (by default the project's own environment), and
// whether a GPU is present. Also the one reading of compiler and program output for error lines.
#pragma once

#include <string>
#include <vector>

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

}  // namespace cuset::judge
