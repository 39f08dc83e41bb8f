// Training samples: JSONL records into conversations, conversations into tagged token rows.
#include "cuset/data/data.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"

namespace cuset {

namespace {

using json = nlohmann::json;

bool is_blank(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
    });
}

const char* json_type(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned:
        case json::value_t::number_float: return "a number";
        case json::value_t::string: return "a string";
        case json::value_t::array: return "an array";
        case json::value_t::object: return "an object";
        default: return "something else";
    }
}

// The problem-reporting half of a parse: sets `problem` and returns false.
bool fail(RecordProblem* problem, const char* code, std::string message) {
    if (problem) *problem = {code, std::move(message)};
    return false;
}

// A required non-empty string field `key` of `obj`; `where` names it in messages.
bool get_text(const json& obj, const char* key, const std::string& where, std::string* out,
              RecordProblem* problem) {
    auto it = obj.find(key);
    if (it == obj.end()) return fail(problem, "schema", "missing " + where);
    if (!it->is_string())
        return fail(problem, "schema", where + " must be a string, got " + json_type(*it));
    *out = it->get<std::string>();
    if (is_blank(*out)) return fail(problem, "empty_field", "empty " + where);
    return true;
}

// A message content given as a list of parts (what vision models' processors take) into `msg`:
// each part {"type": "text", "text": "..."}; other keys of a part are not read. A part of another
// type (an image) has nothing a text model can train on and is refused.
bool parse_text_parts(const json& arr, const std::string& where, Message* msg, RecordProblem* problem) {
    for (size_t j = 0; j < arr.size(); ++j) {
        const json& p = arr[j];
        const std::string at = strprintf("'%s[%zu]'", where.c_str(), j);
        if (!p.is_object()) return fail(problem, "schema", at + " must be an object, got " + json_type(p));
        auto type = p.find("type");
        if (type == p.end() || !type->is_string() || type->get<std::string>() != "text")
            return fail(problem, "schema",
                        at + " is not a text part (" +
                            (type != p.end() && type->is_string() ? "type '" + quote_bounded(type->get<std::string>()) + "'"
                                                                  : std::string("no \"type\": \"text\"")) +
                            "); only {\"type\": \"text\", \"text\": ...} parts are read");
        auto text = p.find("text");
        if (text == p.end()) return fail(problem, "schema", "missing " + at.substr(0, at.size() - 1) + ".text'");
        if (!text->is_string())
            return fail(problem, "schema", at.substr(0, at.size() - 1) + ".text' must be a string, got " + json_type(*text));
        const std::string& t = text->get_ref<const std::string&>();
        msg->content += t;
        msg->parts.push_back(t.size());
    }
    return true;
}

// The messages of `arr` into `out`, and for kPrompt the final assistant turn into `reference`.
bool parse_messages(const json& arr, RecordUse use, Conversation* out, std::optional<std::string>* reference,
                    RecordProblem* problem) {
    if (!arr.is_array())
        return fail(problem, "schema", std::string("'messages' must be an array, got ") + json_type(arr));
    if (arr.empty()) return fail(problem, "empty_field", "empty 'messages'");
    bool any_assistant = false;
    for (size_t i = 0; i < arr.size(); ++i) {
        const json& m = arr[i];
        std::string where = strprintf("messages[%zu]", i);
        if (!m.is_object())
            return fail(problem, "schema", where + " must be an object, got " + json_type(m));
        auto role = m.find("role");
        if (role == m.end()) return fail(problem, "schema", "missing '" + where + ".role'");
        if (!role->is_string())
            return fail(problem, "schema", "'" + where + ".role' must be a string, got " + json_type(*role));
        std::string r = role->get<std::string>();
        if (r != "system" && r != "user" && r != "assistant")
            return fail(problem, "schema", "'" + where + ".role' is '" + quote_bounded(r) +
                                               "' (expected system, user or assistant)");
        if (r == "system" && i != 0)
            return fail(problem, "schema", "'" + where + "' is a system message; only the first message may be one");
        Message msg{r, {}};
        auto content = m.find("content");
        if (content == m.end()) return fail(problem, "schema", "missing '" + where + ".content'");
        if (content->is_array()) {
            if (!parse_text_parts(*content, where + ".content", &msg, problem)) return false;
        } else if (content->is_string()) {
            msg.content = content->get<std::string>();
        } else {
            return fail(problem, "schema",
                        "'" + where + ".content' must be a string or a list of text parts, got " + json_type(*content));
        }
        if (is_blank(msg.content)) {
            if (r == "system") continue;  // an empty system message says nothing: drop it
            return fail(problem, "empty_field", "empty '" + where + ".content'");
        }
        any_assistant = any_assistant || r == "assistant";
        out->messages.push_back(std::move(msg));
    }
    if (use == RecordUse::kPrompt) {
        if (!out->messages.empty() && out->messages.back().role == "assistant") {
            *reference = std::move(out->messages.back().content);
            out->messages.pop_back();
        }
        if (out->messages.empty() || out->messages.back().role != "user")
            return fail(problem, "schema", "the messages do not end with a user turn (optionally followed by the "
                                           "assistant's reference answer)");
        return true;
    }
    if (!any_assistant) return fail(problem, "schema", "no assistant message (nothing to train on)");
    if (out->messages.back().role != "assistant")
        return fail(problem, "schema", "the last message is from '" + out->messages.back().role +
                                           "', not the assistant");
    return true;
}

