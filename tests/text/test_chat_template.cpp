// The `template` chat format (text/chat_template.cpp) against transformers' apply_chat_template on
// real chat templates (tests/golden/chat_template.py: trl's templates, tests/fixtures/chat_templates,
// the families' templates): rendered text and token ids for training samples and generation
// prompts, with and without tools (and documents, on a test template), the marker mask against
// return_assistant_tokens_mask, the span mask against the marker mask of the family's training
// template, byte spans, vision models' templates with list content (and string content given to
// them as parts), the hand-written formats equal to the template where both exist (their
// data.system_prompt too), and the refusals.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/text/chat_format.h"
#include "cuset/text/tokenizer.h"
#include "test_util.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using cuset::test::scratch_dir;
using cuset::test::write_file;

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/chat_template";

json load(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error("missing fixture " + path + " (run the golden_chat_template test first)");
    std::stringstream ss;
    ss << f.rdbuf();
    return json::parse(ss.str());
}

// The case's conversation (a content given as a list of text parts kept as parts), with the tools
// / documents passed to apply_chat_template (JSON text, parsed keeping its key order).
cuset::Conversation conv_of(const json& c) {
    cuset::Conversation conv;
    conv.id = c["template"].get<std::string>() + "/" + c["id"].get<std::string>();
    for (const json& m : c["messages"]) {
        cuset::Message msg{m["role"].get<std::string>(), ""};
        if (m["content"].is_string()) {
            msg.content = m["content"].get<std::string>();
        } else {
            for (const json& part : m["content"]) {
                const std::string text = part["text"].get<std::string>();
                msg.content += text;
                msg.parts.push_back(text.size());
            }
        }
        conv.messages.push_back(std::move(msg));
    }
    if (c.contains("tools_json")) conv.tools = nlohmann::ordered_json::parse(c["tools_json"].get<std::string>());
    if (c.contains("documents_json"))
        conv.documents = nlohmann::ordered_json::parse(c["documents_json"].get<std::string>());
    return conv;
}

bool passes_lists(const json& c) { return c.contains("tools_json") || c.contains("documents_json"); }

struct Folder {
    std::unique_ptr<cuset::Tokenizer> tok;
    std::map<std::string, std::unique_ptr<cuset::ChatFormatter>> fmt;  // by kwargs
};

cuset::ChatFormatter& formatter(std::map<std::string, Folder>& cache, const json& c) {
    const std::string dir = kGolden + "/" + c["template"].get<std::string>();
    Folder& f = cache[dir];
    if (!f.tok) f.tok = cuset::tokenizer_load(dir);
    const std::string key = c["kwargs"].dump();
    auto& p = f.fmt[key];
    if (!p) {
        cuset::ChatFormatOptions o;
        o.format = "template";
        o.template_kwargs = nlohmann::ordered_json::parse(key);
        p = std::make_unique<cuset::ChatFormatter>(*f.tok, o, dir);
    }
    return *p;
}

