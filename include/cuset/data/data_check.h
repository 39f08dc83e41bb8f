// `cuset-train data check`: validates a JSONL training file sample by sample (schema, UTF-8,
// empty fields, duplicates, overlap with a benchmark, token lengths, tagger coverage), optionally compiles each sample's
// CUDA program with nvcc and runs it on a GPU, and writes the good samples and a JSON report.
// It never modifies its input. Loading for training is data.h; this file only judges samples.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cuset/data/dataset.h"
#include "cuset/judge/sandbox.h"

namespace cuset {

struct DataCheckOptions {
    std::string input;        // JSONL file to check
    std::string out;          // filtered JSONL (the kept samples, byte for byte); "" = not written
    std::string report;       // JSON report; "" = not written
    std::string config;       // the YAML config the caller loaded `cfg` from; "" = defaults
    std::string tokenizer;    // the tokenizer the caller put into the config (model.tokenizer); "" = the config's
    bool compile = false;     // compile each sample's fenced program with nvcc
    bool run = false;         // build and run it where a GPU is present (exit code 0 = pass); implies compile
    int jobs = 0;             // parallel nvcc/program processes; 0 = number of cores
    double timeout_s = 120;   // per compile and per run, wall clock; the process group is killed
    std::string nvcc;         // nvcc to use; "" = PATH, then /usr/local/cuda/bin/nvcc
    std::string nvcc_flags = "-std=c++17 -O2";  // with --run, "-arch=native" is appended
    std::string progress = "auto";  // auto | always | never (progress bar on stderr)
    std::string against;      // benchmark JSONL: samples sharing a long n-gram with a task are rejected
    int ngram = 50;           // tokens per shared span (data/decontaminate.h)
    int64_t max_seq_len = 2048;   // data.max_seq_len: longer samples get a too_long warning
    bool drop_too_long = false;   // data.truncation drop (the warning says what the trainer does)
    bool contain = true;          // eval.sandbox.enabled: compile and run inside the judge's sandbox
    judge::SandboxLimits limits;  // eval.sandbox.* limits of each compile and run
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
