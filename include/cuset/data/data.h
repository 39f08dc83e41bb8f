// Training samples: reading JSONL files into conversations and turning one conversation into the
// token row the trainer sees (ids, roles, trainable flags, CUDA-sensitivity bits). Batching,
// shuffling and caching live with the trainer; checking a file lives in data_check.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cuset/text/chat_format.h"
#include "cuset/tagger/tagger.h"

namespace cuset {

// Role of the single message of a plain-text record ({"text": ...}): pre-training text, no chat
// template, every token trainable.
inline constexpr const char* kTextRole = "text";

struct DataLoadOptions {
    bool skip_invalid = false;          // count and skip malformed lines instead of failing
    bool replace_invalid_utf8 = false;  // invalid UTF-8 becomes U+FFFD instead of an error
};

struct LoadReport {
    int64_t lines = 0;    // lines in the file, blank ones included
    int64_t loaded = 0;   // samples returned
    int64_t skipped = 0;  // malformed lines skipped (skip_invalid)
    std::vector<std::string> problems;  // "FILE:LINE: reason", one per skipped line
};

// Why one JSONL line was refused. `code` is one of "invalid_utf8", "invalid_json", "schema",
// "empty_field"; `message` is for people and carries no file or line.
struct RecordProblem {
    std::string code;
    std::string message;
};

// Parses one JSONL record into `out`. Accepted forms:
//   {"prompt": str, "response": str[, "system": str][, "id": str|int]}
//   {"messages": [{"role": "system"|"user"|"assistant", "content": str}, ...][, "id"]}
//   {"text": str[, "id"]}   (one message with role kTextRole)
// Other keys are ignored. Returns false and fills `problem` on a malformed record. When invalid
// UTF-8 was replaced (only with replace_invalid_utf8), `*fixed_line` receives the line with
// U+FFFD in its place; otherwise it is cleared. `out->id` is left empty when the record has no id.
bool data_parse_record(std::string_view line, bool replace_invalid_utf8, Conversation* out,
                       RecordProblem* problem, std::string* fixed_line = nullptr);

// JSONL: {"prompt","response"[, "system"][, "id"]} | {"messages":[{"role","content"}...]} |
// {"text": "..."}. Blank lines are ignored. A sample without an id gets "<file name>:<line>".
// A malformed line throws InputError "FILE:LINE: <reason>" (exit 3), or is counted and skipped
// with skip_invalid. A file with no sample at all is an InputError too.
std::vector<Conversation> data_load_jsonl(const std::string& path, const DataLoadOptions& opts,
                                          LoadReport* report = nullptr);

// One formatted, tagged sample as the trainer sees it.
struct TokenizedSample {
    std::string id;
    std::vector<int32_t> ids;        // [T] token ids
    std::vector<uint8_t> roles;      // [T] Role
    std::vector<uint8_t> trainable;  // [T] 1 = the token is a training target
    std::vector<uint32_t> tag_bits;  // [T] tagger category bits of the token's own source span (0 = not sensitive)
};

// Formats `conv` with the chat template and tags the response tokens: a token's bits are the
// union of the tagger spans its byte span overlaps, inside the assistant message (or plain text)
// that it covers; template, system and prompt tokens get 0.
TokenizedSample data_tokenize(const Conversation& conv, const ChatFormatter& formatter,
                              const TaggerOptions& tagger);

}  // namespace cuset
