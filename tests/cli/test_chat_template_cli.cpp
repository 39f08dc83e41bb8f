// `data.chat_format: template` through the real binary: a short training run of the tiny model
// with its own chat template, `data show` naming the template and the mask's source, the tokenised
// cache keyed by the template's variables, a model folder whose template uses an unsupported
// construct refused with exit 3 and one line naming the file, the template line and the construct;
// `tokenize --render` printing byte for byte what transformers' apply_chat_template returns for
// real templates (tests/golden/template_parity.py), and hostile templates ending in one line.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::read_metrics;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::tiny_model_dir;
using cuset::test::write_file;
using cuset::test::write_tiny_run_config;

namespace {

const std::string kParity = std::string(CUSET_TEST_WORK) + "/golden/template_parity";

nlohmann::ordered_json parity_fixture() {
    std::ifstream f(kParity + "/parity.json");
    if (!f) throw std::runtime_error("missing fixture " + kParity + "/parity.json (run golden_template_parity first)");
    std::stringstream ss;
    ss << f.rdbuf();
    return nlohmann::ordered_json::parse(ss.str());
}

TEST(ChatTemplateCli, TrainsWithTheModelsOwnTemplate) {
    const std::string dir = scratch_dir("chat_template_cli_train");
    const std::string cfg = write_tiny_run_config(dir + "/run.yaml", dir + "/runs", {{"data.chat_format", "template"}});
    auto r = run_cuset("--config '" + cfg + "' --run-name t");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_metrics(dir + "/runs/t").size(), 2u);

    r = run_cuset("data show --config '" + cfg + "' --index 0 --color never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("chat format template"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("template " + tiny_model_dir() + "/tokenizer_config.json | trainable mask from the assistant "
                         "messages' spans"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("[[response T]]"), std::string::npos) << r.out;
}

// The tokenised cache of a template run is keyed by the template's variables: other kwargs, other
// cache files; the same kwargs, the same files.
TEST(ChatTemplateCli, CacheKeyFollowsTheTemplateVariables) {
    const std::string dir = scratch_dir("chat_template_cli_cache");
    auto n_cached = [&] {
        size_t n = 0;
        if (fs::exists(dir + "/cache"))
            for (const auto& e : fs::directory_iterator(dir + "/cache")) n += e.path().extension() == ".bin";
        return n;
    };
    auto run = [&](const std::string& kwargs, const std::string& name) {
        const std::string cfg = write_tiny_run_config(dir + "/" + name + ".yaml", dir + "/runs",
                                                      {{"data.chat_format", "template"},
                                                       {"data.cache_dir", "'" + dir + "/cache'"},
                                                       {"data.chat_template_kwargs", "'" + kwargs + "'"}});
        auto r = run_cuset("--config '" + cfg + "' --run-name " + name);
        ASSERT_EQ(r.exit_code, 0) << r.err;
    };
    run("{\"x\": 1}", "a");
    const size_t first = n_cached();
    ASSERT_GE(first, 1u);
    run("{\"x\": 2}", "b");
    EXPECT_EQ(n_cached(), 2 * first);
    run("{\"x\": 2}", "c");
    EXPECT_EQ(n_cached(), 2 * first);
}

TEST(ChatTemplateCli, UnsupportedConstructIsRefused) {
    const std::string dir = scratch_dir("chat_template_cli_unsupported");
    const std::string model = dir + "/model";
    fs::copy(tiny_model_dir(), model, fs::copy_options::recursive);
    nlohmann::json tc = nlohmann::json::parse(read_file(model + "/tokenizer_config.json"));
    tc["chat_template"] = "{% for m in messages %}{{ m.content }}{% endfor %}\n{{ messages | map(attribute='role') | join | wordwrap(5) }}";
    write_file(model + "/tokenizer_config.json", tc.dump());
    const std::string cfg =
        write_tiny_run_config(dir + "/run.yaml", dir + "/runs", {{"model.path", "'" + model + "'"}, {"data.chat_format", "template"}});
    auto r = run_cuset("data show --config '" + cfg + "' --index 0 --color never");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(model + "/tokenizer_config.json:2: unsupported construct: filter 'wordwrap'"), std::string::npos)
        << r.err;
    EXPECT_EQ(cuset::test::count_of(r.err, "\n"), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/runs"));
}