// Every case: the text and ids of apply_chat_template; the marker mask equal to transformers';
// every byte span pointing at the message bytes the token covers.
TEST(ChatTemplate, TextIdsAndMasksMatchApplyChatTemplate) {
    json cases = load(kGolden + "/cases.json");
    std::map<std::string, Folder> cache;
    std::map<std::string, int> per_template, with_lists;
    for (const json& c : cases) {
        if (c.contains("error")) continue;  // ChatTemplate.RefusesWhatTransformersRefuses
        cuset::ChatFormatter& fmt = formatter(cache, c);
        cuset::Conversation conv = conv_of(c);
        const auto want_ids = c["ids"].get<std::vector<int32_t>>();
        if (passes_lists(c)) ++with_lists[c["template"]];
        if (c["add_generation_prompt"].get<bool>()) {
            EXPECT_EQ(fmt.generation_prompt(conv), want_ids) << conv.id << " " << c["kwargs"].dump();
            ++per_template[c["template"]];
            continue;
        }
        cuset::ChatFormatter::Rendered r;
        std::vector<std::pair<uint32_t, uint32_t>> offs;
        cuset::FormattedSample f = fmt.format(conv, &r, &offs);
        const std::string where = conv.id + " " + c["kwargs"].dump();
        EXPECT_EQ(r.text, c["text"].get<std::string>()) << where;
        EXPECT_EQ(f.ids, want_ids) << where;
        EXPECT_EQ(fmt.mask_source(), c["markers"].get<bool>() ? "markers" : "spans") << where;
        if (c.contains("assistant_masks")) {
            const auto want = c["assistant_masks"].get<std::vector<int>>();
            ASSERT_EQ(f.trainable.size(), want.size()) << where;
            for (size_t t = 0; t < want.size(); ++t)
                EXPECT_EQ(f.trainable[t], want[t]) << where << " token " << t << " '"
                                                   << r.text.substr(offs[t].first, offs[t].second - offs[t].first) << "'";
        }
        for (size_t t = 0; t < f.ids.size(); ++t) {
            if (f.message[t] < 0) continue;
            const std::string& content = conv.messages[static_cast<size_t>(f.message[t])].content;
            auto [b, e] = f.spans[t];
            ASSERT_TRUE(b >= 0 && e > b && static_cast<size_t>(e) <= content.size()) << where << " token " << t;
            // The covered bytes are inside the token's bytes of the rendered text.
            const std::string piece = r.text.substr(offs[t].first, offs[t].second - offs[t].first);
            EXPECT_NE(piece.find(content.substr(static_cast<size_t>(b), static_cast<size_t>(e - b))), std::string::npos)
                << where << " token " << t;
        }
        ++per_template[c["template"]];
    }
    // One test per real template: each of them was checked on its conversations.
    for (const char* t : {"qwen2.5", "qwen2.5-coder", "qwen3", "qwen3-training", "deepseek-coder", "seed-coder", "llama3",
                          "llama3.1", "llama3.2", "mistral-v0.3", "gemma", "gemma2", "gemma3", "phi3", "phi3.5", "smollm2",
                          "smolvlm", "qwen2.5-vl"})
        EXPECT_GE(per_template[t], 7) << t;
    // apply_chat_template(..., tools=...) on every template that renders tools, two training samples
    // and two generation prompts each; documents=... on the test template.
    for (const char* t : {"qwen2.5", "qwen2.5-training", "qwen2.5-coder", "qwen3", "qwen3-training", "llama3.1", "llama3.2",
                          "mistral-v0.3", "documents-test"})
        EXPECT_EQ(with_lists[t], 4) << t;
}

