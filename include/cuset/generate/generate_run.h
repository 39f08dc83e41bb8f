// `cuset-train generate`: prompts file (JSONL) -> one JSON line per sample. Prompts are read in
// the data formats ({"prompt"[, "system"][, "response"][, "id"]}, {"messages": [..., user
// (, assistant)]}, {"text"}); a record's response or final assistant message is not shown to
// the model and is copied to the output as "reference". Each prompt is rendered by the
// configured chat format with its generation prompt, decoded in batches of similar length, and
// written atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuset/data/dataset.h"
#include "cuset/generate/openai_client.h"
#include "cuset/generate/sampling.h"
#include "cuset/model/device.h"
#include "cuset/text/chat_format.h"

namespace cuset {

class Tokenizer;

// How to generate (generate.* and log.progress of a run's configuration; sampling follows
// transformers' generate(): temperature 0 is greedy).
struct GenerateSettings {
    int64_t max_new_tokens = 256;
    int64_t n = 1;                  // samples per prompt
    SamplingOptions sampling;       // temperature, top_k, top_p, min_p, repetition_penalty
    int64_t seed = 1234;            // each sample's stream is seeded from (seed, prompt id, sample index)
    int64_t batch_size = 8;         // sequences decoded together
    std::string stop;               // JSON array of stop strings, e.g. ["\n\n\n"]; "" = none
    bool thinking = false;          // Qwen3: let the model write its think block
    bool skip_invalid = false;      // count and skip bad prompts instead of stopping
    std::string progress = "auto";  // auto | always | never (progress bar on stderr)
    std::string backend = "local";  // local (the model on this machine) | openai (a served model)
    ServerSettings server;          // backend openai: the server, its model name, key, concurrency
};

struct GenerateRequest {
    std::string model;      // model folder (the command's --model, else model.path)
    std::string adapter;    // model.lora.path: a LoRA adapter attached whenever set
    std::string tokenizer;  // model.tokenizer ("" = the model's): never written over
    std::string prompts;    // JSONL file
    std::string out;        // output JSONL file
    GenerateSettings settings;
};

struct GenerateSummary {
    int64_t prompts = 0;           // prompts generated for
    int64_t skipped = 0;           // bad prompts skipped (generate.skip_invalid)
    int64_t samples = 0;           // output lines
    int64_t generated_tokens = 0;  // over all samples
    double seconds = 0;            // decoding wall time
};

// One prompt record of a prompts file.
struct PromptRecord {
    std::string id;                       // the record's id, or "<file name>:<line>"
    Conversation prompt;                  // ends with the user message (or one raw-text message)
    std::optional<std::string> reference; // the response / final assistant message, when present
    int64_t line = 0;
};

// Parses one JSONL line with data_parse_record's rules for a prompt (RecordUse::kPrompt, the
// rules of training data but for the end: a user turn, then optionally the reference answer).
// Returns false and sets `problem` (for people, no file or line) when the record is malformed.
bool prompt_parse(const std::string& line, PromptRecord* out, std::string* problem);

// The prompts-file line (no newline) that prompt_parse reads back as `c` under `id`:
// {"id": id, "messages": [{"role", "content"}, ...]}; bytes that are not UTF-8 are written as U+FFFD.
std::string prompt_record_line(const std::string& id, const Conversation& c);

// The ids sequences finish on: the tokenizer's EOS, the model's eos_token_id (config.json and
// generation_config.json of `model_dir`), and the format's end-of-turn text when it is one
// token (otherwise it is added to `stop_strings`).
std::vector<int32_t> generate_eos_ids(const Tokenizer& tok, const ChatFormatter& fmt, const std::string& model_dir,
                                      const std::vector<int64_t>& model_eos, std::vector<std::string>* stop_strings);

// Generates for req.prompts with req.model (and req.adapter), the text pipeline of `text` (built
// by the application layer for that model) on `runtime`'s device, dtype and threads. With
// settings.backend "openai" it is generate_run_openai (no model or tokenizer is loaded here).
GenerateSummary generate_run(const GenerateRequest& req, const TextOptions& text, const Runtime& runtime);

// The `openai` backend: each prompt's messages (with data.system_prompt, text.chat_format's
// system_prompt, as a system message when the record has none) are sent to settings.server's
// chat-completions endpoint, which applies the model's chat template; the sampling keys are sent
// one to one, n samples per request (more requests when the server returns fewer choices). The
// output lines are those of the local backend; finish_reason is "stop" or "length" (the server
// does not tell an end-of-sequence token from a stop string), generated_tokens is the answer's
// usage.completion_tokens (-1 when one answer holds several choices and the server gives only
// their total), prompt_tokens usage.prompt_tokens (-1 when absent).
GenerateSummary generate_run_openai(const GenerateRequest& req, const TextOptions& text);

}  // namespace cuset
