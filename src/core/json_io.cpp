// The depth-bounded JSON parse.
#include "cuset/core/json_io.h"

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

nlohmann::json json_read_file(const std::string& path, const std::string& what) {
    return json_parse(read_input_file(path, what), path);
}

}  // namespace cuset
