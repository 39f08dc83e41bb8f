// Helpers shared by the test programs: running the real binary or a Python reference script
// and capturing its output, and scratch folders under the build tree.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuset::test {

struct RunResult {
    int exit_code = -1;
    std::string out;  // stdout
    std::string err;  // stderr
};

// Runs `cmd` through /bin/sh with stdout and stderr captured separately.
RunResult run_command(const std::string& cmd);

// Runs build/cuset-train with `args` (already shell-quoted where needed).
RunResult run_cuset(const std::string& args);

// A fresh empty folder under the build's test-work folder.
std::string scratch_dir(const std::string& name);

// Writes `text` to `path`.
void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);

// The step lines (those with a "loss") of a run folder's metrics.jsonl, in order.
std::vector<nlohmann::json> read_metrics(const std::string& run_dir);

// Starts build/cuset-train --config `cfg` --run-name `run_name` (stderr to <dir>/<run_name>.err),
// waits until <dir>/<run_name> has logged `steps` steps (or `timeout_s` passed), sends SIGTERM and
// waits for it. Returns the wait status and the steps logged by then.
struct Interrupted {
    int status = 0;    // waitpid's status
    size_t steps = 0;  // step lines in metrics.jsonl after the exit
};
Interrupted run_cuset_then_sigterm(const std::string& cfg, const std::string& dir, const std::string& run_name,
                                   size_t steps, int timeout_s);

// The Hugging Face folder of the very small Qwen2 model made by tests/golden/tiny_model.py.
std::string tiny_model_dir();

// The non-empty lines of `path` (none when it cannot be read).
std::vector<std::string> lines_of(const std::string& path);

// Number of non-overlapping occurrences of `needle` in `hay`.
int count_of(const std::string& hay, const std::string& needle);

}  // namespace cuset::test