// Vision models' templates, which read a message's content as a list of text parts: a
// conversation given with list content renders as transformers renders it (format() and
// render_text()), and so does one given with string content, as the one-part lists the golden
// script passed where the template writes no string content of an answer (SmolVLM's: "as_parts")
// and as given where it does (Qwen2.5-VL's); either way every answer is trained from the end of its
// generation prompt through the end-of-turn token after it.
TEST(ChatTemplate, ListContentRendersAndTrainsTheAnswer) {
    json cases = load(kGolden + "/cases.json");
    std::map<std::string, Folder> cache;
    const std::map<std::string, std::pair<std::string, std::string>> answer_edges = {
        {"smolvlm", {" ", "<end_of_utterance>"}},  // after "Assistant:", the generation prompt
        {"qwen2.5-vl", {"", "<|im_end|>"}},
    };
    std::map<std::string, int> trained, as_parts, listed;
    for (const json& c : cases) {
        auto edges = answer_edges.find(c["template"].get<std::string>());
        if (edges == answer_edges.end() || c.contains("error")) continue;
        cuset::ChatFormatter& fmt = formatter(cache, c);
        cuset::Conversation conv = conv_of(c);
        const bool agp = c["add_generation_prompt"].get<bool>();
        const bool given_as_parts = std::any_of(conv.messages.begin(), conv.messages.end(),
                                                [](const cuset::Message& m) { return !m.parts.empty(); });
        if (given_as_parts) {  // render_text renders the contents as given: here the golden form
            EXPECT_EQ(fmt.render_text(conv, agp), c["text"].get<std::string>()) << conv.id;
            ++listed[c["template"]];
        }
        if (c.value("as_parts", false)) ++as_parts[c["template"]];
        if (agp) continue;  // the ids of generation prompts: TextIdsAndMasksMatchApplyChatTemplate
        cuset::ChatFormatter::Rendered r;
        std::vector<std::pair<uint32_t, uint32_t>> offs;
        cuset::FormattedSample f = fmt.format(conv, &r, &offs);
        EXPECT_EQ(r.text, c["text"].get<std::string>()) << conv.id;
        EXPECT_EQ(fmt.mask_source(), "spans");
        std::string want, got;
        for (const cuset::Message& m : conv.messages)
            if (m.role == "assistant") want += edges->second.first + m.content + edges->second.second;
        std::vector<bool> trained_byte(r.text.size(), false);  // tokens splitting a character share its bytes
        for (size_t k = 0; k < f.ids.size(); ++k)
            if (f.trainable[k]) std::fill(trained_byte.begin() + offs[k].first, trained_byte.begin() + offs[k].second, true);
        for (size_t b = 0; b < r.text.size(); ++b)
            if (trained_byte[b]) got += r.text[b];
        EXPECT_EQ(got, want) << conv.id;
        ++trained[c["template"]];
    }
    EXPECT_GE(trained["smolvlm"], 15);  // 7 string conversations, 7 with one part each, 1 with several
    EXPECT_GE(trained["qwen2.5-vl"], 15);
    EXPECT_GE(as_parts["smolvlm"], 10);  // the string conversations, generation prompts included
    EXPECT_EQ(as_parts["qwen2.5-vl"], 0);
    EXPECT_GE(listed["smolvlm"], 12);
    EXPECT_GE(listed["qwen2.5-vl"], 12);
}

// The span mask (a template without markers) against transformers' mask of the same family's
// training template (trl's *_training.jinja: the same rendering with {% generation %} around the
// assistant output): equal on every token except whitespace-only template tokens at a turn's
// edges and template tokens after the last message (Phi-3's closing eos), which the training
// templates put inside their markers and the span mask leaves out. Qwen3 with thinking off is
// not compared: its training template marks the empty think block whatever enable_thinking says,
// while there it is part of the generation prompt transformers renders, so the span mask leaves
// it to the prompt side (as the hand-written qwen3 format does).
TEST(ChatTemplate, SpanMaskMatchesTrainingTemplateMarkers) {
    json cases = load(kGolden + "/cases.json");
    std::map<std::string, Folder> cache;
    size_t compared = 0;
    for (const json& c : cases) {
        if (!c.contains("training_masks") || c["kwargs"].contains("enable_thinking")) continue;
        cuset::ChatFormatter& fmt = formatter(cache, c);
        cuset::Conversation conv = conv_of(c);
        cuset::ChatFormatter::Rendered r;
        std::vector<std::pair<uint32_t, uint32_t>> offs;
        cuset::FormattedSample f = fmt.format(conv, &r, &offs);
        const auto want = c["training_masks"].get<std::vector<int>>();
        ASSERT_EQ(f.trainable.size(), want.size()) << conv.id;
        size_t last_content = 0;
        for (size_t t = 0; t < f.message.size(); ++t)
            if (f.message[t] >= 0) last_content = t;
        for (size_t t = 0; t < want.size(); ++t) {
            if (f.trainable[t] == want[t]) continue;
            const std::string piece = r.text.substr(offs[t].first, offs[t].second - offs[t].first);
            const bool blank = piece.find_first_not_of(" \n") == std::string::npos;
            EXPECT_TRUE(want[t] == 1 && f.message[t] < 0 && (blank || t > last_content))
                << conv.id << " " << c["kwargs"].dump() << " token " << t << " '" << piece << "': spans " << int(f.trainable[t])
                << ", markers " << want[t];
        }
        ++compared;
    }
    EXPECT_GE(compared, 30u);
}

