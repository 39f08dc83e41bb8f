// The judge's speed-up measure, apart from judging (as KernelBench keeps its timing apart from its
// evaluation): a program's timed runs and their median, and the speed-up of a program against its
// task's reference solution. The runs themselves are the runner's (judge/runner.h): each in a fresh
// contained folder holding only its binary and the task's inputs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cuset::judge {

// A passing program and its task's reference solution (bench.cu) are each run `warmup` times
// untimed, then `repeats` times timed, one timed run at a time in a Runner, and their median wall
// times (start to exit, the CUDA context's start included: CUDABench's programs are whole
// programs) compared.
struct SpeedupOptions {
    bool enabled = false;
    int warmup = 1;
    int repeats = 5;
};

// The median of `seconds` (the mean of the two middle values for an even count); NaN when empty.
double median_seconds(std::vector<double> seconds);

// Run `index` (0-based, warm-up runs first) of a program: its wall seconds, or nullopt with `why`
// saying how the run failed.
using TimedRun = std::function<std::optional<double>(int index, std::string* why)>;

// The warm-up runs and then the timed runs of `o`, in order, stopping at the first that fails
// (nullopt; `why` is "timing run N: <how>"); else the median of the timed runs.
std::optional<double> median_of_timed_runs(const SpeedupOptions& o, const TimedRun& run, std::string* why);

// How many times faster the program is than the reference: reference_s / program_s, with the
// program's time taken as at least a microsecond.
double speedup_of(double reference_s, double program_s);

}  // namespace cuset::judge
