// The one way cuset parses JSON: every JSON text it reads (config.json, tokenizer files, adapter
// and safetensors headers, JSONL records, tasks and results files, summaries, configuration
// values) goes through json_parse(), which refuses nesting deeper than kJsonMaxDepth before the
// parser sees the text. nlohmann's parser itself takes any depth, but the recursive steps after it
// (dump, get<>, comparisons, our own walks) would overflow the stack on a million-deep array.
// Also the writing side's one guard, json_text(). Not here: reading the file (input_file.h), the
// schema of any one file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"

namespace cuset {

// The deepest nesting of arrays and objects accepted in any JSON text cuset reads.
inline constexpr size_t kJsonMaxDepth = 128;

// "" when `text` nests no deeper than max_depth; else "JSON nested deeper than 128 levels at line L,
// column C (the most cuset reads)" ("at column C" for a text of one line). Strings are skipped, so brackets inside them do not count;
// the text need not be valid JSON (the parser reports that).
std::string json_depth_problem(std::string_view text, size_t max_depth = kJsonMaxDepth);

// The parser's message without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& e);

// Throws `msg` as the error type of `code`: UsageError, RuntimeFailure, else InputError.
[[noreturn]] void json_throw(ExitCode code, const std::string& msg);

// Parses `text` (nlohmann::json or nlohmann::ordered_json). An error is thrown as `code` (InputError
// for a file, UsageError for a configuration value, RuntimeFailure for cuset's own text) in one line:
//   "<where>: JSON nested deeper than ..." or "<where>: not valid JSON (<parser message>)".
// `where` names the file, and the line of a JSONL record ("data.jsonl:12").
template <typename Json = nlohmann::json>
Json json_parse(std::string_view text, const std::string& where, ExitCode code = ExitCode::kBadInput) {
    if (std::string p = json_depth_problem(text); !p.empty()) json_throw(code, where + ": " + p);
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::exception& e) {
        json_throw(code, where + ": not valid JSON (" + quote_bounded(json_error_text(e)) + ")");
    }
}

// `j` as JSON text (indent < 0: one line), never throwing on a string that is not UTF-8: its bad
// bytes are written as U+FFFD (nlohmann's error_handler_t::replace). Every file whose strings can
// hold what a judged program printed (eval.json, judged.jsonl, rewards.jsonl, build.json) is
// written through it, a second line of defence behind utf8_sanitize() where such text is made.
template <typename Json>
std::string json_text(const Json& j, int indent = -1) {
    return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

// The typed reader of one parsed record: each field is read as the type the file's schema gives
// it, and a field of another type (or a required one missing) is an InputError in one line,
// "<where>: \"<key>\" must be <type>" (`where` names the file and line), never the parser
// library's type_error. Absent and null are the same for the optional getters.
class JsonFields {
public:
    // InputError "<where>: expected a JSON object" when `j` is not one.
    JsonFields(const nlohmann::json& j, std::string where);
    bool has(const char* key) const;  // present and not null
    std::string string(const char* key) const;
    std::optional<std::string> opt_string(const char* key) const;
    int64_t integer(const char* key) const;
    int64_t integer_or(const char* key, int64_t fallback) const;
    double number(const char* key) const;
    double number_or(const char* key, double fallback) const;
    bool boolean_or(const char* key, bool fallback) const;
    // An id: an integer or a string, as text (an integer as its decimal digits).
    std::string id(const char* key) const;
    const std::string& where() const { return where_; }

private:
    [[noreturn]] void wrong(const char* key, const char* type) const;
    const nlohmann::json& j_;
    std::string where_;
};

// The regular file `path` (read_input_file(), at most max_bytes) parsed as above; `where` is the path.
nlohmann::json json_read_file(const std::string& path, const std::string& what);

}  // namespace cuset
