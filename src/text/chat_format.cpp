// Chat formats (ChatML/Qwen2.5, Qwen3, DeepSeek-Coder, Seed-Coder, plain, custom, raw text), the
// per-token role/trainable/span bookkeeping and UTF-8 repair for data files. The templates
// reproduce what transformers' apply_chat_template renders with each family's chat_template;
// tokenization is the whole rendered text at once.
#include "cuset/text/chat_format.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "unicode.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kQwenDefaultSystem = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
const char* const kDeepSeekDefaultSystem =
    "You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, and "
    "you only answer questions related to computer science. For politically sensitive questions, security and "
    "privacy issues, and other non-computer science questions, you will refuse to answer\n";
const char* const kSeedDefaultSystem =
    "You are an AI programming assistant, utilizing the Seed-Coder model, developed by ByteDance Seed, and you "
    "only answer questions related to computer science. For politically sensitive questions, security and "
    "privacy issues, and other non-computer science questions, you will refuse to answer.\n\n";


// Builds the rendered text segment by segment.
struct Builder {
    ChatFormatter::Rendered r;
    void tmpl(std::string_view s, bool trainable = false) {
        if (s.empty()) return;
        ChatFormatter::Rendered::Segment seg;
        seg.begin = r.text.size();
        r.text.append(s.data(), s.size());
        seg.end = r.text.size();
        seg.trainable = trainable;
        r.segments.push_back(seg);
    }
    // content[from, from + len) of message `msg`.
    void content(int32_t msg, std::string_view content, size_t from, size_t len) {
        if (len == 0) return;
        ChatFormatter::Rendered::Segment seg;
        seg.begin = r.text.size();
        r.text.append(content.data() + from, len);
        seg.end = r.text.size();
        seg.message = msg;
        seg.content_begin = from;
        r.segments.push_back(seg);
    }
    void content(int32_t msg, std::string_view c) { content(msg, c, 0, c.size()); }
    void id(int32_t token_id, bool trainable) {
        ChatFormatter::Rendered::Segment seg;
        seg.begin = seg.end = r.text.size();
        seg.token_id = token_id;
        seg.trainable = trainable;
        r.segments.push_back(seg);
    }
};

// Python's str.strip/lstrip/rstrip of one character, as index ranges.
void lstrip_range(std::string_view s, char c, size_t* b, size_t e) { while (*b < e && s[*b] == c) ++*b; }
void rstrip_range(std::string_view s, char c, size_t b, size_t* e) { while (*e > b && s[*e - 1] == c) --*e; }

// Python's str.strip() (Jinja's trim) of valid UTF-8, as the byte range it keeps.
std::pair<size_t, size_t> py_strip_range(std::string_view s) {
    size_t b = std::string_view::npos, e = 0;
    for (size_t i = 0; i < s.size();) {
        int n = 1;
        if (!detail::py_is_space(detail::utf8_decode(s.data(), i, &n))) {
            if (b == std::string_view::npos) b = i;
            e = i + static_cast<size_t>(n);
        }
        i += static_cast<size_t>(n);
    }
    return b == std::string_view::npos ? std::make_pair(size_t{0}, size_t{0}) : std::make_pair(b, e);
}

// `{content}` placeholder split of a custom template part.
std::pair<std::string, std::string> split_placeholder(const std::string& t, bool* has) {
    size_t p = t.find("{content}");
    *has = p != std::string::npos;
    if (!*has) return {t, ""};
    return {t.substr(0, p), t.substr(p + 9)};
}

// What a hand-written format renders from: the conversation, data.system_prompt, the
// tokenizer's BOS and EOS texts and the custom format's turns.
struct RenderInput {
    const std::vector<Message>& ms;
    const std::string& sp;
    bool first_is_system;
    const std::string& bos_text;
    const std::string& eos_text;
    const Tokenizer& tok;
    const CustomTemplate& templ;
};

