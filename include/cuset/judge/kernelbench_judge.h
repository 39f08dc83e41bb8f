// What the runner (judge/runner.h) needs to judge KernelBench candidates: a Python file defining
// `ModelNew`, whose CUDA is built with torch.utils.cpp_extension.load_inline, against a problem
// module (`Model`, `get_inputs`, `get_init_inputs`). The stages, each contained as a CUDA
// program's are, map onto the runner's:
//   static     KernelBench's static check of the text (judge/kernel_static_check.h); an error is
//              the status static-check, nothing runs
//   capture    harness.py capture, in the sample's folder: the candidate's module runs with
//              load_inline recording its calls (build/calls.json: each call's main.cpp and
//              cuda.cu, composed as torch's load_inline composes them); an exception is a
//              compile-error (KernelBench's "compilation failure")
//   build      compile: nvcc and the host compiler build each call's two translation units as
//              torch's build does (objects only); emulate: cuda.cu rewritten for the emulator
//              (emu/transform.h) and both built by the host compiler into a CPU extension
//              against the emulator's runtime and a precompiled torch/extension.h (the
//              toolchain below), in the sample's own build/ folder
//   generate   the problem's reference run (gen.py = reference.py): KernelBench's seeds, its
//              number of trials, inputs and reference outputs in files (once per problem)
//   run        harness.py run: ModelNew built and run on each trial's inputs, load_inline
//              answering with the extensions built above; writes the outputs
//   check      compare.py in a fresh folder: KernelBench's shape, dtype and allclose rule, and
//              the anti-hacking statuses (input-mutated, no-kernel, constant-output)
// The scripts are src/judge/kernelbench/*.py, embedded in the library at build time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuset::judge {

// A KernelBench problem as the judge checks candidates against it.
struct KernelBenchProblemCheck {
    std::string source;              // the problem module's text
    std::string precision = "fp32";  // fp32 | fp16 | bf16: the inputs' and models' dtype
    double tolerance = 1e-4;         // atol = rtol of torch.allclose (KernelBench's per precision)
    int trials = 5;                  // KernelBench's num_correct_trials (its scripts' default)
    // cuset's trials after KernelBench's, on inputs a candidate could not have been written for:
    // other seeds, and in the last, inputs of both signs where the draw has no negative element
    // (reference.py says the rule); a value wrong only there is the status input-specific.
    int extra_trials = 2;
    int64_t seed = 42;               // KernelBench's seed_num
};

// The files of src/judge/kernelbench/ (the three scripts and common.py, prelude.h and the
// stand-in headers under include/), as (relative path, text).
const std::vector<std::pair<std::string, std::string>>& kernelbench_files();

// The scripts of a problem's stages: each the embedded script after a prefix setting KB_SOURCE
// (the problem) and KB (precision, tolerance, seed, the file names), then common.py (what the
// three share: seeding, casting, the problem module, the layout of tensors in files). The file names are string
// literals of the prefixes, so that the runner's rule (judge/task_files.h) tells them apart: the
// inputs (data/inputs.json, data/input_t<k>.bin) are named by the harness, the reference outputs
// (data/refs.json, data/ref_t<k>.bin) and the candidate's outputs (data/outputs.json,
// data/output_t<k>.bin) by compare.py. `max_input_elements` > 0 lets the reference stage run the
// problem at reduced sizes when its inputs hold more elements (reference.py says the rule).
struct KernelBenchScripts {
    std::string gen_py, harness_py, compare_py;
};
KernelBenchScripts kernelbench_scripts(const KernelBenchProblemCheck& problem, int64_t max_input_elements);

// What the reference stage's standard output says about the sizes it ran at: "" when it ran the
// problem as written, else one line for the verdict ("emulated at reduced sizes: batch_size 4096
// -> 128, dim 393216 -> 512").
std::string kernelbench_size_note(const std::string& reference_stdout);