// The record's "tools" (a list of JSON schemas) and "documents" (a list of objects) into `conv`,
// taken from `line` parsed again with its keys kept in their order (a template's tojson shows
// that order). Null or absent = none.
bool parse_template_lists(const json& rec, std::string_view line, Conversation* conv, RecordProblem* problem) {
    auto given = [&](const char* key) {
        auto it = rec.find(key);
        return it != rec.end() && !it->is_null();
    };
    const bool tools = given("tools"), documents = given("documents");
    if (!tools && !documents) return true;
    if (rec.contains("text"))
        return fail(problem, "schema", std::string("a 'text' record has no chat template to render '") +
                                           (tools ? "tools" : "documents") + "'; use the 'messages' form");
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(line.begin(), line.end());
    for (const bool is_tools : {true, false}) {
        const char* key = is_tools ? "tools" : "documents";
        if (!given(key)) continue;
        const json& v = *rec.find(key);
        if (!v.is_array())
            return fail(problem, "schema", strprintf("'%s' must be an array of %s, got %s", key,
                                                     is_tools ? "JSON schemas (objects)" : "objects", json_type(v)));
        for (size_t i = 0; i < v.size(); ++i)
            if (!v[i].is_object())
                return fail(problem, "schema", strprintf("'%s[%zu]' must be an object, got %s", key, i, json_type(v[i])));
        (is_tools ? conv->tools : conv->documents) = ordered.at(key);
    }
    return true;
}

}  // namespace

bool data_line_blank(std::string_view line) { return is_blank(line); }

bool data_parse_record(std::string_view line, const RecordOptions& opts, Record* out, RecordProblem* problem) {
    *out = Record{};
    Conversation* conv = &out->conversation;
    int64_t bad = utf8_first_invalid(line);
    if (bad >= 0) {
        if (!opts.replace_invalid_utf8)
            return fail(problem, "invalid_utf8",
                        strprintf("invalid UTF-8 at byte %lld (0x%02X)", (long long)bad + 1,
                                  static_cast<unsigned>(static_cast<unsigned char>(line[bad]))));
        // Invalid bytes are never JSON syntax characters, so replacing them before parsing
        // only touches string contents.
        out->fixed_line = utf8_sanitize(line, /*replace=*/true, "");
        line = out->fixed_line;
    }

    // A raw NUL byte is never JSON text (the parser would take it for the end of the input and
    // accept whatever came before it).
    if (size_t z = line.find('\0'); z != std::string_view::npos)
        return fail(problem, "invalid_json",
                    strprintf("invalid JSON: a NUL byte at column %lld (not JSON text; inside a string write \\u0000)",
                              (long long)z + 1));
    // Bounded nesting (core/json_io.h): the walks after the parse recurse.
    if (std::string deep = json_depth_problem(line); !deep.empty()) return fail(problem, "invalid_json", deep);
    json rec;
    try {
        rec = json::parse(line.begin(), line.end());
    } catch (const json::parse_error& e) {
        // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 7: ...".
        std::string what = e.what();
        size_t p = what.find("] ");
        if (p != std::string::npos) what = what.substr(p + 2);
        const std::string one_line = "parse error at line 1, column ";  // a record is one line
        if (what.rfind(one_line, 0) == 0) what = "parse error at column " + what.substr(one_line.size());
        // "...; last read: '<the token so far>'" can be the whole line.
        const std::string last_read = "; last read: '";
        if (size_t at = what.find(last_read); at != std::string::npos && what.back() == '\'') {
            size_t from = at + last_read.size();
            what = what.substr(0, from) + quote_bounded(std::string_view(what).substr(from, what.size() - 1 - from)) + "'";
        }
        return fail(problem, "invalid_json", "invalid JSON: " + quote_bounded(what, 2 * kQuoteMaxBytes));
    }
    if (!rec.is_object())
        return fail(problem, "schema", std::string("expected a JSON object, got ") + json_type(rec));

    if (auto id = rec.find("id"); id != rec.end() && !id->is_null()) {
        if (id->is_string()) conv->id = id->get<std::string>();
        else if (id->is_number_integer()) conv->id = std::to_string(id->get<int64_t>());
        else return fail(problem, "schema", std::string("'id' must be a string or an integer, got ") + json_type(*id));
    }

    bool has_pair = rec.contains("prompt") || rec.contains("response");
    bool has_messages = rec.contains("messages");
    bool has_text = rec.contains("text");
    if (int(has_pair) + int(has_messages) + int(has_text) > 1)
        return fail(problem, "schema",
                    "mixes the 'prompt'/'response', 'messages' and 'text' forms; use one");
    if (!parse_template_lists(rec, line, conv, problem)) return false;
    if (has_messages) return parse_messages(rec["messages"], opts.use, conv, &out->reference, problem);
    if (has_text) {
        Message m{kTextRole, {}};
        if (!get_text(rec, "text", "'text'", &m.content, problem)) return false;
        conv->messages.push_back(std::move(m));
        return true;
    }
    if (!has_pair)
        return fail(problem, "schema", "no 'prompt'/'response', 'messages' or 'text' field");

    Message user{"user", {}}, assistant{"assistant", {}};
    if (!get_text(rec, "prompt", "'prompt'", &user.content, problem)) {
        // A prompts file names its one required text plainly.
        if (opts.use == RecordUse::kPrompt && problem && problem->code == "empty_field") problem->message = "empty prompt";
        return false;
    }
    const bool want_response = opts.use == RecordUse::kTraining || rec.contains("response");
    if (want_response && !get_text(rec, "response", "'response'", &assistant.content, problem)) return false;
    if (auto sys = rec.find("system"); sys != rec.end() && !sys->is_null()) {
        if (!sys->is_string())
            return fail(problem, "schema", std::string("'system' must be a string, got ") + json_type(*sys));
        std::string s = sys->get<std::string>();
        if (!is_blank(s)) conv->messages.push_back({"system", std::move(s)});
    }
    conv->messages.push_back(std::move(user));
    if (opts.use == RecordUse::kPrompt) {
        if (want_response) out->reference = std::move(assistant.content);
    } else {
        conv->messages.push_back(std::move(assistant));
    }
    return true;
}