// ChatML's system block: the conversation's system message, else data.system_prompt, else
// `fallback` ("" = no block).
void chatml_system(const RenderInput& in, Builder& b, const std::string& fallback) {
    if (in.first_is_system) {
        b.tmpl("<|im_start|>system\n");
        b.content(0, in.ms[0].content);
        b.tmpl("<|im_end|>\n");
        return;
    }
    const std::string& text = in.sp.empty() ? fallback : in.sp;
    if (!text.empty()) b.tmpl("<|im_start|>system\n" + text + "<|im_end|>\n");
}

// Qwen2.5's ChatML (no tools).
void render_chatml(const RenderInput& in, Builder& b) {
    const std::vector<Message>& ms = in.ms;
    const bool first_is_system = in.first_is_system;
    chatml_system(in, b, kQwenDefaultSystem);  // a system block always, Qwen's when none is given
    for (size_t i = 0; i < ms.size(); ++i) {
        if (i == 0 && first_is_system) continue;
        const auto id = static_cast<int32_t>(i);
        b.tmpl("<|im_start|>" + ms[i].role + "\n");
        b.content(id, ms[i].content);
        if (ms[i].role == "assistant") {
            b.tmpl("<|im_end|>", true);
            b.tmpl("\n");
        } else {
            b.tmpl("<|im_end|>\n");
        }
    }
}

// Qwen3's ChatML with its think block, thinking off unless the answer has reasoning.
void render_qwen3(const RenderInput& in, Builder& b) {
    const std::vector<Message>& ms = in.ms;
    const bool first_is_system = in.first_is_system;
    chatml_system(in, b, "");  // no default system block
    // The last user query; assistant turns after it keep (or get an empty) think block.
    size_t last_query = ms.size() - 1;
    for (size_t k = ms.size(); k-- > 0;) {
        const std::string& t = ms[k].content;
        bool tool_resp = t.rfind("<tool_response>", 0) == 0 && t.size() >= 16 &&
                         t.compare(t.size() - 16, 16, "</tool_response>") == 0;
        if (ms[k].role == "user" && !tool_resp) {
            last_query = k;
            break;
        }
    }
    for (size_t i = 0; i < ms.size(); ++i) {
        if (i == 0 && first_is_system) continue;
        const auto id = static_cast<int32_t>(i);
        const std::string& t = ms[i].content;
        if (ms[i].role != "assistant") {
            b.tmpl("<|im_start|>" + ms[i].role + "\n");
            b.content(id, t);
            b.tmpl("<|im_end|>\n");
            continue;
        }
        // content.split('</think>'): reasoning before the first, answer after the last.
        size_t rb = 0, re = 0, ab = 0, ae = t.size();
        size_t close = t.find("</think>");
        if (close != std::string::npos) {
            re = close;
            rstrip_range(t, '\n', 0, &re);
            size_t open = std::string_view(t).substr(0, re).rfind("<think>");
            rb = open == std::string::npos ? 0 : open + 7;
            lstrip_range(t, '\n', &rb, re);
            ab = t.rfind("</think>") + 8;
            lstrip_range(t, '\n', &ab, ae);
        }
        const bool has_reasoning = re > rb;
        const bool think = i > last_query && (i + 1 == ms.size() || has_reasoning);
        b.tmpl("<|im_start|>assistant\n");
        if (think) {
            // reasoning.strip('\n'), then the answer with its leading newlines removed.
            size_t sb = rb, se = re;
            lstrip_range(t, '\n', &sb, se);
            rstrip_range(t, '\n', sb, &se);
            lstrip_range(t, '\n', &ab, ae);
            if (se > sb) {
                b.tmpl("<think>\n", true);
                b.content(id, t, sb, se - sb);
                b.tmpl("\n</think>\n\n", true);
            } else {
                b.tmpl("<think>\n\n</think>\n\n");  // Qwen3's empty think block: prompt side
            }
        }
        b.content(id, t, ab, ae - ab);
        b.tmpl("<|im_end|>", true);
        b.tmpl("\n");
    }
}