TEST(ChatTemplate, RefusesWhatTransformersRefuses) {
    json cases = load(kGolden + "/cases.json");
    std::map<std::string, Folder> cache;
    size_t n = 0;
    for (const json& c : cases) {
        if (!c.contains("error")) continue;
        cuset::ChatFormatter& fmt = formatter(cache, c);
        cuset::Conversation conv = conv_of(c);
        try {
            if (c["add_generation_prompt"].get<bool>()) fmt.generation_prompt(conv);
            else fmt.format(conv);
            ADD_FAILURE() << conv.id << ": transformers raised " << c["error"] << " but cuset rendered it";
        } catch (const cuset::InputError& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(conv.id), std::string::npos) << msg;
            EXPECT_NE(msg.find("raise_exception"), std::string::npos) << msg;
        }
        ++n;
    }
    EXPECT_GE(n, 4u);  // Gemma refuses system messages
}

// The hand-written formats render what the families' templates render and mark the same tokens.
// The hand-written qwen3 is Qwen3's template with thinking off (the empty think block on the
// prompt side), except for a sample with reasoning, which it trains as thinking on does.
TEST(ChatTemplate, HandWrittenFormatsEqualTheTemplate) {
    json cases = load(kGolden + "/cases.json");
    std::map<std::string, Folder> cache;
    const std::map<std::string, std::pair<std::string, std::string>> pairs = {
        {"qwen2.5", {"chatml", "{}"}},
        {"qwen2.5-coder", {"chatml", "{}"}},
        {"qwen3", {"qwen3", "{\"enable_thinking\":false}"}},
        {"deepseek-coder", {"deepseek-coder", "{}"}},
        {"seed-coder", {"seed-coder", "{}"}},
    };
    size_t compared = 0;
    for (const json& c : cases) {
        auto it = pairs.find(c["template"].get<std::string>());
        if (it == pairs.end() || c.contains("error") || passes_lists(c)) continue;  // tools: HandWrittenFormatsRefuseTools
        const bool reasoning = c["template"] == "qwen3" && c["id"] == "think";
        if (c["kwargs"].dump() != (reasoning ? std::string("{}") : it->second.second)) continue;
        cuset::ChatFormatter& tmpl = formatter(cache, c);
        Folder& folder = cache[kGolden + "/" + c["template"].get<std::string>()];
        cuset::ChatFormatOptions o;
        o.format = it->second.first;
        cuset::ChatFormatter hand(*folder.tok, o, kGolden + "/" + c["template"].get<std::string>());
        cuset::Conversation conv = conv_of(c);
        if (c["add_generation_prompt"].get<bool>()) {
            EXPECT_EQ(hand.generation_prompt(conv), tmpl.generation_prompt(conv)) << conv.id;
            ++compared;
            continue;
        }
        cuset::FormattedSample a = hand.format(conv), b = tmpl.format(conv);
        EXPECT_EQ(a.ids, b.ids) << conv.id;
        EXPECT_EQ(a.trainable, b.trainable) << conv.id;
        EXPECT_EQ(a.roles, b.roles) << conv.id;
        EXPECT_EQ(a.message, b.message) << conv.id;
        EXPECT_EQ(a.spans, b.spans) << conv.id;
        ++compared;
    }
    EXPECT_GE(compared, 40u);
}

