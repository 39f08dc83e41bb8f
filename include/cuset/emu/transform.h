// The source rewrite of the CPU emulator: a CUDA program becomes a C++ translation unit that the
// host compiler builds against the cuemu runtime (cuset/emu/runtime.h).
#pragma once

#include <string>
#include <string_view>

namespace cuset::emu {

// Rewrites the CUDA program `cuda_source` (the text of a .cu file) into C++ for the cuemu runtime,
// keeping every other character (so the line numbers of compiler errors still point at the
// program, except after a launch or an extern __shared__ declaration that spans lines, whose
// spaces between the kernel and `<<<`, after `>>>`, and between type and name are dropped):
//   - line endings: CRLF and lone CR become LF;
//   - a leading `/*@prompt ... @*/` metadata block (data/cuda-sft sources) becomes as many empty
//     lines;
//   - after each static `__shared__` declaration (outside comments and literals, not `extern`),
//     ` cuemu::poison_shared(&v, sizeof(v));` for each variable v it declares, so that a block
//     finds garbage in shared memory as on a GPU;
//   - `extern __shared__ T name[];` becomes `T* name = (T*)cuemu::dyn_smem();`;
//   - `cudaLaunchKernel((void*)k,` and `cudaLaunchCooperativeKernel((void*)k,` (also with
//     `const void*`) become `cuemu::launch_args(false, k,` and `cuemu::launch_args(true, k,`;
//   - each launch `k<<<cfg>>>(args)` in code (not in a comment or a string or character literal),
//     `k` with its qualification and template arguments, becomes
//     `cuemu::Launch(cfg).go([&]{ k(args); })`; cfg holds the 2 to 4 launch parameters.
// These are the rules of the emulator's original Python rewrite, character for character
// (whitespace and word characters are the ASCII ones). Linear in the input's size; never loops.
// Throws cuset::InputError with a one-line reason and its line number when the program cannot be
// rewritten: an unterminated comment or string/character literal, `<<<` without `>>>` or without
// an argument list, unbalanced parentheses in a launch's arguments or unbalanced (or longer than
// 4096 characters) template arguments before `<<<`, a `__shared__` declaration whose variables
// cannot be named.
std::string transform_program(std::string_view cuda_source);

}  // namespace cuset::emu
