// `data.chat_format: template` through the real binary: a short training run of the tiny model
// with its own chat template, `data show` naming the template and the mask's source, the tokenised
// cache keyed by the template's variables, and a model
// folder whose template uses an unsupported construct refused with exit 3 and one line naming the
// file, the template line and the construct.
#include <gtest/gtest.h>

#include <filesystem>
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
    tc["chat_template"] = "{% for m in messages %}{{ m.content }}{% endfor %}\n{{ messages | groupby('role') }}";
    write_file(model + "/tokenizer_config.json", tc.dump());
    const std::string cfg =
        write_tiny_run_config(dir + "/run.yaml", dir + "/runs", {{"model.path", "'" + model + "'"}, {"data.chat_format", "template"}});
    auto r = run_cuset("data show --config '" + cfg + "' --index 0 --color never");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(model + "/tokenizer_config.json:2: unsupported construct: filter 'groupby'"), std::string::npos)
        << r.err;
    EXPECT_EQ(cuset::test::count_of(r.err, "\n"), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/runs"));
}

}  // namespace