std::vector<Conversation> data_load_jsonl(const std::string& path, const DataLoadOptions& opts,
                                          LoadReport* report) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError("cannot open data file " + path);
    LineReader in(path, "data file");
    const std::string name = std::filesystem::path(path).filename().string();
    LoadReport local;
    LoadReport& rep = report ? *report : local;
    rep = LoadReport{};

    std::vector<Conversation> out;
    std::string line;
    int64_t n_replaced = 0;
    while (in.next(line)) {
        ++rep.lines;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (is_blank(line)) continue;
        Record rec;
        RecordProblem problem;
        if (!data_parse_record(line, {RecordUse::kTraining, opts.replace_invalid_utf8}, &rec, &problem)) {
            std::string msg = strprintf("%s:%lld: %s", path.c_str(), (long long)rep.lines,
                                        problem.message.c_str());
            if (!opts.skip_invalid) throw InputError(msg);
            ++rep.skipped;
            rep.problems.push_back(msg);
            continue;
        }
        n_replaced += !rec.fixed_line.empty();
        Conversation& conv = rec.conversation;
        if (conv.id.empty()) conv.id = strprintf("%s:%lld", name.c_str(), (long long)rep.lines);
        out.push_back(std::move(conv));
    }
    rep.loaded = static_cast<int64_t>(out.size());
    if (rep.skipped)
        log_warn("%s: skipped %lld malformed line(s) of %lld; first: %s", path.c_str(),
                 (long long)rep.skipped, (long long)rep.lines, rep.problems.front().c_str());
    if (n_replaced)
        log_warn("%s: replaced invalid UTF-8 in %lld sample(s)", path.c_str(), (long long)n_replaced);
    if (out.empty())
        throw InputError(strprintf("%s: no valid sample in %lld line(s)", path.c_str(), (long long)rep.lines));
    return out;
}

TokenizedSample data_tokenize(const Conversation& conv, const ChatFormatter& formatter,
                              const TaggerOptions& tagger) {
    FormattedSample f = formatter.format(conv);
    const size_t n = f.ids.size();
    TokenizedSample s;
    s.id = conv.id;
    s.ids = f.ids;
    s.roles.resize(n);
    for (size_t t = 0; t < n; ++t) s.roles[t] = static_cast<uint8_t>(f.roles[t]);
    s.trainable = f.trainable;
    s.tag_bits.assign(n, 0);

    // Tag each response message once, then map its tokens' byte spans onto the tags.
    std::map<int32_t, std::vector<size_t>> tokens_of;  // message index -> its response tokens
    for (size_t t = 0; t < n; ++t)
        if (f.roles[t] == Role::kResponse && f.message[t] >= 0 && f.spans[t].first >= 0)
            tokens_of[f.message[t]].push_back(t);
    for (const auto& [m, tokens] : tokens_of) {
        const std::string& text = conv.messages.at(static_cast<size_t>(m)).content;
        std::vector<TagSpan> spans = tag_text(text, tagger);
        if (spans.empty()) continue;
        std::vector<std::pair<int32_t, int32_t>> token_spans;
        token_spans.reserve(tokens.size());
        for (size_t t : tokens) token_spans.emplace_back(f.spans[t].first, f.spans[t].second);
        std::vector<uint32_t> bits = tag_tokens(spans, token_spans);
        for (size_t k = 0; k < tokens.size(); ++k) s.tag_bits[tokens[k]] = bits[k];
    }
    return s;
}

}  // namespace cuset