// The status compare.py named before its verdict F ("input-mutated", "no-kernel",
// "constant-output", "mismatch"; "" when it named none) and the line of detail before it.
std::string kernelbench_checked_status(const std::string& compare_stdout, std::string* detail);

// One load_inline call the capture stage recorded: its two translation units as torch writes
// them (cuda_cu "" when the call has no CUDA sources).
struct KernelBenchCall {
    std::string main_cpp, cuda_cu;
};
// The calls of a capture stage's build/calls.json, written by the candidate's process (so read
// as untrusted: a JSON list of objects with the two strings); `error` says what is wrong when it
// is not that, and the list is then empty.
std::vector<KernelBenchCall> parse_kernelbench_calls(const std::string& text, std::string* error);
// The calls as build/calls.json holds them (what parse_kernelbench_calls reads back): the judge's
// own copy, which the run stage answers load_inline's calls against.
std::string kernelbench_calls_json(const std::vector<KernelBenchCall>& calls);

// The #include lines of `unit` (a translation unit's text) that name their file as a literal
// ("x.h" or <x.h>): where each line begins and ends (its newline excluded) and the name.
struct KernelBenchInclude {
    size_t begin = 0, end = 0;
    std::string path;
};
std::vector<KernelBenchInclude> kernelbench_includes(const std::string& unit);

// The first #include of `unit` (a translation unit's text) that names a file no build of the
// candidate may read: an absolute path or one that climbs with "..", written as a literal
// ("/home/u/x.h", </dev/zero>, "../x"). Its folder holds only its own sources, and what it may
// include is the toolkit's, torch's and the system's headers, by name; "" when there is none.
// An include built by a macro is left to the compilers (the sandbox holds no such file).
std::string kernelbench_foreign_include(const std::string& unit);

// torch as the judge's Python has it: what an extension is built against.
struct TorchBuildInfo {
    std::vector<std::string> include_dirs;  // torch's, then Python's
    std::vector<std::string> library_dirs;
    int cxx11_abi = 1;
    std::string version;
    std::string root;   // torch's package folder: its headers and libraries lie under it
    std::string error;  // "" = read; else why not (no torch in that Python, ...)
};
TorchBuildInfo torch_build_info(const std::string& python);

// A compiler argument as the judge's caches key it: torch's package folder (a virtual
// environment's, wherever its checkout lies) named by torch's version instead, so that a second
// checkout with the same torch finds the extensions and the compilers' answers the first one made.
std::string torch_neutral(std::string arg, const TorchBuildInfo& torch);

// The toolchain of emulated extensions, built once per machine into `cache_root`
// (kernelbench-<hash>/): the scripts' headers, the emulator's runtime compiled as position-
// independent code, and prelude.h precompiled (torch/extension.h read as host code, then the
// emulator's cuemu.h).
struct KernelBenchToolchain {
    std::string dir;
    std::vector<std::string> flags;  // both translation units: -include <dir>/prelude.h comes last
    std::vector<std::string> link;   // after the sources: the runtime object and torch's libraries
    // The device memory of the candidate's run (kernelbench/device.cpp, a shared library the
    // harness loads before the candidate): torch's CPU allocator for "CUDA" tensors, closed to
    // host code outside kernels, the emulator's copies and torch's data-movement operators.
    std::string device_library;
    std::string error;               // "" = ready
};
KernelBenchToolchain prepare_kernelbench_toolchain(const std::string& cxx, const std::string& emu_dir,
                                                   const std::vector<std::string>& emu_flags, const TorchBuildInfo& torch,
                                                   const std::string& cache_root);

// The flags torch's own build gives a CUDA extension's translation units (C++20, torch's and
// Python's headers, its ABI and half-precision macros): `nvcc -c cuda.cu` and `g++ -c main.cpp`
// under --judge compile.
std::vector<std::string> kernelbench_nvcc_flags(const TorchBuildInfo& torch);
std::vector<std::string> kernelbench_cxx_flags(const TorchBuildInfo& torch);

}  // namespace cuset::judge