// data.system_prompt in a hand-written format renders what the template renders for the same
// conversation with that text as its system message.
TEST(ChatTemplate, HandWrittenSystemPromptIsTheTemplatesSystemMessage) {
    json cases = load(kGolden + "/cases.json");
    std::map<std::string, Folder> cache;
    const std::map<std::string, std::string> pairs = {{"qwen2.5", "chatml"}, {"qwen2.5-coder", "chatml"},
                                                      {"qwen3", "qwen3"}, {"deepseek-coder", "deepseek-coder"},
                                                      {"seed-coder", "seed-coder"}};
    size_t compared = 0;
    for (const json& c : cases) {
        auto it = pairs.find(c["template"].get<std::string>());
        if (it == pairs.end() || c.contains("error") || passes_lists(c) || c["messages"][0]["role"] != "system") continue;
        if (c["kwargs"].dump() != (it->second == "qwen3" ? "{\"enable_thinking\":false}" : "{}")) continue;
        cuset::ChatFormatter& tmpl = formatter(cache, c);
        Folder& folder = cache[kGolden + "/" + c["template"].get<std::string>()];
        cuset::Conversation conv = conv_of(c), rest = conv;
        rest.messages.erase(rest.messages.begin());
        cuset::ChatFormatOptions o;
        o.format = it->second;
        o.system_prompt = conv.messages[0].content;
        cuset::ChatFormatter hand(*folder.tok, o, kGolden + "/" + c["template"].get<std::string>());
        if (c["add_generation_prompt"].get<bool>()) {
            EXPECT_EQ(hand.generation_prompt(rest), tmpl.generation_prompt(conv)) << conv.id;
        } else {
            cuset::FormattedSample a = hand.format(rest), b = tmpl.format(conv);
            EXPECT_EQ(a.ids, b.ids) << conv.id;
            EXPECT_EQ(a.trainable, b.trainable) << conv.id;
        }
        ++compared;
    }
    EXPECT_GE(compared, 15u);
}

// A sample with tools, documents or list content in a hand-written format is refused, naming the
// sample: the format has no place for them, and training without them would train on another prompt.
TEST(ChatTemplate, HandWrittenFormatsRefuseTools) {
    auto tok = cuset::tokenizer_load(kGolden + "/qwen2.5");
    cuset::ChatFormatOptions o;
    o.format = "chatml";
    cuset::ChatFormatter fmt(*tok, o, kGolden + "/qwen2.5");
    cuset::Conversation c{"t1", {{"user", "hi"}, {"assistant", "ok"}}};
    EXPECT_NO_THROW(fmt.format(c));
    for (const char* which : {"tools", "documents"}) {
        cuset::Conversation t = c;
        (std::string(which) == "tools" ? t.tools : t.documents) = nlohmann::ordered_json::array({{{"name", "f"}}});
        try {
            fmt.format(t);
            ADD_FAILURE() << "chatml rendered a sample with " << which;
        } catch (const cuset::InputError& e) {
            EXPECT_EQ(std::string(e.what()), std::string("sample t1: it has ") + which +
                                                 ", which only the model's own chat template renders; chat format chatml "
                                                 "has no place for them (set data.chat_format: template)");
        }
        cuset::Conversation g{"t1", {{"user", "hi"}}, t.tools, t.documents};
        EXPECT_THROW(fmt.generation_prompt(g), cuset::InputError) << which;
    }
    // So is content given as a list of text parts: the template would see the list, not a string.
    cuset::Conversation parts = c;
    parts.messages[1].parts = {2};
    try {
        fmt.format(parts);
        ADD_FAILURE() << "chatml rendered a sample with list content";
    } catch (const cuset::InputError& e) {
        EXPECT_EQ(std::string(e.what()), "sample t1: message 1 has its content as a list of text parts, which only the "
                                         "model's own chat template renders; chat format chatml has no place for them "
                                         "(set data.chat_format: template)");
    }
}

// `auto` takes the folder's own template (the refusals: TemplateJinja2RefusesRefusesTheFolder,
// UnlocatableContentIsRefused).
TEST(ChatTemplate, AutoPrefersTheFoldersTemplate) {
    auto tok = cuset::tokenizer_load(kGolden + "/llama3");
    cuset::ChatFormatOptions o;
    cuset::ChatFormatter fmt(*tok, o, kGolden + "/llama3");
    EXPECT_EQ(fmt.name(), "template");
    EXPECT_EQ(fmt.template_source(), kGolden + "/llama3/tokenizer_config.json");
    EXPECT_EQ(fmt.end_of_turn(), "<|eot_id|>");
}

