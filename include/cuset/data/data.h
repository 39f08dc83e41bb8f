// Training samples: reading JSONL files into conversations and turning one conversation into the
// token row the trainer sees (ids, roles, trainable flags, CUDA-sensitivity bits). Batching,
// shuffling and caching live with the trainer; checking a file lives in data_check.h.
#pragma once

#include <cstdint>
#include <optional>
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

// What a record is read for.
enum class RecordUse {
    kTraining,  // training data (and `tokenize`): a conversation that ends with the assistant's answer
    kPrompt,    // a generation prompt: it ends with a user turn; a final assistant turn, or a prompt
                // record's "response", is the reference answer, kept aside (not shown to the model)
};

struct RecordOptions {
    RecordUse use = RecordUse::kTraining;
    bool replace_invalid_utf8 = false;  // invalid UTF-8 becomes U+FFFD instead of a problem
};

// One JSONL record as data_parse_record() reads it.
struct Record {
    Conversation conversation;             // its id is left empty when the record has none
    std::optional<std::string> reference;  // kPrompt: the reference answer, when the record has one
    std::string fixed_line;                // the line with U+FFFD for its invalid UTF-8 (replace_invalid_utf8); else ""
};

// The one parser of JSONL records, for training data, generation prompts and `tokenize`. Forms:
//   {"prompt": str, "response": str[, "system": str][, "id": str|int]}   ("response" optional for kPrompt)
//   {"messages": [{"role": "system"|"user"|"assistant", "content": str|parts}, ...][, "id"]}
//   {"text": str[, "id"]}   (one message with role kTextRole)
// where parts is a list of text parts [{"type": "text", "text": str}, ...] (Message::parts; a part
// of another type is refused).
// The first two may carry "tools": [object, ...] (JSON schemas) and "documents": [object, ...],
// which go to the chat template as apply_chat_template's tools and documents (Conversation::tools,
// ::documents; null = none); a "text" record may not. Other keys are ignored. The rules, whatever the use: the line is UTF-8 (or repaired) without a
// raw NUL byte, one JSON object, of exactly one form; "id" is a string or an integer; every text
// is a string and, but for a system text (dropped when blank), not blank; only the first message
// may be the system's. kTraining: the messages end with the assistant's. kPrompt: they end with
// the user's, optionally followed by the assistant's reference answer. Returns false and fills
// `problem` on a malformed record.
bool data_parse_record(std::string_view line, const RecordOptions& opts, Record* out, RecordProblem* problem);

// A line of a JSONL file that holds no record (only whitespace): every reader skips it.
bool data_line_blank(std::string_view line);

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