// DeepSeek-Coder's instruction format.
void render_deepseek_coder(const RenderInput& in, Builder& b) {
    const std::vector<Message>& ms = in.ms;
    const std::string& sp = in.sp;
    const std::string& bos_text = in.bos_text;
    bool has_system = false;
    for (const Message& m : ms) has_system = has_system || m.role == "system";
    b.tmpl(bos_text);
    if (!has_system) b.tmpl(sp.empty() ? std::string(kDeepSeekDefaultSystem) : sp);
    for (size_t i = 0; i < ms.size(); ++i) {
        const auto id = static_cast<int32_t>(i);
        if (ms[i].role == "system") {
            b.content(id, ms[i].content);
        } else if (ms[i].role == "user") {
            b.tmpl("### Instruction:\n");
            b.content(id, ms[i].content);
            b.tmpl("\n");
        } else {
            b.tmpl("### Response:\n");
            b.content(id, ms[i].content);
            b.tmpl("\n<|EOT|>", true);
            b.tmpl("\n");
        }
    }
}

// Seed-Coder-8B-Instruct's format: its default system turn unless the first message is the
// system's (data.system_prompt in its place, as a system message), then bos + role + "\n" +
// content|trim + eos for every message.
void render_seed_coder(const RenderInput& in, Builder& b) {
    const std::vector<Message>& ms = in.ms;
    const std::string& sp = in.sp;
    const bool first_is_system = in.first_is_system;
    const std::string& bos_text = in.bos_text;
    const std::string& eos_text = in.eos_text;
    if (!first_is_system) {
        auto [pb, pe] = py_strip_range(sp);
        b.tmpl(bos_text + "system\n" + (sp.empty() ? std::string(kSeedDefaultSystem) : sp.substr(pb, pe - pb)) +
               eos_text);
    }
    for (size_t i = 0; i < ms.size(); ++i) {
        auto [cb, ce] = py_strip_range(ms[i].content);
        b.tmpl(bos_text + ms[i].role + "\n");
        b.content(static_cast<int32_t>(i), ms[i].content, cb, ce - cb);
        b.tmpl(eos_text, ms[i].role == "assistant");
    }
}

// The contents one after another, each prompt-side one ended by a newline, each answer by EOS.
void render_plain(const RenderInput& in, Builder& b) {
    const std::vector<Message>& ms = in.ms;
    const std::string& sp = in.sp;
    const bool first_is_system = in.first_is_system;
    if (!first_is_system && !sp.empty()) b.tmpl(sp + "\n");
    for (size_t i = 0; i < ms.size(); ++i) {
        const auto id = static_cast<int32_t>(i);
        b.content(id, ms[i].content);
        if (ms[i].role == "assistant") {
            if (in.tok.eos_id() >= 0) b.id(in.tok.eos_id(), true);
        } else {
            b.tmpl("\n");
        }
    }
}

// The user's own turns (data.template.*).
void render_custom(const RenderInput& in, Builder& b) {
    const std::vector<Message>& ms = in.ms;
    const std::string& sp = in.sp;
    const bool first_is_system = in.first_is_system;
    const CustomTemplate& t = in.templ;
    b.tmpl(t.prefix);
    bool has;
    auto part = [&](const std::string& tpl, int32_t id, const std::string& content, bool assistant) {
        auto [before, after] = split_placeholder(tpl, &has);
        b.tmpl(before);
        if (has) b.content(id, content);
        if (!assistant) {
            b.tmpl(after);
            return;
        }
        b.tmpl(after, true);
        if (!t.end_of_turn.empty()) b.tmpl(t.end_of_turn, true);
        else if (in.tok.eos_id() >= 0) b.id(in.tok.eos_id(), true);
    };
    if (!first_is_system && !sp.empty()) {
        auto [before, after] = split_placeholder(t.system, &has);
        b.tmpl(before + (has ? sp : "") + after);
    }
    for (size_t i = 0; i < ms.size(); ++i) {
        const auto id = static_cast<int32_t>(i);
        const std::string& role = ms[i].role;
        part(role == "system" ? t.system : role == "user" ? t.user : t.assistant, id, ms[i].content,
             role == "assistant");
    }
}

// What detection reads: a tokenizer folder's chat template and its configured BOS text.
struct DetectInput {
    const std::string& tmpl;
    const std::string& bos;
    bool has(const char* s) const { return tmpl.find(s) != std::string::npos; }
};