std::string copy_with_template(const std::string& name, const std::string& tmpl) {
    const std::string dir = scratch_dir("chat_template_" + name);
    fs::copy_file(kGolden + "/qwen2.5/tokenizer.json", dir + "/tokenizer.json", fs::copy_options::overwrite_existing);
    json cfg = load(kGolden + "/qwen2.5/tokenizer_config.json");
    cfg["chat_template"] = tmpl;
    write_file(dir + "/tokenizer_config.json", cfg.dump());
    return dir;
}

// A template Jinja2 refuses to compile refuses the folder, naming the file, the line and the reason;
// an {% include %} (Jinja2 fails when it reaches one) refuses the samples that reach it.
TEST(ChatTemplate, TemplateJinja2RefusesRefusesTheFolder) {
    const std::string dir = copy_with_template(
        "unsupported", "{% for m in messages %}\n{{ m.content }}\n{% endfor %}\n{{ messages | from_json }}");
    auto tok = cuset::tokenizer_load(dir);
    for (const char* format : {"auto", "template"}) {
        cuset::ChatFormatOptions o;
        o.format = format;
        try {
            cuset::ChatFormatter fmt(*tok, o, dir);
            ADD_FAILURE() << "accepted a template with an unknown filter";
        } catch (const cuset::InputError& e) {
            EXPECT_EQ(std::string(e.what()), dir + "/tokenizer_config.json:4: no filter named 'from_json'");
        }
    }
    const std::string inc = copy_with_template(
        "include", "{% for m in messages %}{{ m.content }}<|im_end|>{% endfor %}{% if add_generation_prompt %}\n"
                   "{% include 'tools.jinja' %}{% endif %}");
    cuset::ChatFormatter fmt(*tok, cuset::ChatFormatOptions{}, inc);
    cuset::Conversation conv{"s1", {{"user", "hi"}, {"assistant", "ok"}}};
    EXPECT_EQ(fmt.render_text(conv, false), "hi<|im_end|>ok<|im_end|>");
    try {
        fmt.render_text(cuset::Conversation{"s2", {{"user", "hi"}}}, true);
        ADD_FAILURE() << "rendered an {% include %}";
    } catch (const cuset::InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "sample s2: chat template " + inc + "/tokenizer_config.json:2: {% include %}: no loader for this environment specified");
    }
}

// A chat_template that is not a string (nor a list of named templates with a default) is a broken
// template, not a missing one.
TEST(ChatTemplate, NonStringChatTemplateIsAnError) {
    const std::string dir = scratch_dir("chat_template_not_string");
    fs::copy_file(kGolden + "/qwen2.5/tokenizer.json", dir + "/tokenizer.json", fs::copy_options::overwrite_existing);
    auto tok = cuset::tokenizer_load(dir);
    const std::pair<json, std::string> cases[] = {
        {json(5), "\"chat_template\" is number, not a string or a list of named templates"},
        {json::object({{"default", "x"}}), "\"chat_template\" is object, not a string or a list of named templates"},
        {json::array({json::object({{"name", "tool_use"}, {"template", "x"}})}),
         "\"chat_template\" is a list of named templates without one named \"default\""},
        {json::array({json::object({{"name", "default"}, {"template", 3}})}),
         "\"chat_template\" is a list whose entries are not all {\"name\": string, \"template\": string}"},
    };
    for (const auto& [value, want] : cases) {
        json cfg = load(kGolden + "/qwen2.5/tokenizer_config.json");
        cfg["chat_template"] = value;
        write_file(dir + "/tokenizer_config.json", cfg.dump());
        try {
            cuset::ChatFormatter fmt(*tok, cuset::ChatFormatOptions{}, dir);
            ADD_FAILURE() << "accepted chat_template " << value.dump();
        } catch (const cuset::InputError& e) {
            EXPECT_EQ(std::string(e.what()), dir + "/tokenizer_config.json: " + want);
        }
    }
    json cfg = load(kGolden + "/qwen2.5/tokenizer_config.json");
    cfg["chat_template"] = json::array({json::object({{"name", "default"}, {"template", "{{ messages[0].content }}"}}),
                                        json::object({{"name", "rag"}, {"template", "x"}})});
    write_file(dir + "/tokenizer_config.json", cfg.dump());
    cuset::ChatFormatter fmt(*tok, cuset::ChatFormatOptions{}, dir);
    EXPECT_EQ(fmt.render_text(cuset::Conversation{"s", {{"user", "u"}}}, true), "u");
}

