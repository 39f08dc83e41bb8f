// The depth-bounded JSON parse.
#include "cuset/core/json_io.h"

#include <cstdint>
#include <cstdio>

#include "cuset/core/input_file.h"

namespace cuset {

std::string json_depth_problem(std::string_view text, size_t max_depth) {
    size_t depth = 0, line = 1, line_start = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;  // the escaped character never ends the string
            else if (c == '"') in_string = false;
            else if (c == '\n') ++line, line_start = i + 1;
            continue;
        }
        switch (c) {
            case '"': in_string = true; break;
            case '\n': ++line, line_start = i + 1; break;
            case '[':
            case '{':
                if (++depth > max_depth) {
                    // A one-line text (a JSONL record, whose line the caller names) gets only its column.
                    const bool one_line = text.find('\n') == std::string_view::npos;
                    char buf[160];
                    if (one_line)
                        std::snprintf(buf, sizeof buf, "JSON nested deeper than %zu levels at column %zu (the most cuset reads)",
                                      max_depth, i + 1);
                    else
                        std::snprintf(buf, sizeof buf,
                                      "JSON nested deeper than %zu levels at line %zu, column %zu (the most cuset reads)",
                                      max_depth, line, i - line_start + 1);
                    return buf;
                }
                break;
            case ']':
            case '}':
                if (depth > 0) --depth;
                break;
            default: break;
        }
    }
    return "";
}

std::string json_error_text(const std::exception& e) {
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0)
        if (size_t close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
    return what;
}

void json_throw(ExitCode code, const std::string& msg) {
    if (code == ExitCode::kUsage) throw UsageError(msg);
    if (code == ExitCode::kRuntime) throw RuntimeFailure(msg);
    throw InputError(msg);
}

JsonFields::JsonFields(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) throw InputError(where_ + ": expected a JSON object");
}

void JsonFields::wrong(const char* key, const char* type) const {
    throw InputError(where_ + ": \"" + key + "\" must be " + type);
}

bool JsonFields::has(const char* key) const {
    auto it = j_.find(key);
    return it != j_.end() && !it->is_null();
}

std::string JsonFields::string(const char* key) const {
    if (auto s = opt_string(key)) return *s;
    wrong(key, "a string");
}

std::optional<std::string> JsonFields::opt_string(const char* key) const {
    if (!has(key)) return std::nullopt;
    const nlohmann::json& v = j_.at(key);
    if (!v.is_string()) wrong(key, "a string");
    return v.get<std::string>();
}

int64_t JsonFields::integer(const char* key) const {
    if (!has(key)) wrong(key, "an integer");
    return integer_or(key, 0);
}

int64_t JsonFields::integer_or(const char* key, int64_t fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& v = j_.at(key);
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) wrong(key, "an integer of 64 bits");
    if (!v.is_number_integer()) wrong(key, "an integer");
    return v.get<int64_t>();
}

double JsonFields::number(const char* key) const {
    if (!has(key)) wrong(key, "a number");
    return number_or(key, 0.0);
}

double JsonFields::number_or(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& v = j_.at(key);
    if (!v.is_number()) wrong(key, "a number");
    return v.get<double>();
}

bool JsonFields::boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& v = j_.at(key);
    if (!v.is_boolean()) wrong(key, "true or false");
    return v.get<bool>();
}

std::string JsonFields::id(const char* key) const {
    if (!has(key)) wrong(key, "an integer or a string");
    const nlohmann::json& v = j_.at(key);
    if (v.is_string()) return v.get<std::string>();
    if (!v.is_number_integer()) wrong(key, "an integer or a string");
    return v.dump();
}

nlohmann::json json_read_file(const std::string& path, const std::string& what) {
    return json_parse(read_input_file(path, what), path);
}

}  // namespace cuset
