// Helpers shared by the test programs: running the real binary or a Python reference script
// and capturing its output, scratch folders under the build tree, the configurations of short
// runs, and the numeric checks that record how close they came to their bounds.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

// Numeric tolerance checks. Each one is the gtest check it names and, when the environment
// variable CUSET_TOLERANCE_LOG names a file, also appends one line
//   <file relative to the repository>:<line> TAB <observed difference> TAB <bound>
// to it (O_APPEND: ctest runs tests in parallel processes). scripts/test-numerics.sh runs the
// suite under several numeric variants and reports, per check, the margin bound / observed.
//   CUSET_EXPECT_NEAR(a, b, tol)    |a - b| <= tol, as EXPECT_NEAR (observed |a - b|)
//   CUSET_EXPECT_WITHIN(diff, tol)  diff <= tol, for a difference already formed, e.g. the
//                                   largest |a - b| over a tensor (observed diff)
//   CUSET_ASSERT_NEAR, CUSET_ASSERT_WITHIN: the same, fatal.
//   CUSET_EXPECT_WITHIN_MARGIN(diff, tol, m)  CUSET_EXPECT_WITHIN for a bound that is not a
//                                   rounding bound of ours but a comparison with a reference
//                                   implementation's own error (the two are of one size): it
//                                   declares the margin it needs, m, in a fourth column, where
//                                   the report otherwise asks for 10.
// All take a streamed message like any gtest check. A NaN difference fails and is logged as nan.
#define CUSET_EXPECT_NEAR(a, b, tol) EXPECT_PRED_FORMAT3(::cuset::test::near_at(__FILE__, __LINE__), a, b, tol)
#define CUSET_ASSERT_NEAR(a, b, tol) ASSERT_PRED_FORMAT3(::cuset::test::near_at(__FILE__, __LINE__), a, b, tol)
#define CUSET_EXPECT_WITHIN(diff, tol) EXPECT_PRED_FORMAT2(::cuset::test::within_at(__FILE__, __LINE__), diff, tol)
#define CUSET_ASSERT_WITHIN(diff, tol) ASSERT_PRED_FORMAT2(::cuset::test::within_at(__FILE__, __LINE__), diff, tol)
#define CUSET_EXPECT_WITHIN_MARGIN(diff, tol, margin) \
    EXPECT_PRED_FORMAT2(::cuset::test::within_at(::cuset::test::Site{__FILE__, __LINE__}, margin), diff, tol)
// The site of a check made inside a helper function: helpers take a `Site` and their callers
// pass CUSET_HERE, so that each call is measured on its own.
#define CUSET_HERE (::cuset::test::Site{__FILE__, __LINE__})

namespace cuset::test {

// Where a tolerance check is written (a file as the compiler names it, and a line).
struct Site {
    const char* file;
    int line;
};

// Appends `site<TAB>observed<TAB>bound` to $CUSET_TOLERANCE_LOG when it is set (and a fourth
// column, the margin the check declares it needs, when margin > 0); nothing else.
void record_tolerance(const Site& site, double observed, double bound, double margin = 0);

// The checks behind the macros: gtest predicate-formatters that record as well.
struct NearAt {
    Site site;
    ::testing::AssertionResult operator()(const char* a_expr, const char* b_expr, const char* tol_expr, double a,
                                          double b, double tol) const;
};
struct WithinAt {
    Site site;
    double margin = 0;  // > 0: the margin this check declares (CUSET_EXPECT_WITHIN_MARGIN)
    ::testing::AssertionResult operator()(const char* diff_expr, const char* tol_expr, double diff,
                                          double tol) const;
};
inline NearAt near_at(const char* file, int line) { return NearAt{Site{file, line}}; }
inline WithinAt within_at(const char* file, int line) { return WithinAt{Site{file, line}}; }
inline NearAt near_at(const Site& s) { return NearAt{s}; }
inline WithinAt within_at(const Site& s, double margin = 0) { return WithinAt{s, margin}; }
// For helpers: CUSET_EXPECT_NEAR_AT(site, a, b, tol) and CUSET_EXPECT_WITHIN_AT(site, diff, tol).
#define CUSET_EXPECT_NEAR_AT(site, a, b, tol) EXPECT_PRED_FORMAT3(::cuset::test::near_at(site), a, b, tol)
#define CUSET_EXPECT_WITHIN_AT(site, diff, tol) EXPECT_PRED_FORMAT2(::cuset::test::within_at(site), diff, tol)
#define CUSET_ASSERT_WITHIN_AT(site, diff, tol) ASSERT_PRED_FORMAT2(::cuset::test::within_at(site), diff, tol)

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

// Ranks of one run started here as torchrun would start them (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR 127.0.0.1, MASTER_PORT): rank `rank` of `world` runs the binary with `--config cfg
// --run-name name` and `extra`, its stderr to `log`. free_port: a port for one test of this
// process (`offset` tells a test's runs apart) that is free on 127.0.0.1 now and lies outside the
// kernel's ephemeral range, so no outgoing connection of another process can take it meanwhile. wait_exit: the exit code (128 + signal when
// killed). run_ranks: all ranks, then every one must exit 0 (its log in the failure).
int free_port(int offset);
// Whether something accepts a TCP connection on 127.0.0.1:port now.
bool port_accepts(int port);
int spawn_rank(const std::string& cfg, const std::string& name, int rank, int world, int port, const std::string& log,
               const std::vector<std::string>& extra = {});
int wait_exit(int pid);
void run_ranks(int world, const std::string& cfg, const std::string& dir, const std::string& name, int port,
               const std::vector<std::string>& extra = {});

// The Hugging Face folder of the very small Qwen2 model made by tests/golden/tiny_model.py.
std::string tiny_model_dir();

// The non-empty lines of `path` (none when it cannot be read).
std::vector<std::string> lines_of(const std::string& path);

// The message of the cuset::InputError `f` throws, or "" when it throws none (a test then checks
// what the message names: an empty one names nothing).
std::string input_error_of(const std::function<void()>& f);

// A safetensors file's tensors and metadata, without the metadata "save_id" (the random identity
// of the checkpoint that holds it): what two runs that should agree bit for bit must share.
std::string safetensors_without_save_id(const std::string& path);

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
