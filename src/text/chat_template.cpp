// The `template` chat format: a model's own Jinja chat template (jinja.h) rendered as
// transformers' apply_chat_template renders it, and its training mask from the template's
// {% generation %} markers or from the spans of the assistant messages. The hand-written
// formats and the token bookkeeping shared with them are in chat_format.cpp.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cuset/core/json_io.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/text/chat_format.h"
#include "cuset/text/jinja.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// A "chat_template" value of a JSON file `file`: a string, or the entry named "default" of a list
// of {"name", "template"}; "" for null. Anything else is refused: a folder whose template is a
// number or a list without a default has a broken template, not none.
std::string template_of_json(const json& ct, const std::string& file) {
    if (ct.is_null()) return "";
    if (ct.is_string()) return ct.get<std::string>();
    if (ct.is_array()) {
        for (const json& x : ct) {
            if (!x.is_object() || !x.contains("name") || !x["name"].is_string() || !x.contains("template") ||
                !x["template"].is_string())
                throw InputError(file + ": \"chat_template\" is a list whose entries are not all {\"name\": string, "
                                        "\"template\": string}");
            if (x["name"].get<std::string>() == "default") return x["template"].get<std::string>();
        }
        throw InputError(file + ": \"chat_template\" is a list of named templates without one named \"default\"");
    }
    throw InputError(file + ": \"chat_template\" is " + std::string(ct.type_name()) +
                     ", not a string or a list of named templates");
}

json read_json_file(const fs::path& p) {
    try {
        return json_parse(read_text(p), p.string());
    } catch (const json::exception& e) {
        throw InputError(p.string() + ": invalid JSON: " + quote_bounded(e.what()));
    }
}

// A named special token of tokenizer_config.json / special_tokens_map.json: a string or {"content": ...}.
std::string special_token_text(const json& config, const char* key) {
    if (!config.is_object() || !config.contains(key)) return "";
    const json& b = config[key];
    if (b.is_string()) return b.get<std::string>();
    if (b.is_object() && b.contains("content") && b["content"].is_string()) return b["content"].get<std::string>();
    return "";
}

}  // namespace

std::string chat_template_read(const std::string& path) {
    if (!fs::is_regular_file(path))
        throw UsageError("data.chat_template: '" + path + "' is not a file (a .jinja template or a JSON file with chat_template)");
    if (fs::path(path).extension() == ".json") {
        json j = read_json_file(path);
        std::string t = j.is_object() && j.contains("chat_template") ? template_of_json(j["chat_template"], path) : "";
        if (t.empty()) throw InputError(path + ": no \"chat_template\" string in this JSON file (data.chat_template)");
        return t;
    }
    return read_text(path);
}

std::string chat_template_find(const std::string& dir, std::string* source) {
    const fs::path d(dir);
    if (fs::exists(d / "chat_template.jinja")) {
        *source = (d / "chat_template.jinja").string();
        return read_text(d / "chat_template.jinja");
    }
    for (const char* file : {"chat_template.json", "tokenizer_config.json"}) {
        if (!fs::exists(d / file)) continue;
        json j = read_json_file(d / file);
        if (!j.is_object() || !j.contains("chat_template")) continue;
        std::string t = template_of_json(j["chat_template"], (d / file).string());
        if (t.empty()) continue;
        *source = (d / file).string();
        return t;
    }
    return "";
}

// ---------------------------------------------------------------- the model's own template