// A template that does not render the assistant content as it is refuses the sample; one that
// writes no end of turn gets the EOS appended, or refuses the sample when there is none.
TEST(ChatTemplate, UnlocatableContentIsRefused) {
    cuset::Conversation conv{"s1", {{"user", "hi"}, {"assistant", "ok"}}};
    {
        const std::string dir = copy_with_template(
            "upper", "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | upper }}<|im_end|>\n{% endfor %}");
        auto tok = cuset::tokenizer_load(dir);
        cuset::ChatFormatter fmt(*tok, cuset::ChatFormatOptions{}, dir);
        try {
            fmt.format(conv);
            ADD_FAILURE() << "trained on content the template rewrote";
        } catch (const cuset::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("sample s1"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("cannot be located"), std::string::npos) << e.what();
        }
    }
    {
        // No special token after the answer, none when the conversation goes on: the EOS ends it,
        // appended after the rendering; without an EOS the sample is refused.
        const std::string dir = copy_with_template("no_eot", "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}");
        auto tok = cuset::tokenizer_load(dir);
        cuset::ChatFormatter fmt(*tok, cuset::ChatFormatOptions{}, dir);
        cuset::ChatFormatter::Rendered r;
        std::vector<std::pair<uint32_t, uint32_t>> offs;
        cuset::FormattedSample f = fmt.format(conv, &r, &offs);
        EXPECT_EQ(r.text, "user: hi\nassistant: ok\n");
        ASSERT_GE(tok->eos_id(), 0);
        EXPECT_EQ(f.ids.back(), tok->eos_id());
        std::string trained;
        for (size_t k = 0; k < f.ids.size(); ++k)
            if (f.trainable[k])
                trained += offs[k].second > offs[k].first ? r.text.substr(offs[k].first, offs[k].second - offs[k].first)
                                                          : tok->id_to_token(f.ids[k]);
        EXPECT_EQ(trained, "assistant: ok\n<|im_end|>");

        json cfg = load(dir + "/tokenizer_config.json");
        cfg.erase("eos_token");
        write_file(dir + "/tokenizer_config.json", cfg.dump());
        auto tok2 = cuset::tokenizer_load(dir);
        cuset::ChatFormatter fmt2(*tok2, cuset::ChatFormatOptions{}, dir);
        try {
            fmt2.format(conv);
            ADD_FAILURE() << "trained without an end of turn";
        } catch (const cuset::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("no special token after assistant message 1"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("no eos_token"), std::string::npos) << e.what();
        }
    }
}

// data.chat_template names a template file; data.chat_template_kwargs reach the template.
TEST(ChatTemplate, TemplateFileAndKwargs) {
    const std::string dir = scratch_dir("chat_template_file");
    write_file(dir + "/t.jinja",
               "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
               "{% if add_generation_prompt %}<|im_start|>assistant\n{{ prefix }}{% endif %}");
    auto tok = cuset::tokenizer_load(kGolden + "/qwen2.5");
    cuset::ChatFormatOptions o;
    o.format = "template";
    o.chat_template = dir + "/t.jinja";
    o.template_kwargs = {{"prefix", "P"}};
    cuset::ChatFormatter fmt(*tok, o, kGolden + "/qwen2.5");
    EXPECT_EQ(fmt.template_source(), dir + "/t.jinja");
    cuset::Conversation c{"g", {{"user", "hi"}}};
    EXPECT_EQ(fmt.generation_prompt(c), tok->encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nP").ids);
    o.chat_template = dir + "/missing.jinja";
    EXPECT_THROW(cuset::ChatFormatter(*tok, o, kGolden + "/qwen2.5"), cuset::UsageError);
}

}  // namespace
