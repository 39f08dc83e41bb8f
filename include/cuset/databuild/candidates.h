// Where `data build` gets its candidate answers: a request is one turn of one (task, sample)
// conversation, and a source answers a batch of them. Two sources: a candidates file (answers
// written beforehand, keyed by task id, sample and round) and a model (the generate library,
// one prompt per request, each with its own seeded stream, so an answer does not depend on the
// batch it was generated in). The model's answers are kept in OUT/generations.jsonl as each
// round's batch completes, so that a resumed build reuses them instead of generating again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cuset/generate/generate_run.h"
#include "cuset/data/dataset.h"
#include "cuset/eval/cudabench.h"
#include "cuset/model/device.h"
#include "cuset/text/chat_format.h"

namespace cuset::databuild {

// One attempt's place: task id (as text), sample 1..K, round 1..R.
struct AttemptKey {
    std::string task;
    int64_t sample = 1, round = 1;
    bool operator<(const AttemptKey& o) const { return std::tie(task, sample, round) < std::tie(o.task, o.sample, o.round); }
    bool operator==(const AttemptKey& o) const { return task == o.task && sample == o.sample && round == o.round; }
    std::string name() const;  // "<task>/s<sample>/r<round>": the generation prompt's id, hence its seed
};

struct Request {
    AttemptKey key;
    Conversation conversation;  // system, user, then (assistant, user) per earlier round; ends with the user's turn
};

struct Answer {
    std::optional<std::string> response;  // nullopt: the source has no answer (the sample's chain ends)
    int64_t tokens = -1;                  // generated tokens; -1 = not known (counted by the build)
};

class CandidateSource {
public:
    virtual ~CandidateSource() = default;
    // Answers, one per request, in order.
    virtual std::vector<Answer> answer(const std::vector<Request>& requests) = 0;
    virtual std::string describe() const = 0;  // for the log and the report
};

// A candidates file, one JSON object a line, either
//   {"id": <task id>, "sample": K (1), "round": R (1), "response": "<the answer>"}   (defaults in brackets)
// or a line of CUDABench's results format ({"id", ..., "response1", "code1", ...}): response<i>
// is sample i of round 1 (a null response with a code<i> is that code in a ```cuda block).
// Errors name "<file>:<line>": bad JSON, a missing or mistyped field, a task id that `tasks`
// lacks, the same (id, sample, round) twice.
class FileCandidates : public CandidateSource {
public:
    FileCandidates(const std::string& path, const std::vector<eval::Task>& tasks);
    std::vector<Answer> answer(const std::vector<Request>& requests) override;
    std::string describe() const override { return "candidates " + path_; }
    size_t size() const { return answers_.size(); }

private:
    std::string path_;
    std::map<AttemptKey, std::string> answers_;
};

// A model through generate_run: `generate`'s model, adapter and settings (its n is taken as 1:
// every request is its own prompt; its prompts and out are this source's own files). `cache` is
// the append-only file of answers already generated (id, response, generated_tokens per line),
// read back at construction.
class ModelCandidates : public CandidateSource {
public:
    ModelCandidates(GenerateRequest generate, TextOptions text, Runtime runtime, std::string cache);
    std::vector<Answer> answer(const std::vector<Request>& requests) override;
    std::string describe() const override;

private:
    GenerateRequest generate_;
    TextOptions text_;
    Runtime runtime_;
    std::string cache_;
    std::map<std::string, Answer> cached_;
};

}  // namespace cuset::databuild
