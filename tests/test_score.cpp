// Scoring and analysis: probabilities equal to transformers', binary and JSONL score files
// agree, `analyze` counts exactly the valid tokens of the score file, and cached confidences
// reproduce the online objective at the first step and are refused for another model.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cuset/score.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

std::string config(const std::string& dir) {
    std::string path = dir + "/c.yaml";
    write_file(path, "model:\n  path: " + cuset::test::tiny_model_dir() +
                         "\n  dtype: float32\ndata:\n  train: tests/data/mini_sft.jsonl\n  eval: \"\"\n"
                         "  chat_format: chatml\n  max_seq_len: 160\n  cache_dir: \"\"\n"
                         "objective:\n  region:\n    window: 16\n  chunk_size: 64\n"
                         "train:\n  device: cpu\n  threads: 1\n  micro_batch_size: 3\n  grad_accum: 1\n"
                         "  max_steps: 1\n  seed: 3\nlog:\n  progress: never\nrun:\n  output_dir: " + dir + "\n");
    return path;
}

}  // namespace

TEST(Score, ProbabilitiesMatchTransformers) {
    std::string dir = scratch_dir("score-golden");
    auto r = run_cuset("score --config " + config(dir) + " --format jsonl --out " + dir + "/s.jsonl");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // fp32 logits through a 2-layer model computed by two implementations: probabilities agree
    // to a few fp32 ulps of the logits; 1e-5 absolute leaves room for the different summation order.
    auto c = run_command(std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/golden/check_scores.py " +
                         cuset::test::tiny_model_dir() + " " + dir + "/s.jsonl 1e-5");
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    EXPECT_NE(c.out.find("token probabilities"), std::string::npos) << c.out;
}

TEST(Score, BinaryAndJsonlAgree) {
    std::string dir = scratch_dir("score-formats");
    std::string cfg = config(dir);
    ASSERT_EQ(run_cuset("score --config " + cfg + " --out " + dir + "/s.bin").exit_code, 0);
    ASSERT_EQ(run_cuset("score --config " + cfg + " --format jsonl --out " + dir + "/s.jsonl").exit_code, 0);
    cuset::ScoreHeader hb, hj;
    auto b = cuset::score_load_all(dir + "/s.bin", &hb);
    auto j = cuset::score_load_all(dir + "/s.jsonl", &hj);
    EXPECT_TRUE(hb.key == hj.key);
    ASSERT_EQ(b.size(), 10u);
    ASSERT_EQ(b.size(), j.size());
    for (size_t i = 0; i < b.size(); ++i) {
        EXPECT_EQ(b[i].id, j[i].id);
        EXPECT_EQ(b[i].ids, j[i].ids);
        EXPECT_EQ(b[i].trainable, j[i].trainable);
        EXPECT_EQ(b[i].tag_bits, j[i].tag_bits);
        ASSERT_EQ(b[i].prob.size(), j[i].prob.size());
        for (size_t t = 1; t < b[i].prob.size(); ++t) EXPECT_EQ(b[i].prob[t], j[i].prob[t]);
    }
    cuset::ScoreFile f(dir + "/s.bin");
    EXPECT_EQ(f.find("mini-warp"), 4);
    EXPECT_EQ(f.read(4).ids, b[4].ids);
}

TEST(Analyze, CountsTheValidTokensOfTheScoreFile) {
    std::string dir = scratch_dir("analyze");
    std::string cfg = config(dir);
    ASSERT_EQ(run_cuset("score --config " + cfg + " --out " + dir + "/s.bin").exit_code, 0);
    auto r = run_cuset("analyze --config " + cfg + " --scores " + dir + "/s.bin --out " + dir + "/an");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("KS test"), std::string::npos) << r.out;
    int64_t valid = 0, sensitive = 0;
    for (const auto& rec : cuset::score_load_all(dir + "/s.bin"))
        for (size_t t = 1; t < rec.ids.size(); ++t)
            if (rec.trainable[t]) {
                ++valid;
                sensitive += rec.tag_bits[t] != 0;
            }
    json a = json::parse(read_file(dir + "/an/analysis.json"));
    std::string text = a.dump();
    EXPECT_NE(text.find(std::to_string(valid)), std::string::npos) << "valid count " << valid << " not in report";
    EXPECT_NE(text.find(std::to_string(sensitive)), std::string::npos);
    EXPECT_GT(sensitive, 0);
    EXPECT_LT(sensitive, valid);
    std::string svg = read_file(dir + "/an/analysis.svg");
    EXPECT_EQ(svg.rfind("<svg", 0) == 0 || svg.find("<svg") != std::string::npos, true);
}

TEST(Score, CachedConfidencesReproduceOnlineFirstStepAndRefuseOtherModels) {
    std::string dir = scratch_dir("score-cached");
    std::string cfg = config(dir);
    ASSERT_EQ(run_cuset("score --config " + cfg + " --out " + dir + "/s.bin").exit_code, 0);
    auto online = run_cuset("--config " + cfg + " --run-name online");
    ASSERT_EQ(online.exit_code, 0) << online.err;
    auto cached = run_cuset("--config " + cfg + " --run-name cached --set objective.confidence.source=cached "
                            "--set objective.confidence.cache=" + dir + "/s.bin");
    ASSERT_EQ(cached.exit_code, 0) << cached.err;
    auto first_loss = [&](const std::string& run) {
        std::ifstream f(dir + "/" + run + "/metrics.jsonl");
        for (std::string line; std::getline(f, line);) {
            json j = json::parse(line);
            if (j.contains("loss")) return j["loss"].get<double>();
        }
        return std::nan("");
    };
    // Step 1 sees the initial model either way: same confidences up to the summation order of
    // two forward passes (fp32), hence the same mask and weights and the same loss (1e-5 relative).
    double a = first_loss("online"), b = first_loss("cached");
    EXPECT_NEAR(a, b, 1e-5 * std::abs(a));
    // A score file of another model is refused with exit 3.
    std::string other = dir + "/other-model";
    fs::copy(cuset::test::tiny_model_dir(), other, fs::copy_options::recursive);
    write_file(other + "/config.json", read_file(other + "/config.json") + "\n");
    auto refused = run_cuset("--config " + cfg + " --run-name refused --set model.path=" + other +
                             " --set objective.confidence.source=cached --set objective.confidence.cache=" + dir + "/s.bin");
    EXPECT_EQ(refused.exit_code, 3);
    EXPECT_NE(refused.err.find("does not match this run: model"), std::string::npos) << refused.err;
}
