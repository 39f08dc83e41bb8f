// Helpers shared by the test programs: running the real binary or a Python reference script
// and capturing its output, scratch folders under the build tree, and the configurations of short
// runs.
#pragma once

#include <string>
#include <utility>
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

// ---------------------------------------------------------------- configurations

// One key of a configuration: its dotted path ("train.max_steps", "model.lora.r") and its value as
// written in YAML ("2", "1.0e-2", "\"\"" for an empty string).
using ConfigKeys = std::vector<std::pair<std::string, std::string>>;

// A value for a key of tiny_run_keys() that takes it out, so that the schema's default applies.
extern const char* const kDefault;

// YAML of `keys`, nested by their dots, sections in the order they first appear.
std::string yaml_of(const ConfigKeys& keys);

// The keys of a short training run on the CPU: the tiny model (tiny_model_dir()) in fp32 on
// tests/fixtures/mini_sft.jsonl (train and eval, chatml, max_seq_len 160, no tokenised cache),
// region window 16, one thread, micro-batch 2 x accumulation 2, 2 steps at lr 1e-2 after 2 warmup
// steps, seed 7, no checkpoint before the end, every step logged, no progress bar, the run
// folders under `output_dir`.
ConfigKeys tiny_run_keys(const std::string& output_dir);

// tiny_run_keys(output_dir) with `changes`: a key already there takes the new value (kDefault
// removes it), another is added; as YAML.
std::string tiny_run_yaml(const std::string& output_dir, const ConfigKeys& changes = {});

// tiny_run_yaml() written to `path`; returns `path`.
std::string write_tiny_run_config(const std::string& path, const std::string& output_dir, const ConfigKeys& changes = {});

}  // namespace cuset::test