bool qwen3_markers(const DetectInput& d) {
    return d.has("<think>") || d.has("enable_thinking") || d.has("reasoning_content");
}
bool detect_chatml(const DetectInput& d) { return d.has("<|im_start|>") && !qwen3_markers(d); }
bool detect_qwen3(const DetectInput& d) { return d.has("<|im_start|>") && qwen3_markers(d); }
bool detect_deepseek_coder(const DetectInput& d) { return d.has("### Instruction:") && d.has("### Response:"); }
bool detect_seed_coder(const DetectInput& d) {
    const char* bos = "<[begin\xE2\x96\x81of\xE2\x96\x81sentence]>";
    return !d.has("<|im_start|>") && !detect_deepseek_coder(d) && (d.has(bos) || (d.bos == bos && d.has("bos_token")));
}

}  // namespace

// The chat formats, one row each: everything that differs between them. Their names, the
// configuration's choices (data.chat_format), the error texts and docs/data.md's table of
// hand-written formats derive from this table (a test holds them to it).
struct ChatFormatRow {
    const char* name;
    bool writes_bos;            // the rendering writes the BOS text itself (no tokenizer BOS added)
    bool needs_bos, needs_eos;  // the tokenizer must name them (the rendering writes their texts)
    bool think_block;           // generation with thinking on stops before the "<think>" it opens
    const char* end_of_turn;    // the text that ends an answer; nullptr: the EOS token's text
    bool (*detect)(const DetectInput&);                // nullptr: never recognised from a template
    void (*render)(const RenderInput&, Builder&);      // nullptr: the model's own template
};

namespace {

// clang-format off
const ChatFormatRow kFormatRows[] = {
//   name              writes_bos needs_bos needs_eos think  end of turn     detect                 render
    {"template",       true,      false,    false,    false, nullptr,        nullptr,               nullptr},
    {"chatml",         true,      false,    false,    false, "<|im_end|>",   detect_chatml,         render_chatml},
    {"qwen3",          true,      false,    false,    true,  "<|im_end|>",   detect_qwen3,          render_qwen3},
    {"deepseek-coder", true,      true,     false,    false, "<|EOT|>",      detect_deepseek_coder, render_deepseek_coder},
    {"seed-coder",     true,      true,     true,     false, nullptr,        detect_seed_coder,     render_seed_coder},
    {"plain",          false,     false,    false,    false, nullptr,        nullptr,               render_plain},
    {"custom",         false,     false,    false,    false, nullptr,        nullptr,               render_custom},
};
// clang-format on

const ChatFormatRow* find_format(const std::string& name) {
    for (const ChatFormatRow& row : kFormatRows)
        if (name == row.name) return &row;
    return nullptr;
}

// "a, b, c<last>d": the format names (those with a renderer when `hand_written`).
std::string format_list(bool hand_written, const char* last) {
    std::vector<std::string> names;
    for (const ChatFormatRow& row : kFormatRows)
        if (!hand_written || row.render != nullptr) names.emplace_back(row.name);
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? last : ", ") + names[i];
    return out;
}

}  // namespace

std::vector<std::string> chat_format_names() {
    std::vector<std::string> names;
    for (const ChatFormatRow& row : kFormatRows) names.emplace_back(row.name);
    return names;
}

std::vector<std::string> chat_format_hand_written() {
    std::vector<std::string> names;
    for (const ChatFormatRow& row : kFormatRows)
        if (row.render != nullptr) names.emplace_back(row.name);
    return names;
}

const char* role_name(Role r) {
    switch (r) {
        case Role::kTemplate: return "template";
        case Role::kSystem: return "system";
        case Role::kPrompt: return "prompt";
        case Role::kResponse: return "response";
    }
    return "?";
}

