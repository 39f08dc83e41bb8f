// KernelBench's static check of a candidate (a Python file defining ModelNew whose CUDA sources
// are built with torch.utils.cpp_extension.load_inline): the rule set of its
// validate_kernel_static (kernelbench/kernel_static_checker.py) for backend cuda, with its
// semantics: the same comment stripping, the same patterns matched as Python's re matches them,
// the same default errors and warnings, and its verdict strings as the findings' messages.
// Not here: the judge's statuses, running the candidate, KernelBench's other backends (hip,
// triton, ...). A static check is a screen, not a proof: the runtime checks stay the judge's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cuset::judge {

// The checks, in the order of KernelBench's registry (CHECK_FUNCTIONS, its cuda ones):
//   code_bypass            try/except (a fallback when the kernel fails) or `pass` (inheritance bypass)
//   pytorch_wrap           torch.nn.<X> other than the containers, Parameter and init
//   timing_event_patch     assignments to torch.cuda.Event(.record/.elapsed_time),
//                          torch.cuda.synchronize, time.perf_counter, time.time
//   torch_computation_ops  torch's computing operators (torch.matmul, torch.relu, ...) and
//                          torch.nn.functional ones (F.conv..., F.softmax, ...)
//   stream_injection       CUDA streams: created, entered, waited on or recorded
//   thread_injection       threading, multiprocessing, concurrent.futures
//   lazy_eval              tensor subclasses, _make_subclass, torch.Tensor.__new__
//   precision_downgrade    fp32 made fp16 (__float2half, casts to half, .half(), .to(torch.float16)),
//                          checked only when the precision is fp32
//   cuda_impl              no __global__ kernel, or neither load_inline nor cpp_extension
const std::vector<std::string>& kernel_static_check_names();

// KernelBench's defaults: its STRICT_CHECKS as errors (code_bypass, timing_event_patch,
// thread_injection, lazy_eval) and its WARNING_CHECKS as warnings (pytorch_wrap,
// torch_computation_ops, stream_injection, precision_downgrade).
const std::vector<std::string>& kernel_static_default_errors();
const std::vector<std::string>& kernel_static_default_warnings();

struct KernelStaticCheckOptions {
    // KernelBench's precision argument, and its default. Only precision_downgrade reads it: it
    // runs when the precision is "fp32" or "float32" (any case), not for fp16 or bf16.
    std::string precision = "fp16";
    // The checks whose finding makes the candidate invalid, and those only reported. cuda_impl is
    // always an error, and a check named in both lists is one. A name that is not a check is a
    // UsageError.
    std::vector<std::string> errors = kernel_static_default_errors();
    std::vector<std::string> warnings = kernel_static_default_warnings();
};

struct KernelStaticFinding {
    std::string check;    // its name: "code_bypass", "cuda_impl", ...
    std::string message;  // KernelBench's verdict string: "Contains 'pass' statement (inheritance bypass)"
};

struct KernelStaticCheck {
    bool valid = true;  // no errors
    std::vector<KernelStaticFinding> errors;    // in kernel_static_check_names()' order
    std::vector<KernelStaticFinding> warnings;  // in kernel_static_check_names()' order
};

// The checks of `options` on a candidate's text. The text is read as Python's
// bytes.decode("utf-8", "replace") reads it. Comments are KernelBench's: each line is cut at its
// first '#', then at its first '//', wherever they stand (inside a string too, so an #include of
// a CUDA string goes, and so does what follows a Python floor division `//`).
// A check whose pattern the matcher gives up on (its backtracking limit, on pathological text)
// is reported as flagged, with a message saying so: the check fails closed.
KernelStaticCheck kernel_static_check(std::string_view code, const KernelStaticCheckOptions& options = {});

}  // namespace cuset::judge