namespace {

// Message `i`'s content as the template sees it: a string, or when given as parts (or with
// `as_parts`, as one part) the list of {"type": "text", "text": ...}; every text tagged with the
// message index at its offset in the content.
jinja::Value content_value(const Message& m, int32_t i, bool as_parts) {
    if (m.parts.empty() && !as_parts) return jinja::Value::tagged(m.content, i);
    const std::vector<size_t> lengths = m.parts.empty() ? std::vector<size_t>{m.content.size()} : m.parts;
    jinja::List parts;
    size_t at = 0;
    for (size_t n : lengths) {
        jinja::Value part = jinja::Value::dict();
        part.set("type", jinja::Value::string("text"));
        part.set("text", jinja::Value::tagged(m.content.substr(at, n), i, at));
        parts.push_back(part);
        at += n;
    }
    return jinja::Value::list(std::move(parts));
}

// The context apply_chat_template renders with: messages (each content tagged with its message
// index; `as_parts`: string contents as one text part), the conversation's tools and documents
// (None when it has none), add_generation_prompt, then the special tokens and kwargs.
jinja::Value template_context(const Conversation& c, size_t n_messages, bool add_generation_prompt,
                              const json& vars, bool thinking, bool as_parts) {
    jinja::Value ctx = jinja::Value::dict();
    jinja::List msgs;
    for (size_t i = 0; i < n_messages; ++i) {
        jinja::Value m = jinja::Value::dict();
        m.set("role", jinja::Value::string(c.messages[i].role));
        m.set("content", content_value(c.messages[i], static_cast<int32_t>(i), as_parts));
        msgs.push_back(m);
    }
    ctx.set("messages", jinja::Value::list(std::move(msgs)));
    ctx.set("tools", c.tools.is_null() ? jinja::Value::none() : jinja::value_from_json(c.tools));
    ctx.set("documents", c.documents.is_null() ? jinja::Value::none() : jinja::value_from_json(c.documents));
    ctx.set("add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
    for (auto it = vars.begin(); it != vars.end(); ++it) ctx.set(it.key(), jinja::value_from_json(it.value()));
    if (thinking) ctx.set("enable_thinking", jinja::Value::boolean(true));
    return ctx;
}

}  // namespace

void ChatFormatter::template_init(const std::string& text, const std::string& source, const std::string& tokenizer_dir) {
    tmpl_ = std::make_shared<const jinja::Template>(text, source);  // InputError: file:line: construct
    template_source_ = source;
    // transformers' special_tokens_map: the named special tokens that are set.
    json config = json::object(), stmap = json::object();
    const fs::path d(tokenizer_dir);
    if (fs::exists(d / "tokenizer_config.json")) config = read_json_file(d / "tokenizer_config.json");
    if (fs::exists(d / "special_tokens_map.json")) stmap = read_json_file(d / "special_tokens_map.json");
    template_vars_ = json::object();
    for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
        std::string t = special_token_text(config, key);
        if (t.empty() && !(config.is_object() && config.contains(key))) t = special_token_text(stmap, key);
        if (!t.empty()) template_vars_[key] = t;
    }
    if (!opts_.template_kwargs.is_object())
        throw UsageError("data.chat_template_kwargs must be a mapping of names to values");
    for (auto it = opts_.template_kwargs.begin(); it != opts_.template_kwargs.end(); ++it)
        template_vars_[it.key()] = json(it.value());
    std::vector<std::pair<std::string, int32_t>> specials;
    for (int64_t id = 0; id < tok_.vocab_size(); ++id)
        if (tok_.is_special(static_cast<int32_t>(id))) {
            std::string t = tok_.id_to_token(static_cast<int32_t>(id));
            if (!t.empty()) specials.push_back({t, static_cast<int32_t>(id)});
        }
    std::stable_sort(specials.begin(), specials.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (auto& [t, id] : specials) {
        special_texts_.push_back(t);
        special_ids_.push_back(id);
    }
    // A template that writes an assistant's content only when it is a list of parts (vision
    // models' templates) gets every string content as one text part, as its processor is given it.
    auto writes_answer = [&](bool as_parts) {
        try {
            const Conversation probe{"probe", {{"user", "x"}, {"assistant", "y"}}};
            const jinja::Output o = tmpl_->render(template_context(probe, 2, false, template_vars_, false, as_parts));
            return std::any_of(o.spans.begin(), o.spans.end(), [](const jinja::Span& sp) { return sp.source == 1; });
        } catch (const StoppedBySignal&) {
            throw;
        } catch (const Error&) {
            return false;
        }
    };
    string_as_parts_ = !writes_answer(false) && writes_answer(true);
    if (string_as_parts_)
        log_info("chat template %s writes an assistant's content only when it is a list of parts: string contents are "
                 "rendered as [{\"type\": \"text\", \"text\": ...}] for training and generation",
                 source.c_str());
    // The end of an assistant turn: the trainable template text after a probe answer.
    try {
        Rendered r = render_template(Conversation{"probe", {{"user", "x"}, {"assistant", "y"}}});
        bool after = false;
        for (const auto& seg : r.segments) {
            if (seg.message == 1) after = true;
            else if (after && seg.message < 0 && seg.trainable)
                end_of_turn_ += seg.token_id >= 0 ? tok_.id_to_token(seg.token_id) : r.text.substr(seg.begin, seg.end - seg.begin);
            else if (after) break;
        }
        for (const std::string& sp : special_texts_)  // the end-of-turn token itself, without newlines before it
            if (end_of_turn_.size() >= sp.size() && end_of_turn_.compare(end_of_turn_.size() - sp.size(), sp.size(), sp) == 0) {
                end_of_turn_ = sp;
                break;
            }
    } catch (const StoppedBySignal&) {
        throw;
    } catch (const Error&) {
        end_of_turn_.clear();
    }
}

std::string ChatFormatter::render_template_text(const Conversation& c, bool add_generation_prompt, bool thinking,
                                                bool as_given) const {
    try {
        return tmpl_
            ->render(template_context(c, c.messages.size(), add_generation_prompt, template_vars_, thinking,
                                      string_as_parts_ && !as_given))
            .text;
    } catch (const InputError& e) {
        throw InputError("sample " + quote_bounded(c.id) + ": chat template " + e.what());
    }
}

// The end token of a final answer after which the template writes no special token: the first
// special token the template writes after it when the conversation goes on with a user message
// (GLM-4's and ChatGLM3's <|user|>, which their generation configs stop on), else the tokenizer's
// EOS; -1 when there is neither.
int32_t ChatFormatter::next_turn_token(const Conversation& c) const {
    Conversation more = c;
    more.messages.push_back({"user", "x"});
    const auto answer = static_cast<int32_t>(c.messages.size() - 1), probe = answer + 1;
    try {
        const jinja::Output o =
            tmpl_->render(template_context(more, more.messages.size(), false, template_vars_, false, string_as_parts_));
        size_t last = std::string::npos, next = o.text.size();
        for (const jinja::Span& sp : o.spans) {
            if (sp.source == answer) last = last == std::string::npos ? sp.end : std::max(last, sp.end);
            if (sp.source == probe) next = std::min(next, sp.begin);
        }
        if (last != std::string::npos && last <= next) {
            const std::string_view window = std::string_view(o.text).substr(last, next - last);
            size_t best = std::string::npos;
            int32_t id = -1;
            for (size_t k = 0; k < special_texts_.size(); ++k) {
                const size_t p = window.find(special_texts_[k]);
                if (p != std::string_view::npos && p < best) {
                    best = p;
                    id = special_ids_[k];
                }
            }
            if (id >= 0) return id;
        }
    } catch (const StoppedBySignal&) {
        throw;
    } catch (const Error&) {
        // A template that refuses the longer conversation: the EOS.
    }
    return tok_.eos_id();
}

std::string ChatFormatter::mask_source() const {
    if (name_ != "template") return "format";
    return tmpl_->has_generation() ? "markers" : "spans";
}

// A rendering's segments: the text cut at every span and trainable-range boundary, each segment
// with the message (and content offset) its bytes come from and whether it is trained on; the
// end token, when one is appended, a segment of its own.
static ChatFormatter::Rendered segments_of(const jinja::Output& o, const std::vector<std::pair<size_t, size_t>>& train,
                                           size_t messages, int32_t end_token) {
    std::vector<size_t> cuts{0, o.text.size()};
    for (const jinja::Span& sp : o.spans) {
        cuts.push_back(sp.begin);
        cuts.push_back(sp.end);
    }
    for (auto [b, e] : train) {
        cuts.push_back(b);
        cuts.push_back(e);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    ChatFormatter::Rendered r;
    r.text = o.text;
    r.trainable_by_segment = true;
    size_t si = 0, ti = 0;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
        const size_t b = cuts[k], e = cuts[k + 1];
        while (si < o.spans.size() && o.spans[si].end <= b) ++si;
        while (ti < train.size() && train[ti].second <= b) ++ti;
        ChatFormatter::Rendered::Segment seg;
        seg.begin = b;
        seg.end = e;
        if (si < o.spans.size() && o.spans[si].begin <= b && o.spans[si].source >= 0 &&
            static_cast<size_t>(o.spans[si].source) < messages) {
            seg.message = o.spans[si].source;
            seg.content_begin = o.spans[si].offset + (b - o.spans[si].begin);
        }
        for (size_t q = ti; q < train.size() && train[q].first < e; ++q)
            if (train[q].first <= b && train[q].second >= e) seg.trainable = true;
        r.segments.push_back(seg);
    }
    if (end_token >= 0) {
        ChatFormatter::Rendered::Segment seg;
        seg.begin = seg.end = o.text.size();
        seg.token_id = end_token;
        seg.trainable = true;
        r.segments.push_back(seg);
    }
    return r;
}

ChatFormatter::Rendered ChatFormatter::render_template(const Conversation& c) const {
    const auto& ms = c.messages;
    jinja::Output o;
    try {
        o = tmpl_->render(template_context(c, ms.size(), false, template_vars_, false, string_as_parts_));
    } catch (const InputError& e) {
        throw InputError("sample " + quote_bounded(c.id) + ": chat template " + e.what());
    }
    const std::string& text = o.text;
    const bool markers = tmpl_->has_generation();

    // Where each message's content landed.
    std::vector<std::vector<const jinja::Span*>> by_msg(ms.size());
    for (const jinja::Span& sp : o.spans)
        if (sp.source >= 0 && static_cast<size_t>(sp.source) < ms.size()) by_msg[static_cast<size_t>(sp.source)].push_back(&sp);

    std::vector<std::pair<size_t, size_t>> train;  // trainable byte ranges
    int32_t end_token = -1;                        // appended after the text: the final answer's end (next_turn_token)
    if (markers) {
        for (auto [b, e] : o.generation)
            if (e > b) train.push_back({b, e});
    }
    for (size_t i = 0; i < ms.size(); ++i) {
        if (ms[i].role != "assistant") continue;
        if (by_msg[i].empty()) {
            if (ms[i].content.empty()) continue;
            throw InputError(strprintf("sample %s: the chat template (%s) does not render the content of assistant message %zu "
                                       "as it is, so its tokens cannot be located for the training mask; use a hand-written "
                                       "data.chat_format",
                                       quote_bounded(c.id).c_str(), template_source_.c_str(), i));
        }
        const size_t first = by_msg[i].front()->begin, last = by_msg[i].back()->end;
        if (markers) {
            bool inside = false;
            for (const jinja::Span* sp : by_msg[i])
                for (auto [b, e] : train) inside = inside || (sp->begin < e && b < sp->end);
            if (!inside)
                throw InputError(strprintf("sample %s: the {%% generation %%} markers of the chat template (%s) do not cover "
                                           "assistant message %zu",
                                           quote_bounded(c.id).c_str(), template_source_.c_str(), i));
            continue;
        }
        // From the end of the generation prompt, when the rendering starts with it.
        size_t start = first;
        if (i > 0) {
            try {
                Conversation prefix{c.id, std::vector<Message>(ms.begin(), ms.begin() + static_cast<long>(i)), c.tools,
                                    c.documents};
                std::string p =
                    tmpl_->render(template_context(prefix, i, true, template_vars_, false, string_as_parts_)).text;
                if (p.size() <= first && text.compare(0, p.size(), p) == 0) start = p.size();
            } catch (const StoppedBySignal&) {
                throw;
            } catch (const Error&) {
                // A template that refuses the prefix (e.g. one that checks the turn order): content start.
            }
        }
        // Through the first special token after the content, before any later content.
        size_t window_end = text.size();
        for (const jinja::Span& sp : o.spans)
            if (sp.begin >= last) window_end = std::min(window_end, sp.begin);
        size_t best = std::string::npos, best_len = 0;
        const std::string_view window = std::string_view(text).substr(last, window_end - last);
        for (const std::string& sp : special_texts_) {
            size_t p = window.find(sp);
            if (p != std::string_view::npos && last + p < best) {
                best = last + p;
                best_len = sp.size();
            }
        }
        if (best == std::string::npos) {
            if (i + 1 < ms.size()) {  // an earlier answer: its content (the final one teaches the stop)
                train.push_back({start, last});
                continue;
            }
            end_token = next_turn_token(c);
            if (end_token < 0)
                throw InputError(strprintf("sample %s: the chat template (%s) puts no special token after assistant message "
                                           "%zu, writes none after it when the conversation goes on, and the tokenizer has no "
                                           "eos_token, so the end of the training mask is unknown",
                                           quote_bounded(c.id).c_str(), template_source_.c_str(), i));
            train.push_back({start, text.size()});
            continue;
        }
        train.push_back({start, best + best_len});
    }
    std::sort(train.begin(), train.end());

    return segments_of(o, train, ms.size(), end_token);
}

}  // namespace cuset