// `tokenize --render` prints what apply_chat_template(tokenize=False) returns, byte for byte, so a
// user can diff it with any other renderer: real templates with a generation prompt, tools, a
// {% call %} block and Markup escaping (functionary v3.1, MiniCPM3, Qwen3).
TEST(ChatTemplateCli, RenderPrintsWhatTransformersRenders) {
    const nlohmann::ordered_json fx = parity_fixture();
    const std::string dir = scratch_dir("chat_template_cli_render");
    const std::string tok = fx["tokenizer"].get<std::string>();
    size_t compared = 0;
    for (const auto& t : fx["templates"]) {
        const std::string name = t["name"].get<std::string>();
        if (name != "meetkai-functionary-medium-v3.1" && name != "openbmb-MiniCPM3-4B" && name != "Qwen-Qwen3-0.6B") continue;
        for (const auto& c : t["cases"]) {
            if (!c.contains("text")) continue;
            nlohmann::ordered_json rec = {{"id", c["id"]}, {"messages", c["messages"]}};
            if (!c["tools"].is_null()) rec["tools"] = c["tools"];
            write_file(dir + "/conv.jsonl", rec.dump() + "\n");
            const bool agp = c["add_generation_prompt"].get<bool>();
            auto r = run_cuset("tokenize --tokenizer '" + tok + "' --chat-format template --chat-template '" +
                               t["path"].get<std::string>() + "' --render" + (agp ? " --add-generation-prompt" : "") + " '" +
                               dir + "/conv.jsonl'");
            ASSERT_EQ(r.exit_code, 0) << name << " " << c["id"] << ": " << r.err;
            EXPECT_EQ(r.out, c["text"].get<std::string>()) << name << " " << c["id"];
            ++compared;
        }
    }
    EXPECT_GE(compared, 15u);
}

// Hostile templates through the binary: each ends with exit 3 and one line on stderr naming the
// file and the template line, in bounded time (they crashed, hung or exhausted memory before).
TEST(ChatTemplateCli, HostileTemplateEndsInOneLine) {
    const std::string dir = scratch_dir("chat_template_cli_hostile");
    const std::string model = dir + "/model";
    fs::create_directories(model);
    fs::copy_file(parity_fixture()["tokenizer"].get<std::string>() + "/tokenizer.json", model + "/tokenizer.json");
    write_file(dir + "/conv.jsonl", R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]})"
                                    "\n");
    const std::pair<std::string, std::string> cases[] = {
        {"{{ messages[0].content }}\n{{ (-9223372036854775807 - 1) // -1 }}", ":2: integer overflow"},
        {"{{ messages[0].content }}\n{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}",
         ":2: nesting deeper than 256 levels"},
        {"{% for i in range(99999) %}\n{% for j in range(99999) %}{% endfor %}{% endfor %}",
         ":2: rendering takes more than 20000000 steps"},
        {"x\n{{ 'a' * 10**10 }}", ":2: a string of 10000000000 bytes is longer than 67108864"},
        {"{{ raise_exception('line\\n' * 200000) }}", ":1: raise_exception: line\\nline\\n"},
    };
    for (const auto& [tmpl, want] : cases) {
        nlohmann::json tc = {{"chat_template", tmpl}, {"eos_token", "</s>"}};
        write_file(model + "/tokenizer_config.json", tc.dump());
        const auto t0 = std::chrono::steady_clock::now();
        auto r = run_cuset("tokenize --tokenizer '" + model + "' --chat-format template --render '" + dir + "/conv.jsonl'");
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_EQ(r.exit_code, 3) << want << ": " << r.err;
        EXPECT_NE(r.err.find(model + "/tokenizer_config.json" + want), std::string::npos) << r.err.substr(0, 400);
        EXPECT_EQ(cuset::test::count_of(r.err, "\n"), 1) << r.err.substr(0, 400);
        EXPECT_LT(r.err.size(), 800u);
        EXPECT_LT(seconds, 120.0) << want;  // seconds in a release build
    }
}

}  // namespace
