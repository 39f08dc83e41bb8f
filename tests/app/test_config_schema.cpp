// The configuration's schema (app/config_schema.h): defaults, file values, --set overrides, every
// class of bad input and the cross-key rules, through the library API (the binary-level checks are
// in test_cli.cpp); and every key the sources quote is one of the schema's.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cuset/app/config_schema.h"
#include "cuset/core/error.h"
#include "cuset/rl/grpo.h"
#include "cuset/text/chat_format.h"
#include "test_util.h"

using cuset::Config;
using cuset::UsageError;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

std::string write_yaml(const std::string& name, const std::string& text) {
    // ctest runs the cases of this program in parallel processes: a folder per process and call.
    static int calls = 0;
    std::string dir = scratch_dir("config-" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(calls++));
    std::string path = dir + "/c.yaml";
    write_file(path, text);
    return path;
}

// The UsageError message for loading `text`, or "" when it loads.
std::string load_error(const std::string& text, const std::vector<cuset::Override>& sets = {}) {
    std::string path = write_yaml("err", text);
    try {
        cuset::config_load(path, sets);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

// The names in the ordinary string literals of C++ source `text` that look like a key: a section
// of the schema, then '.'-separated lowercase words ("train.lr", "objective.mask." as a prefix).
// Comments, preprocessor lines and raw strings (the embedded Python and CUDA programs) are not
// read; file names (".json", ".h", ...) and the Hugging Face weight names ("model.norm.weight")
// are not keys.
std::vector<std::string> key_like_names(const std::string& text, const std::set<std::string>& sections) {
    std::vector<std::string> literals;
    size_t i = 0;
    const size_t n = text.size();
    bool line_start = true;
    while (i < n) {
        const char c = text[i];
        if (c == '\n') {
            line_start = true;
            ++i;
        } else if (c == ' ' || c == '\t') {
            ++i;
        } else if (line_start && c == '#') {
            i = std::min(n, text.find('\n', i));
        } else if (text.compare(i, 2, "//") == 0) {
            i = std::min(n, text.find('\n', i));
        } else if (text.compare(i, 2, "/*") == 0) {
            const size_t e = text.find("*/", i + 2);
            i = e == std::string::npos ? n : e + 2;
        } else if (c == 'R' && i + 1 < n && text[i + 1] == '"' && (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_') || text[i - 1] == '8' || text[i - 1] == 'u' || text[i - 1] == 'U' || text[i - 1] == 'L')) {
            const size_t open = text.find('(', i + 2);
            const std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
            const size_t e = text.find(close, open);
            i = e == std::string::npos ? n : e + close.size();
            line_start = false;
        } else if (c == '"' || c == '\'') {
            const bool is_char = c == '\'';
            if (is_char && i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_')) {
                ++i;  // a digit separator (1'000)
                continue;
            }
            size_t e = i + 1;
            while (e < n && text[e] != c && text[e] != '\n') e += text[e] == '\\' ? 2 : 1;
            if (!is_char) literals.push_back(text.substr(i + 1, std::min(e, n) - i - 1));
            i = e + 1;
            line_start = false;
        } else {
            ++i;
            line_start = false;
        }
    }
    static const std::set<std::string> kFileTypes = {"h", "json", "jsonl", "svg", "html", "log", "safetensors"};
    static const std::vector<std::string> kWeights = {"model.layers.", "model.embed_tokens.", "model.norm."};
    auto word = [](char ch) { return std::islower(static_cast<unsigned char>(ch)) || std::isdigit(static_cast<unsigned char>(ch)) || ch == '_'; };
    std::vector<std::string> names;
    for (const std::string& lit : literals) {
        for (size_t a = 0; a < lit.size(); ++a) {
            if (a > 0 && (word(lit[a - 1]) || std::isupper(static_cast<unsigned char>(lit[a - 1])) || lit[a - 1] == '.')) continue;
            size_t b = a;
            while (b < lit.size() && (word(lit[b]) || lit[b] == '.')) ++b;
            std::string name = lit.substr(a, b - a);
            a = b;
            const size_t dot = name.find('.');
            if (dot == std::string::npos || dot + 1 == name.size() || sections.count(name.substr(0, dot)) == 0) continue;
            if (kFileTypes.count(name.substr(name.rfind('.') + 1))) continue;
            if (std::any_of(kWeights.begin(), kWeights.end(), [&](const std::string& w) { return (name + ".").rfind(w, 0) == 0; }))
                continue;
            names.push_back(name);
        }
    }
    return names;
}

std::set<std::string> top_sections() {
    std::set<std::string> s;
    for (const std::string& k : cuset::config_keys()) s.insert(k.substr(0, k.find('.')));
    return s;
}

}  // namespace

TEST(Config, DefaultsFollowMethodSpec) {
    Config c = cuset::config_load("", {});
    // The defaults of docs/method.md.
    EXPECT_EQ(c.objective.method, "cuset");
    EXPECT_FALSE(c.objective.loss.cached_confidence);
    EXPECT_EQ(c.objective.loss.threshold_mode, cuset::ThresholdMode::kSampleQuantile);
    EXPECT_DOUBLE_EQ(c.objective.loss.q, 0.2);
    EXPECT_DOUBLE_EQ(c.objective.loss.drop_weight, 0.0);
    EXPECT_TRUE(c.objective.loss.mask_confidence);
    EXPECT_TRUE(c.objective.loss.mask_sensitivity);
    EXPECT_EQ(c.objective.loss.window, 256);
    EXPECT_DOUBLE_EQ(c.objective.loss.alpha, 1.0);
    EXPECT_DOUBLE_EQ(c.objective.loss.focal_gamma, 2.0);
    EXPECT_TRUE(c.tagger.device_functions);
    EXPECT_EQ(c.analysis.window, 64);
    EXPECT_DOUBLE_EQ(c.analysis.low_threshold, 0.5);
    EXPECT_DOUBLE_EQ(c.analysis.overlap, 0.5);
    EXPECT_EQ(c.analysis.bins, 20);
}

TEST(Config, FileValuesAndNestedSections) {
    std::string path = write_yaml("file", R"(
model:
  path: /models/x
objective:
  method: sft
  mask:
    threshold:
      mode: fixed
      value: 0.7
  region:
    alpha: 0.25
train:
  micro_batch_size: 8
  lr: 3e-4
  decay_norm_and_bias: yes
)");
    Config c = cuset::config_load(path, {});
    EXPECT_EQ(c.model.path, "/models/x");
    EXPECT_EQ(c.objective.method, "sft");
    EXPECT_EQ(c.objective.loss.threshold_mode, cuset::ThresholdMode::kFixed);
    EXPECT_DOUBLE_EQ(c.objective.loss.threshold_value, 0.7);
    EXPECT_DOUBLE_EQ(c.objective.loss.alpha, 0.25);
    EXPECT_EQ(c.train.micro_batch_size, 8);
    EXPECT_DOUBLE_EQ(c.train.lr, 3e-4);
    EXPECT_TRUE(c.train.decay_norm_and_bias);
    EXPECT_EQ(c.source_file, path);
}

TEST(Config, OverridesApplyAfterFileInOrder) {
    std::string path = write_yaml("ovr", "train:\n  lr: 0.1\n");
    Config c = cuset::config_load(path, {cuset::override_parse("train.lr=0.5"),
                                         cuset::override_parse("objective.region.enabled=false"),
                                         cuset::override_parse("train.lr=0.25"),
                                         cuset::override_parse("data.system_prompt='a=b'")});
    EXPECT_DOUBLE_EQ(c.train.lr, 0.25);
    EXPECT_FALSE(c.objective.loss.region_enabled);
    EXPECT_EQ(c.data.system_prompt, "a=b");
}

TEST(Config, UnknownKeyNamesPathLineAndClosestKey) {
    std::string msg = load_error("objective:\n  mask:\n    treshold:\n      q: 0.3\n");
    EXPECT_NE(msg.find("c.yaml:3:5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'objective.mask.treshold.q'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'objective.mask.threshold.q'"), std::string::npos) << msg;
}

TEST(Config, UnknownTopLevelSection) {
    std::string msg = load_error("trian:\n  lr: 0.1\n");
    EXPECT_NE(msg.find("unknown key 'trian.lr'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'train.lr'"), std::string::npos) << msg;
}

TEST(Config, WrongTypeNamesKeyLineAndExpectedType) {
    std::string msg = load_error("train:\n  micro_batch_size: four\n");
    EXPECT_NE(msg.find("c.yaml:2:21"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'train.micro_batch_size' expects an integer"), std::string::npos) << msg;
    EXPECT_NE(load_error("train:\n  micro_batch_size: 1.5\n").find("expects an integer"),
              std::string::npos);
    EXPECT_NE(load_error("model:\n  activation_checkpointing: maybe\n").find("expects a boolean"),
              std::string::npos);
    EXPECT_NE(load_error("objective:\n  method: magic\n").find("one of cuset, sft, dft, focal"),
              std::string::npos);
    EXPECT_NE(load_error("train:\n  lr: [1, 2]\n").find("got a list"), std::string::npos);
}

TEST(Config, OutOfRangeNamesRange) {
    std::string msg = load_error("objective:\n  mask:\n    threshold:\n      q: 1.5\n");
    EXPECT_NE(msg.find("'objective.mask.threshold.q' = 1.5 is out of range [0, 1]"),
              std::string::npos)
        << msg;
    msg = load_error("train:\n  grad_accum: 0\n");
    EXPECT_NE(msg.find("'train.grad_accum' = 0 is out of range [1,"), std::string::npos) << msg;
}

TEST(Config, MalformedYamlHasLineAndColumn) {
    std::string msg = load_error("train:\n  lr: 0.1\n   bad: [\n");
    EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
    EXPECT_NE(msg.find("c.yaml:"), std::string::npos) << msg;
}

TEST(Config, UnreadableFile) {
    try {
        cuset::config_load("/nonexistent/dir/x.yaml", {});
        FAIL() << "expected an error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot read '/nonexistent/dir/x.yaml'"),
                  std::string::npos);
    }
}

TEST(Config, SetIsTypeCheckedLikeTheFile) {
    try {
        cuset::config_load("", {cuset::override_parse("train.lr=fast")});
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("--set train.lr: key 'train.lr' expects a number"),
                  std::string::npos)
            << e.what();
    }
    try {
        cuset::config_load("", {cuset::override_parse("objective.regoin.alpha=1")});
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("did you mean 'objective.region.alpha'"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(cuset::override_parse("no-equals-sign"), UsageError);
}

TEST(Config, CrossKeyRules) {
    EXPECT_NE(load_error("objective:\n  confidence:\n    source: cached\n")
                  .find("'objective.confidence.cache'"),
              std::string::npos);
    EXPECT_NE(load_error("train:\n  warmup_steps: 5\n  warmup_ratio: 0.1\n").find("use one"),
              std::string::npos);
    EXPECT_NE(load_error("train:\n  device: gpu\n").find("'train.device'"), std::string::npos);
    EXPECT_NE(load_error("data:\n  chat_template_kwargs: 'enable_thinking'\n").find("'data.chat_template_kwargs' expects a JSON object"),
              std::string::npos);
    EXPECT_NE(load_error("data:\n  chat_template_kwargs: '[1]'\n").find("'data.chat_template_kwargs'"), std::string::npos);
}

TEST(Config, OpenAiBackendNeedsAServerAndAModelName) {
    EXPECT_NE(load_error("generate:\n  backend: openai\n  served_model: m\n").find("'generate.url' must name"),
              std::string::npos);
    EXPECT_NE(load_error("generate:\n  backend: openai\n  url: 127.0.0.1:8000/v1\n  served_model: m\n")
                  .find("'generate.url' must be an http:// or https:// URL, got '127.0.0.1:8000/v1'"),
              std::string::npos);
    EXPECT_NE(load_error("generate:\n  backend: openai\n  url: http://h:1/v1\n").find("'generate.served_model'"),
              std::string::npos);
    EXPECT_NE(load_error("generate:\n  backend: vllm\n").find("'generate.backend'"), std::string::npos);
    EXPECT_NE(load_error("generate:\n  concurrency: 0\n").find("'generate.concurrency'"), std::string::npos);
    EXPECT_EQ(load_error("generate:\n  backend: openai\n  url: https://h/v1\n  served_model: m\n"), "");
    EXPECT_EQ(load_error("generate:\n  url: not checked when local\n"), "");
}

TEST(Config, PrintedYamlLoadsBackToTheSameConfig) {
    Config a = cuset::config_load("", {cuset::override_parse("train.lr=0.00012345"),
                                       cuset::override_parse("data.system_prompt=say \"hi\"\n"),
                                       cuset::override_parse("objective.method=focal")});
    std::string text = cuset::config_to_yaml(a);
    std::string path = write_yaml("roundtrip", text);
    Config b = cuset::config_load(path, {});
    EXPECT_EQ(cuset::config_to_yaml(b), text);
    EXPECT_EQ(cuset::config_hash(a), cuset::config_hash(b));
    EXPECT_DOUBLE_EQ(b.train.lr, 0.00012345);
    EXPECT_EQ(b.data.system_prompt, "say \"hi\"\n");
}

TEST(Config, HashIgnoresBookkeepingButNotTraining) {
    Config a = cuset::config_load("", {});
    Config b = cuset::config_load("", {cuset::override_parse("log.every=7"),
                                       cuset::override_parse("run.name=x"),
                                       cuset::override_parse("train.device=cpu")});
    Config c = cuset::config_load("", {cuset::override_parse("objective.region.alpha=2")});
    EXPECT_EQ(cuset::config_hash(a), cuset::config_hash(b));
    EXPECT_NE(cuset::config_hash(a), cuset::config_hash(c));
}

TEST(Config, ShippedConfigsLoad) {
    for (const char* name : {"demo", "qwen7b", "qwen7b-8x24gb", "qwen32b", "deepseek-coder-6.7b", "seed-coder-8b",
                             "qwen3-4b"}) {
        std::string path = std::string(CUSET_SOURCE_DIR) + "/configs/" + name + ".yaml";
        EXPECT_NO_THROW(cuset::config_load(path, {})) << path;
    }
}

// Every row's default is a value the row accepts: in its range, one of its choices.
TEST(Config, DefaultsMeetTheirRows) {
    for (const cuset::ConfigKey& k : cuset::config_schema().keys()) {
        if (k.kind == cuset::ConfigKind::kInt || k.kind == cuset::ConfigKind::kDouble) {
            const double v = k.kind == cuset::ConfigKind::kInt ? static_cast<double>(std::get<int64_t>(k.default_value))
                                                               : std::get<double>(k.default_value);
            EXPECT_TRUE(v >= k.lo && v <= k.hi) << k.path;
        }
        if (k.kind == cuset::ConfigKind::kEnum) {
            EXPECT_EQ(std::count(k.choices.begin(), k.choices.end(), std::get<std::string>(k.default_value)), 1) << k.path;
        }
    }
}

// model.lora.target_modules: one parse for the cross-key check and for lora_options_from.
TEST(Config, LoraTargetList) {
    EXPECT_EQ(cuset::lora_target_list(" q_proj, v_proj ,,down_proj\t"),
              (std::vector<std::string>{"q_proj", "v_proj", "", "down_proj"}));
    EXPECT_TRUE(cuset::lora_target_list("").empty());
    EXPECT_NE(load_error("model:\n  lora:\n    enabled: true\n    target_modules: q_proj,,v_proj\n").find("names ''"),
              std::string::npos);
    EXPECT_NE(load_error("model:\n  lora:\n    enabled: true\n    target_modules: q_proj, q_proj\n").find("twice"),
              std::string::npos);
    EXPECT_EQ(load_error("model:\n  lora:\n    target_modules: qkv\n"), "");  // checked only when enabled
}

// What the source scan below reads as a key, and what it leaves alone.
TEST(Config, KeyLikeNamesOfASource) {
    const std::string src = "#include \"cuset/train/objective.h\"\n"
                            "// a comment on \"train.lrr\"\n"
                            "throw UsageError(\"set train.lr=0.1 or objective.mask.\");\n"
                            "f(\"runs/x/eval.json\", \"model.layers.0.mlp.up_proj.weight\", 'c', 1'000);\n"
                            "const char* p = R\"PY(data.tobytes())PY\";\n"
                            "std::string s = \"analysis.windw\";\n";
    EXPECT_EQ(key_like_names(src, top_sections()),
              (std::vector<std::string>{"train.lr", "objective.mask.", "analysis.windw"}));
}

// A key quoted anywhere in src/ or include/ (a message naming it, an override the command line
// builds) is a key of the schema, or a section of keys.
TEST(Config, QuotedKeysAreInTheSchema) {
    const std::vector<std::string> keys = cuset::config_keys();
    const std::set<std::string> known(keys.begin(), keys.end());
    std::set<std::string> sections;
    for (const std::string& k : keys)
        for (size_t d = k.find('.'); d != std::string::npos; d = k.find('.', d + 1)) sections.insert(k.substr(0, d));
    const std::set<std::string> tops = top_sections();
    std::map<std::string, std::set<std::string>> unknown;  // name -> files
    int64_t quoted_elsewhere = 0;                          // keys quoted outside the schema's own file
    for (const char* top : {"src", "include"}) {
        for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(CUSET_SOURCE_DIR) + "/" + top)) {
            const std::string ext = e.path().extension().string();
            if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh")) continue;
            std::ifstream in(e.path());
            std::stringstream ss;
            ss << in.rdbuf();
            const bool schema_file = e.path().filename() == "config_schema.cpp";
            for (std::string name : key_like_names(ss.str(), tops)) {
                if (name.back() == '.') name.pop_back();
                if (known.count(name) || sections.count(name)) {
                    quoted_elsewhere += schema_file ? 0 : 1;
                    continue;
                }
                unknown[name].insert(std::filesystem::relative(e.path(), CUSET_SOURCE_DIR).string());
            }
        }
    }
    for (const auto& [name, files] : unknown) {
        std::string where;
        for (const std::string& f : files) where += " " + f;
        ADD_FAILURE() << "'" << name << "' is quoted in" << where << " but is no key of the schema"
                      << (cuset::config_closest_key(name).empty() ? "" : " (did you mean '" + cuset::config_closest_key(name) + "'?)");
    }
    EXPECT_GT(quoted_elsewhere, 50) << "the scan finds the keys the sources quote";
}

// objective.grpo.loss_type offers the loss types of rl/grpo.h's list, and docs/method.md's row of
// the key names each of them.
TEST(Config, GrpoLossTypesAreTheListsChoicesAndTheDocsRow) {
    const cuset::ConfigKey* key = nullptr;
    for (const cuset::ConfigKey& k : cuset::config_schema().keys())
        if (k.path == "objective.grpo.loss_type") key = &k;
    ASSERT_NE(key, nullptr);
    EXPECT_EQ(key->choices, cuset::grpo_loss_type_names());
    const std::string docs = cuset::test::read_file(std::string(CUSET_SOURCE_DIR) + "/docs/method.md");
    const size_t at = docs.find("| `objective.grpo.loss_type` |");
    ASSERT_NE(at, std::string::npos);
    const std::string row = docs.substr(at, docs.find('\n', at) - at);
    for (const std::string& name : cuset::grpo_loss_type_names())
        EXPECT_NE(row.find("`" + name + "`"), std::string::npos) << name << " is missing from: " << row;
}

// data.chat_format offers auto and the formats of text/chat_format's table, in its order.
TEST(Config, ChatFormatsAreTheTablesChoices) {
    const cuset::ConfigKey* key = nullptr;
    for (const cuset::ConfigKey& k : cuset::config_schema().keys())
        if (k.path == "data.chat_format") key = &k;
    ASSERT_NE(key, nullptr);
    std::vector<std::string> expected = cuset::chat_format_names();
    expected.insert(expected.begin(), "auto");
    EXPECT_EQ(key->choices, expected);
}
