// `cuset-train data check`: validates a JSONL training file sample by sample (schema, UTF-8,
// empty fields, duplicates, overlap with a benchmark, token lengths, tagger coverage), optionally compiles each sample's
// CUDA program with nvcc and runs it on a GPU (through a ProgramChecker), and writes the good
// samples and a JSON report.
// It never modifies its input. Loading for training is data.h; this file only judges samples.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/data/dataset.h"

namespace cuset {

// One step (compile or run) of a sample's program, as the report gives it.
struct ProgramStep {
    std::string status = "skipped";  // pass | fail | timeout | skipped
    double seconds = 0;
    int exit_code = 0;    // of the process, when it exited
    std::string message;  // first error line (compile) or last output line (run); for a timeout, what was killed
};

struct ProgramSteps {
    ProgramStep compile, run;
};

// What compiles (and runs) the samples' programs for --compile and --run. data check finds each
// sample's program and turns the steps into verdicts; the tools are the judge's
// (databuild/program_check.h), given by the command.
class ProgramChecker {
public:
    virtual ~ProgramChecker() = default;
    // Before any sample is read: the tools are there and work (UsageError otherwise).
    virtual void prepare() = 0;
    // The steps of programs[i], labelled labels[i] in messages. StoppedBySignal (exit 75) when
    // stopped by SIGINT/SIGTERM (the programs' processes are killed).
    virtual std::vector<ProgramSteps> check(const std::vector<std::string>& programs,
                                            const std::vector<std::string>& labels) = 0;
    // The report's "compile" part (nvcc, version, flags, jobs, timeout_s, containment) and "run"
    // part (gpu, probe; null without a run), after check().
    virtual nlohmann::json compile_info() const = 0;
    virtual nlohmann::json run_info() const = 0;
};

struct DataCheckOptions {
    std::string input;        // JSONL file to check
    std::string out;          // filtered JSONL (the kept samples, byte for byte); "" = not written
    std::string report;       // JSON report; "" = not written
    std::string config;       // the YAML config the caller loaded `cfg` from; "" = defaults
    std::string tokenizer;    // the tokenizer the caller put into the config (model.tokenizer); "" = the config's
    bool compile = false;     // compile each sample's fenced program (`programs`)
    bool run = false;         // build and run it where a GPU is present (exit code 0 = pass); implies compile
    ProgramChecker* programs = nullptr;  // the tools of compile and run (required with either)
    std::string progress = "auto";  // auto | always | never (progress bar on stderr)
    std::string against;      // benchmark JSONL: samples sharing a long n-gram with a task are rejected
    int ngram = 50;           // tokens per shared span (data/decontaminate.h)
    int64_t max_seq_len = 2048;   // data.max_seq_len: longer samples get a too_long warning
    bool drop_too_long = false;   // data.truncation drop (the warning says what the trainer does)
};

struct DataCheckSummary {
    int64_t lines = 0;     // lines in the file
    int64_t samples = 0;   // non-blank lines
    int64_t kept = 0;      // samples written to the filtered file
    int64_t rejected = 0;  // samples refused (bad record, duplicate, compile or run failure)
    int64_t warnings = 0;  // kept samples with a warning (too long, no kernel or launch found)
};

// Checks opts.input with the text pipeline of `text` (token lengths are measured when a tokenizer
// was asked for, or the default one is there), prints a summary and one line per rejected or warned
// sample on stdout, writes opts.out and opts.report when set. Throws UsageError for bad options
// (an output path that is the input, --compile without nvcc), InputError when the input cannot be
// read.
DataCheckSummary data_check(const DataCheckOptions& opts, const TextOptions& text);

// Program of a response for --compile: the fenced block tagged cuda/cu (or, failing that, an
// untagged or C/C++ block holding a __global__ function) that contains main(); the first
// candidate when none does. Returns false when the response has no such block.
bool data_extract_program(std::string_view response, std::string* program);

}  // namespace cuset