std::string chat_format_detect(const std::string& dir) {
    fs::path d(dir);
    std::string source;
    const std::string tmpl = chat_template_find(dir, &source);
    json config = json::object();
    if (fs::exists(d / "tokenizer_config.json")) config = json_read_file((d / "tokenizer_config.json").string(), "tokenizer config");
    if (tmpl.empty()) return "";
    std::string bos;
    if (config.contains("bos_token")) {
        const json& b = config["bos_token"];
        if (b.is_string()) bos = b.get<std::string>();
        else if (b.is_object() && b.contains("content") && b["content"].is_string()) bos = b["content"].get<std::string>();
    }
    const DetectInput in{tmpl, bos};
    for (const ChatFormatRow& row : kFormatRows)
        if (row.detect != nullptr && row.detect(in)) return row.name;
    return "";
}

ChatFormatter::ChatFormatter(const Tokenizer& tok, ChatFormatOptions opts, const std::string& tokenizer_dir)
    : tok_(tok), opts_(std::move(opts)) {
    name_ = opts_.format.empty() ? "auto" : opts_.format;
    std::string source;
    std::string text;
    if (name_ == "auto" || name_ == "template") {
        if (!opts_.chat_template.empty()) {
            text = chat_template_read(opts_.chat_template);
            source = opts_.chat_template;
        } else {
            text = chat_template_find(tokenizer_dir, &source);
        }
    }
    if (name_ == "auto") {
        if (text.empty())
            throw UsageError("the tokenizer in '" + tokenizer_dir +
                             "' has no chat template (tokenizer_config.json chat_template or chat_template.jinja); set "
                             "data.chat_format to one of " + format_list(true, ", ") +
                             ", or template with data.chat_template naming a template file");
        name_ = "template";
        log_debug("chat format: template (from %s)", source.c_str());
    }
    row_ = find_format(name_);
    if (row_ == nullptr)
        throw UsageError("unknown chat format '" + name_ + "' (expected auto, " + format_list(false, " or ") + ")");
    if (name_ == "template") {
        if (text.empty())
            throw UsageError("data.chat_format is template but the tokenizer in '" + tokenizer_dir +
                             "' has no chat template; name a template file with data.chat_template");
        template_init(text, source, tokenizer_dir);
    }
    if (row_->needs_bos && tok_.bos_id() < 0)
        throw InputError("chat format " + name_ + " needs the tokenizer's bos_token (tokenizer_config.json)");
    if (row_->needs_eos && tok_.eos_id() < 0)
        throw InputError("chat format " + name_ + " needs the tokenizer's eos_token (tokenizer_config.json)");

    // The BOS the tokenizer's post-processor adds with add_special_tokens (plain, custom, raw text).
    Encoding with = tok_.encode("a", true), without = tok_.encode("a", false);
    if (with.ids.size() > without.ids.size() && !without.ids.empty()) {
        auto it = std::search(with.ids.begin(), with.ids.end(), without.ids.begin(), without.ids.end());
        if (it != with.ids.end() && it != with.ids.begin()) add_bos_ = with.ids.front();
    }
}

ChatFormatter::Rendered ChatFormatter::render(const Conversation& c) const {
    const auto& ms = c.messages;
    if (ms.empty()) throw InputError("sample " + quote_bounded(c.id) + ": no messages");
    Builder b;
    const bool raw_text = ms.size() == 1 && ms[0].role == "text";
    bool any_assistant = raw_text;
    for (size_t i = 0; i < ms.size(); ++i) {
        const std::string& r = ms[i].role;
        if (r != "system" && r != "user" && r != "assistant" && !(raw_text && r == "text"))
            throw InputError(strprintf("sample %s: message %zu has role '%s' (expected system, user or assistant)",
                                       quote_bounded(c.id).c_str(), i, quote_bounded(r).c_str()));
        any_assistant = any_assistant || r == "assistant";
        if (int64_t bad = utf8_first_invalid(ms[i].content); bad >= 0)
            throw InputError(strprintf("sample %s: message %zu: invalid UTF-8 at byte %lld", quote_bounded(c.id).c_str(), i,
                                       static_cast<long long>(bad)));
    }
    if (!any_assistant) throw InputError("sample " + quote_bounded(c.id) + ": no assistant message, nothing to train on");

    const std::string eos_text = tok_.eos_id() >= 0 ? tok_.id_to_token(tok_.eos_id()) : "";
    const std::string bos_text = tok_.bos_id() >= 0 ? tok_.id_to_token(tok_.bos_id()) : "";
    const bool first_is_system = ms[0].role == "system";
    const std::string& sp = opts_.system_prompt;

    if (raw_text) {
        b.content(0, ms[0].content);
        if (tok_.eos_id() >= 0) b.id(tok_.eos_id(), true);
        return b.r;
    }
    if (row_->render == nullptr) return render_template(c);
    if (!c.tools.is_null() || !c.documents.is_null())
        throw InputError("sample " + quote_bounded(c.id) + ": it has " + (c.tools.is_null() ? "documents" : "tools") +
                         ", which only the model's own chat template renders; chat format " + name_ +
                         " has no place for them (set data.chat_format: template)");
    for (size_t i = 0; i < ms.size(); ++i)
        if (!ms[i].parts.empty())
            throw InputError(strprintf("sample %s: message %zu has its content as a list of text parts, which only the "
                                       "model's own chat template renders; chat format %s has no place for them (set "
                                       "data.chat_format: template)",
                                       quote_bounded(c.id).c_str(), i, name_.c_str()));

    row_->render({ms, sp, first_is_system, bos_text, eos_text, tok_, opts_.templ}, b);
    return b.r;
}

