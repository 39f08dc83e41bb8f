// `cuset-train data build`: tasks -> candidates -> judge -> repair -> keep. For every task, K
// samples; each answer is judged through eval's judge (the one runner of untrusted programs,
// exactly the code path of `eval`); a failed sample gets up to R-1 repair turns, in which its
// conversation continues with a user turn carrying the judge's finding (eval/repair.h) and the source
// answers again; the passing answers are kept by a policy (keep.h) and written as training data.
// Every attempt is appended to OUT/build.jsonl as it is judged (attempt_log.h); the same command
// run again continues where it stopped and writes the same train.jsonl as an uninterrupted run.
// A first SIGINT/SIGTERM stops it within seconds (the judge's commands are killed, the attempts
// judged so far stay) with StoppedBySignal (exit 75).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/databuild/candidates.h"
#include "cuset/databuild/keep.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"
#include "cuset/text/tokenizer.h"

namespace cuset::databuild {

enum class TrainFormat { kPrompt, kMessages };
const char* train_format_name(TrainFormat f);       // "prompt" | "messages"
TrainFormat train_format_parse(const std::string& name);  // UsageError for an unknown name

struct BuildOptions {
    std::string tasks_file;        // where the tasks came from (for the report and the resume check)
    std::string candidates_file;   // --candidates ("" = a model answers): an input no output may be
    std::string out;               // output folder (required)
    int64_t samples = 1;           // K per task
    int64_t rounds = 1;            // R: attempts per sample at most (1 = no repair)
    int level = 1;                 // CUDABench description level of the prompts (1 = the most detailed)
    std::string gpu_name = eval::kDefaultGpuName;  // the GPU the prompts name ("" = each task's)
    KeepPolicy keep = KeepPolicy::kFirst;
    TrainFormat format = TrainFormat::kPrompt;
    eval::JudgeOptions judge;      // the judge (eval.*); its work_dir is replaced by OUT/work
    std::string against;           // benchmark JSONL: kept samples sharing a long n-gram with it are dropped ("" = none)
    int ngram = 50;                // tokens per shared span for `against` (decontaminate.h's kOverlapNgram)
    std::string source_key;        // what determines the answers (candidates file, model and generate.*): part of the resume check
    bool progress_bar = false;
    const Tokenizer* tokenizer = nullptr;  // counts the tokens of answers whose source did not (required)
};

// One round's figures, cumulative: what passed by the end of round `round`.
struct RoundFigures {
    int64_t round = 1;
    int64_t attempts = 0, passed = 0, unjudged = 0;  // of this round
    int64_t tasks_passed = 0;    // tasks with a passing sample by this round
    int64_t samples_passed = 0;  // samples (chains) passing by this round
};

struct BuildSummary {
    std::string judge_label;     // "gpu" | "emulated" | "compile-only"
    std::string criterion;       // "functional" | "compiled"
    std::string notice;          // the judge's notice ("" = none)
    int64_t tasks = 0, samples = 0, attempts = 0, resumed = 0;
    std::vector<RoundFigures> rounds;
    int64_t kept = 0, exact_duplicates = 0, near_duplicates = 0, contaminated = 0;
    int64_t attempt_tokens = 0;  // tokens of every answer judged
    int64_t kept_tokens = 0;     // tokens of the kept answers
    double judge_seconds = 0;    // judging wall time summed over attempts
    nlohmann::ordered_json json; // build.json as written
};

// Refuses (UsageError) an output folder that is a file, or whose outputs or work folder would be
// one of the inputs (tasks, candidates, decontamination set), through any link.
void build_output_check(const BuildOptions& opts);

// Runs the build of `tasks` with answers from `source`. Writes OUT/build.jsonl (appended per
// attempt), OUT/train.jsonl, OUT/build.json and OUT/build.html (the last three atomically, at
// the end). UsageError when OUT holds a build made with other settings.
BuildSummary build_run(const std::vector<eval::Task>& tasks, CandidateSource& source, const BuildOptions& opts);

}  // namespace cuset::databuild
