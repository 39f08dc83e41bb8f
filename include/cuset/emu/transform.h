// The source rewrite of the CPU emulator: a CUDA program becomes a C++ translation unit that the
// host compiler builds against the cuemu runtime (cuset/emu/runtime.h).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "cuset/core/error.h"

namespace cuset::emu {

// Thrown by transform_program when its `cancelled` callback returned true: the caller stopped the
// rewrite (a deadline, a stop request), which says nothing about the program.
class TransformCancelled : public RuntimeFailure {
public:
    explicit TransformCancelled(const std::string& what) : RuntimeFailure(what) {}
};

// Rewrites the CUDA program `cuda_source` (the text of a .cu file) into C++ for the cuemu runtime,
// keeping every other character (so the line numbers of compiler errors still point at the
// program, except after a launch or an extern __shared__ declaration that spans lines, whose
// spaces between the kernel and `<<<`, after `>>>`, and between type and name are dropped):
//   - line endings: CRLF and lone CR become LF;
//   - a leading `/*@prompt ... @*/` metadata block (data/cuda-sft sources) becomes as many empty
//     lines;
//   - after each static `__shared__` declaration (not `extern`),
//     ` cuemu::poison_shared(&v, sizeof(v));` for each variable v it declares, so that a block
//     finds garbage in shared memory as on a GPU;
//   - `extern __shared__ T name[];` becomes `T* name = (T*)cuemu::dyn_smem();`;
//   - `cudaLaunchKernel((void*)k,` and `cudaLaunchCooperativeKernel((void*)k,` (also with
//     `const void*`) become `cuemu::launch_args(false, k,` and `cuemu::launch_args(true, k,`;
//   - each launch `k<<<cfg>>>(args)`, `k` with its qualification and template arguments, becomes
//     `cuemu::Launch(cfg).args(args).go([&]{ k(args); })` (the arguments read once as host
//     expressions, so that the runtime can check the pointers among them; no `.args(args)` when
//     the list is empty or holds a `{`); cfg holds the 2 to 4 launch parameters.
// These are the rules of the reference rewrite (tests/golden/emu_transform.py), character for character
// (whitespace and word characters are the ASCII ones), except that no rule starts a match inside a
// comment or a string or character literal (one code mask, computed once in one pass, so text in
// them is never rewritten; text in `#if 0` blocks is code to the rewrite) and that a launch's
// kernel name is never looked for before the end of the previous launch.
// Guarantees, on every input, hostile ones included:
//   - linear: every stage visits each character a bounded number of times (memoised next-match
//     finders, scans that never cross what a previous match consumed, template arguments scanned
//     back at most 4096 characters): a constant number of characters of work per input character
//     (about 10; under 128 on every hostile shape tests/emu/test_transform_fuzz.cpp counts it
//     on), about 50 MB/s; the output is at most about 20 times the input (a declaration of many
//     `__shared__` variables, each poisoned), the memory a few copies of the text plus one byte
//     of mask per character;
//   - cancellable: `cancelled`, when given, is called once per 65,536 characters of work; when it
//     returns true the rewrite stops there and throws TransformCancelled.
// Throws cuset::InputError with a one-line reason and its line number when the program cannot be
// rewritten: an unterminated comment or string/character literal, `<<<` without `>>>` or without
// an argument list, unbalanced parentheses in a launch's arguments or unbalanced (or longer than
// 4096 characters) template arguments before `<<<`, a `__shared__` declaration whose variables
// cannot be named.
std::string transform_program(std::string_view cuda_source, const std::function<bool()>& cancelled = {});

}  // namespace cuset::emu