FormattedSample ChatFormatter::format(const Conversation& c) const { return format(c, nullptr, nullptr); }

FormattedSample ChatFormatter::format(const Conversation& c, Rendered* rendered,
                                      std::vector<std::pair<uint32_t, uint32_t>>* offsets) const {
    Rendered r = render(c);
    const auto& ms = c.messages;
    FormattedSample f;
    std::vector<std::pair<uint32_t, uint32_t>> offs;

    // Tokenize the text between tokens inserted by id, each run in one piece.
    auto flush = [&](size_t from, size_t to) {
        if (to <= from) return;
        Encoding e = tok_.encode(std::string_view(r.text).substr(from, to - from), false);
        for (size_t k = 0; k < e.ids.size(); ++k) {
            f.ids.push_back(e.ids[k]);
            offs.push_back({static_cast<uint32_t>(e.offsets[k].first + from), static_cast<uint32_t>(e.offsets[k].second + from)});
        }
    };
    size_t run = 0;
    std::vector<int32_t> by_id_seg;  // per token: segment index of an id token, else -1
    for (size_t s = 0; s < r.segments.size(); ++s) {
        const auto& seg = r.segments[s];
        if (seg.token_id < 0) continue;
        flush(run, seg.begin);
        by_id_seg.resize(f.ids.size(), -1);
        f.ids.push_back(seg.token_id);
        offs.push_back({static_cast<uint32_t>(seg.begin), static_cast<uint32_t>(seg.begin)});
        by_id_seg.push_back(static_cast<int32_t>(s));
        run = seg.begin;
    }
    flush(run, r.text.size());
    by_id_seg.resize(f.ids.size(), -1);

    // Raw text, plain and custom get the BOS the tokenizer adds, unless the text starts with it.
    const bool by_template = row_->writes_bos;
    const bool raw_text = ms.size() == 1 && ms[0].role == "text";
    if (add_bos_ >= 0 && (raw_text || !by_template) && (f.ids.empty() || f.ids.front() != add_bos_)) {
        f.ids.insert(f.ids.begin(), add_bos_);
        offs.insert(offs.begin(), {0u, 0u});
        by_id_seg.insert(by_id_seg.begin(), -1);
    }

    // Roles from the segments each token's bytes overlap.
    const size_t T = f.ids.size();
    f.roles.assign(T, Role::kTemplate);
    f.trainable.assign(T, 0);
    f.message.assign(T, -1);
    f.spans.assign(T, {-1, -1});
    size_t seg0 = 0;
    bool any_response = false, any_trainable = false;
    for (size_t t = 0; t < T; ++t) {
        if (by_id_seg[t] >= 0) {
            f.trainable[t] = r.segments[static_cast<size_t>(by_id_seg[t])].trainable ? 1 : 0;
            continue;
        }
        const size_t tb = offs[t].first, te = offs[t].second;
        if (te <= tb) continue;
        // First segment ending after the token's start (segments are in text order).
        seg0 = static_cast<size_t>(std::partition_point(r.segments.begin(), r.segments.end(),
                                                        [&](const Rendered::Segment& g) { return g.end <= tb; }) -
                                   r.segments.begin());
        int best = 0;  // 4 response, 3 trainable template, 2 prompt/system, 1 template
        bool on_trainable = false;
        for (size_t s = seg0; s < r.segments.size() && r.segments[s].begin < te; ++s) {
            const auto& seg = r.segments[s];
            if (seg.token_id >= 0 || seg.end <= tb) continue;
            size_t ob = std::max(tb, seg.begin), oe = std::min(te, seg.end);
            if (oe <= ob) continue;
            on_trainable = on_trainable || seg.trainable;
            if (seg.message >= 0) {
                const std::string& role = ms[static_cast<size_t>(seg.message)].role;
                int rank = (role == "assistant" || role == "text") ? 4 : 2;
                auto span = std::make_pair(static_cast<int32_t>(seg.content_begin + (ob - seg.begin)),
                                           static_cast<int32_t>(seg.content_begin + (oe - seg.begin)));
                if (rank > best) {
                    best = rank;
                    f.message[t] = seg.message;
                    f.spans[t] = span;
                    f.roles[t] = rank == 4 ? Role::kResponse : role == "system" ? Role::kSystem : Role::kPrompt;
                } else if (rank == best && f.message[t] == seg.message) {
                    f.spans[t].second = span.second;  // a token over two pieces of one message
                }
            } else if (seg.trainable && best < 3) {
                best = 3;
            }
        }
        if (r.trainable_by_segment ? on_trainable : best >= 3) f.trainable[t] = 1;
        any_response = any_response || best == 4;
        any_trainable = any_trainable || f.trainable[t];
    }
    if (!any_response)
        throw InputError("sample " + quote_bounded(c.id) + ": the assistant messages are empty, no response token to train on");
    if (!any_trainable)
        throw InputError("sample " + quote_bounded(c.id) + ": the chat template marks no token of it as trainable");
    if (rendered) *rendered = std::move(r);
    if (offsets) *offsets = std::move(offs);
    return f;
}

