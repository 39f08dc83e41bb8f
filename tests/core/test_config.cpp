// Configuration schema: defaults, file values, --set overrides and every class of bad input,
// through the library API (the binary-level checks are in test_cli.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "cuset/core/config.h"
#include "cuset/core/error.h"
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

}  // namespace

TEST(Config, DefaultsFollowMethodSpec) {
    Config c = cuset::config_load("", {});
    // The defaults of docs/method.md.
    EXPECT_EQ(c.objective.method, "cuset");
    EXPECT_EQ(c.objective.confidence_source, "online");
    EXPECT_EQ(c.objective.threshold_mode, "sample_quantile");
    EXPECT_DOUBLE_EQ(c.objective.threshold_q, 0.2);
    EXPECT_DOUBLE_EQ(c.objective.drop_weight, 0.0);
    EXPECT_TRUE(c.objective.mask_confidence);
    EXPECT_TRUE(c.objective.mask_sensitivity);
    EXPECT_EQ(c.objective.region_window, 256);
    EXPECT_DOUBLE_EQ(c.objective.region_alpha, 1.0);
    EXPECT_DOUBLE_EQ(c.objective.focal_gamma, 2.0);
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
    EXPECT_EQ(c.objective.threshold_mode, "fixed");
    EXPECT_DOUBLE_EQ(c.objective.threshold_value, 0.7);
    EXPECT_DOUBLE_EQ(c.objective.region_alpha, 0.25);
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
    EXPECT_FALSE(c.objective.region_enabled);
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