// ---------------------------------------------------------------- generation prompt

std::vector<int32_t> ChatFormatter::generation_prompt(const Conversation& c, bool thinking) const {
    const auto& ms = c.messages;
    if (ms.empty()) throw InputError("sample " + quote_bounded(c.id) + ": no messages");
    const bool raw_text = ms.size() == 1 && ms[0].role == "text";
    if (!raw_text && ms.back().role != "user")
        throw InputError("sample " + quote_bounded(c.id) + ": the last message is from '" + quote_bounded(ms.back().role) +
                         "'; a generation prompt ends with a user message");
    if (row_->render == nullptr && !raw_text) {
        for (size_t i = 0; i < ms.size(); ++i)
            if (int64_t bad = utf8_first_invalid(ms[i].content); bad >= 0)
                throw InputError(strprintf("sample %s: message %zu: invalid UTF-8 at byte %lld", quote_bounded(c.id).c_str(), i,
                                           static_cast<long long>(bad)));
        return tok_.encode(render_template_text(c, /*add_generation_prompt=*/true, thinking, /*as_given=*/false), false).ids;
    }
    // Render with a placeholder answer and cut where its content starts: the prompt side of the
    // turn is then exactly what format() trains the model to answer after.
    Conversation full = c;
    if (!raw_text) full.messages.push_back({"assistant", "x"});
    Rendered r = render(full);
    const auto answer = static_cast<int32_t>(full.messages.size() - 1);
    size_t cut = r.text.size(), n_seg = r.segments.size();
    if (raw_text) {
        // Drop the EOS inserted after the text.
        while (n_seg > 0 && r.segments[n_seg - 1].token_id >= 0) --n_seg;
    } else {
        for (size_t s = 0; s < r.segments.size(); ++s)
            if (r.segments[s].message == answer) {
                cut = r.segments[s].begin;
                n_seg = s;
                break;
            }
        if (thinking && row_->think_block)  // thinking on: the model writes its own think block
            for (size_t s = 0; s < n_seg; ++s)
                if (r.segments[s].message < 0 && r.text.compare(r.segments[s].begin, 7, "<think>") == 0) {
                    cut = r.segments[s].begin;
                    n_seg = s;
                    break;
                }
    }
    std::vector<int32_t> ids;
    size_t run = 0;
    auto flush = [&](size_t from, size_t to) {
        if (to <= from) return;
        Encoding e = tok_.encode(std::string_view(r.text).substr(from, to - from), false);
        ids.insert(ids.end(), e.ids.begin(), e.ids.end());
    };
    for (size_t s = 0; s < n_seg; ++s) {
        if (r.segments[s].token_id < 0) continue;
        flush(run, r.segments[s].begin);
        ids.push_back(r.segments[s].token_id);
        run = r.segments[s].begin;
    }
    flush(run, raw_text ? r.text.size() : cut);
    const bool by_template = row_->writes_bos;
    if (add_bos_ >= 0 && (raw_text || !by_template) && (ids.empty() || ids.front() != add_bos_))
        ids.insert(ids.begin(), add_bos_);
    return ids;
}

std::string ChatFormatter::render_text(const Conversation& c, bool add_generation_prompt) const {
    const auto& ms = c.messages;
    const bool raw_text = ms.size() == 1 && ms[0].role == "text";
    if (add_generation_prompt) {
        if (ms.empty()) throw InputError("sample " + quote_bounded(c.id) + ": no messages");
        if (!raw_text && ms.back().role != "user")
            throw InputError("sample " + quote_bounded(c.id) + ": the last message is from '" + quote_bounded(ms.back().role) +
                             "'; a generation prompt ends with a user message");
    }
    if (row_->render == nullptr && !raw_text) {
        for (size_t i = 0; i < ms.size(); ++i)
            if (int64_t bad = utf8_first_invalid(ms[i].content); bad >= 0)
                throw InputError(strprintf("sample %s: message %zu: invalid UTF-8 at byte %lld", quote_bounded(c.id).c_str(), i,
                                           static_cast<long long>(bad)));
        return render_template_text(c, add_generation_prompt, /*thinking=*/false, /*as_given=*/true);
    }
    // A hand-written format: its segments, up to the placeholder answer's content with a prompt.
    Conversation full = c;
    if (add_generation_prompt && !raw_text) full.messages.push_back({"assistant", "x"});
    const Rendered r = render(full);
    const auto answer = static_cast<int32_t>(full.messages.size() - 1);
    std::string out;
    for (const Rendered::Segment& seg : r.segments) {
        if (add_generation_prompt && !raw_text && seg.message == answer) break;
        if (add_generation_prompt && raw_text && seg.token_id >= 0 && &seg == &r.segments.back()) break;  // no EOS
        out += seg.token_id >= 0 ? tok_.id_to_token(seg.token_id) : r.text.substr(seg.begin, seg.end - seg.begin);
    }
    return out;
}

std::string ChatFormatter::end_of_turn() const {
    const std::string eos_text = tok_.eos_id() >= 0 ? tok_.id_to_token(tok_.eos_id()) : "";
    if (row_->render == nullptr && !end_of_turn_.empty()) return end_of_turn_;  // the model's template
    if (row_->end_of_turn != nullptr) return row_->end_of_turn;
    if (row_->render == render_custom && !opts_.templ.end_of_turn.empty()) return opts_.templ.end_of_turn;
    return eos_text;
}

// ---------------------------------------------------------------- UTF-8 repair

std::string utf8_sanitize(std::string_view text, bool replace, const std::string& context) {
    int64_t bad = utf8_first_invalid(text);
    if (bad < 0) return std::string(text);
    if (!replace)
        throw InputError(strprintf("%s: invalid UTF-8 at byte %lld (set data.invalid_utf8: replace to repair it)",
                                   context.c_str(), static_cast<long long>(bad)));
    // Each maximal ill-formed subsequence (Unicode 3.9, Table 3-7) becomes one U+FFFD.
    return detail::utf8_lossy(text);
}

}  // namespace cuset
