// The training job through the real binary on a very small Qwen2 model (tests/golden/tiny_model.py,
// made with transformers and tokenizers): bit-exact continuation after resume (sft and cuset, with
// accumulation and shuffling), SIGTERM then --resume auto reaching the same weights, refusal of an
// incompatible checkpoint, the non-finite stop (exit 4), split invariance of the step loss, and a
// checkpoint that transformers loads to identical tensors.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using nlohmann::json;

namespace {

// The tiny run of `method` under `dir` (dir/<method>.yaml); other keys are changed by --set.
std::string write_config(const std::string& dir, const std::string& method, int max_steps, int every) {
    return cuset::test::write_tiny_run_config(dir + "/" + method + ".yaml", dir,
                                              {{"objective.method", method},
                                               {"train.max_steps", std::to_string(max_steps)},
                                               {"checkpoint.every", std::to_string(every)}});
}

std::string weights(const std::string& ckpt) { return read_file(ckpt + "/model.safetensors"); }

// Every file of two checkpoint folders is byte-identical (the same file names on both sides);
// config.yaml is compared without its run.name line, trainer_state.json and the optimizer files
// without the checkpoint's random identity (save_id): the things two runs' folders differ in.
void expect_identical_checkpoints(const std::string& a, const std::string& b) {
    std::vector<std::string> names_a, names_b;
    for (auto& e : fs::directory_iterator(a)) names_a.push_back(e.path().filename().string());
    for (auto& e : fs::directory_iterator(b)) names_b.push_back(e.path().filename().string());
    std::sort(names_a.begin(), names_a.end());
    std::sort(names_b.begin(), names_b.end());
    ASSERT_EQ(names_a, names_b);
    auto without_name = [](std::string text) {
        std::string out, line;
        std::istringstream in(text);
        while (std::getline(in, line))
            if (line.find("  name:") != 0) out += line + "\n";
        return out;
    };
    for (const std::string& n : names_a) {
        std::string x = read_file(a + "/" + n), y = read_file(b + "/" + n);
        if (n == "config.yaml") x = without_name(x), y = without_name(y);
        if (n == "trainer_state.json") {
            nlohmann::json jx = nlohmann::json::parse(x), jy = nlohmann::json::parse(y);
            jx.erase("save_id"), jy.erase("save_id");
            x = jx.dump(), y = jy.dump();
        }
        if (n.rfind("optimizer", 0) == 0 && n.size() > 12 && n.substr(n.size() - 12) == ".safetensors")
            x = cuset::test::safetensors_without_save_id(a + "/" + n), y = cuset::test::safetensors_without_save_id(b + "/" + n);
        EXPECT_TRUE(x == y) << n << " differs between " << a << " and " << b;
    }
}

void expect_exact_resume(const std::string& method) {
    std::string dir = scratch_dir("trainer-resume-" + method);
    std::string cfg = write_config(dir, method, 6, 3);
    auto a = run_cuset("--config " + cfg + " --run-name a");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    // Continue from the step-3 checkpoint in a fresh process and run folder.
    fs::create_directories(dir + "/b");
    fs::copy(dir + "/a/checkpoint-0000003", dir + "/b/checkpoint-0000003", fs::copy_options::recursive);
    auto b = run_cuset("--config " + cfg + " --run-name b --resume auto");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    auto ma = cuset::test::read_metrics(dir + "/a");
    auto mb = cuset::test::read_metrics(dir + "/b");
    ASSERT_EQ(ma.size(), 6u);
    ASSERT_EQ(mb.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(mb[i]["step"], ma[i + 3]["step"]);
        // Bit-identical continuation: the same doubles, not merely close.
        EXPECT_EQ(mb[i]["loss"].get<double>(), ma[i + 3]["loss"].get<double>()) << "step " << ma[i + 3]["step"];
        EXPECT_EQ(mb[i]["grad_norm"].get<double>(), ma[i + 3]["grad_norm"].get<double>());
        EXPECT_EQ(mb[i]["lr"].get<double>(), ma[i + 3]["lr"].get<double>());
    }
    std::string wa = weights(dir + "/a/checkpoint-0000006");
    ASSERT_FALSE(wa.empty());
    EXPECT_TRUE(wa == weights(dir + "/b/checkpoint-0000006")) << "final weights differ";
    EXPECT_TRUE(cuset::test::safetensors_without_save_id(dir + "/a/checkpoint-0000006/optimizer.safetensors") ==
                cuset::test::safetensors_without_save_id(dir + "/b/checkpoint-0000006/optimizer.safetensors"));
}

}  // namespace

TEST(Trainer, ExactResumeSft) { expect_exact_resume("sft"); }
TEST(Trainer, ExactResumeCuset) { expect_exact_resume("cuset"); }

TEST(Trainer, SummaryMetricsAndLossFalls) {
    std::string dir = scratch_dir("trainer-summary");
    std::string cfg = write_config(dir, "cuset", 12, 0);
    auto r = run_cuset("--config " + cfg + " --run-name s");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json s = json::parse(read_file(dir + "/s/summary.json"));
    EXPECT_EQ(s["steps"], 12);
    EXPECT_EQ(s["checkpoint"], dir + "/s/checkpoint-0000012");
    // Twelve steps at lr 1e-2 on ten samples: the evaluation loss on the same data must fall.
    EXPECT_LT(s["eval_after"]["eval_ce"].get<double>(), s["eval_before"]["eval_ce"].get<double>());
    EXPECT_GT(s["kept_fraction"].get<double>(), 0.0);
    EXPECT_LE(s["kept_fraction"].get<double>(), 1.0);
    EXPECT_GE(s["weight"]["min"].get<double>(), 1.0);  // w = 1 + alpha * d with d in [0, 1]
    EXPECT_LE(s["weight"]["max"].get<double>(), 2.0);
    auto m = cuset::test::read_metrics(dir + "/s");
    ASSERT_EQ(m.size(), 12u);
    for (const json& j : m) {
        EXPECT_TRUE(j["loss"].is_number());
        EXPECT_GT(j["tokens_per_s"].get<double>(), 0.0);
    }
    EXPECT_TRUE(fs::exists(dir + "/s/train.log"));
    EXPECT_TRUE(fs::exists(dir + "/s/config.yaml"));
}

TEST(Trainer, ExistingRunNeedsResumeAndIncompatibleResumeIsRefused) {
    std::string dir = scratch_dir("trainer-refuse");
    std::string cfg = write_config(dir, "sft", 2, 1);
    ASSERT_EQ(run_cuset("--config " + cfg + " --run-name r").exit_code, 0);
    auto again = run_cuset("--config " + cfg + " --run-name r");
    EXPECT_EQ(again.exit_code, 2);
    EXPECT_NE(again.err.find("already holds checkpoints"), std::string::npos) << again.err;
    auto other = run_cuset("--config " + cfg + " --run-name r --resume auto --set train.lr=0.5");
    EXPECT_EQ(other.exit_code, 3);
    EXPECT_NE(other.err.find("different configuration"), std::string::npos) << other.err;
    auto missing = run_cuset("--config " + cfg + " --run-name r --resume " + dir + "/nope");
    EXPECT_EQ(missing.exit_code, 3);
    EXPECT_NE(missing.err.find("not a complete checkpoint"), std::string::npos) << missing.err;
}

TEST(Trainer, SigtermSavesThenResumeMatchesUninterrupted) {
    std::string dir = scratch_dir("trainer-sigterm");
    std::string cfg = write_config(dir, "cuset", 240, 0);
    auto full = run_cuset("--config " + cfg + " --run-name full");
    ASSERT_EQ(full.exit_code, 0) << full.err;

    // Wait for the first completed step (the metrics file is polled every 10 ms), then ask it to
    // stop: 239 steps remain, far more than run in that time (the signal at an exactly known step
    // is TrainerSignal's, in process).
    auto cut = cuset::test::run_cuset_then_sigterm(cfg, dir, "cut", 1, 120);
    int status = cut.status;
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_LT(cut.steps, 240u) << "the run finished before the signal arrived";
    EXPECT_EQ(WEXITSTATUS(status), 75) << read_file(dir + "/cut.err");
    EXPECT_NE(read_file(dir + "/cut.err").find("--resume auto"), std::string::npos);
    int n_ckpt = 0;
    for (auto& e : fs::directory_iterator(dir + "/cut"))
        n_ckpt += e.path().filename().string().rfind("checkpoint-", 0) == 0;
    ASSERT_EQ(n_ckpt, 1);  // the one written on the signal
    auto resumed = run_cuset("--config " + cfg + " --run-name cut --resume auto");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_TRUE(weights(dir + "/full/checkpoint-0000240") == weights(dir + "/cut/checkpoint-0000240"))
        << "interrupted + resumed run ended with other weights";
    // Weights, optimizer moments, the generator state and the trainer state, byte for byte.
    expect_identical_checkpoints(dir + "/full/checkpoint-0000240", dir + "/cut/checkpoint-0000240");
}

// The generators are seeded from train.seed: two runs of one configuration write byte-identical
// checkpoints, the saved generator state (rng.cpu) included.
TEST(Trainer, IdenticalRunsWriteIdenticalCheckpoints) {
    std::string dir = scratch_dir("trainer-reproducible");
    std::string cfg = write_config(dir, "cuset", 4, 4);
    for (const char* name : {"one", "two"}) {
        auto r = run_cuset("--config " + cfg + " --run-name " + name);
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    expect_identical_checkpoints(dir + "/one/checkpoint-0000004", dir + "/two/checkpoint-0000004");
}

TEST(Trainer, NonFiniteStepsStopWithExit4) {
    std::string dir = scratch_dir("trainer-nan");
    // A copy of the model whose final norm weight is NaN: every step is non-finite.
    std::string model = dir + "/nan-model";
    fs::copy(cuset::test::tiny_model_dir(), model, fs::copy_options::recursive);
    auto poison = run_command(std::string(CUSET_PYTHON) +
                              " -c \"import sys, torch; from safetensors.torch import load_file, save_file; "
                              "p=sys.argv[1]+'/model.safetensors'; t=load_file(p); "
                              "t['model.norm.weight'][0]=float('nan'); save_file(t, p, metadata={'format':'pt'})\" " +
                              model);
    ASSERT_EQ(poison.exit_code, 0) << poison.err;
    std::string cfg = write_config(dir, "sft", 10, 0);
    auto r = run_cuset("--config " + cfg + " --run-name n --set model.path=" + model + " --set train.max_bad_steps=3");
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("3 non-finite steps in a row"), std::string::npos) << r.err;
}

TEST(Trainer, StepLossIndependentOfMicroBatchSplit) {
    // The step loss and gradient norm are global over the step (docs/method.md sec. 4): 4 x 1, 2 x 2
    // and 1 x 4 agree up to fp32 summation order (relative 1e-5).
    std::string dir = scratch_dir("trainer-split");
    for (const char* method : {"sft", "cuset"}) {
        std::string cfg = write_config(dir, method, 1, 0);
        std::vector<json> first;
        for (auto [mb, acc] : std::vector<std::pair<int, int>>{{4, 1}, {2, 2}, {1, 4}}) {
            std::string name = std::string(method) + "-" + std::to_string(mb);
            auto r = run_cuset("--config " + cfg + " --run-name " + name + " --set train.micro_batch_size=" +
                               std::to_string(mb) + " --set train.grad_accum=" + std::to_string(acc));
            ASSERT_EQ(r.exit_code, 0) << r.err;
            first.push_back(cuset::test::read_metrics(dir + "/" + name)[0]);
        }
        for (int i = 1; i < 3; ++i) {
            double l0 = first[0]["loss"], li = first[i]["loss"];
            double g0 = first[0]["grad_norm"], gi = first[i]["grad_norm"];
            CUSET_EXPECT_NEAR(li, l0, 1e-5 * std::abs(l0)) << method;
            CUSET_EXPECT_NEAR(gi, g0, 1e-5 * std::abs(g0)) << method;
        }
    }
}

TEST(Trainer, CheckpointLoadsInTransformers) {
    std::string dir = scratch_dir("trainer-hf");
    std::string cfg = write_config(dir, "cuset", 2, 0);
    ASSERT_EQ(run_cuset("--config " + cfg + " --run-name h").exit_code, 0);
    auto r = run_command(std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/golden/check_hf_checkpoint.py " +
                         dir + "/h/checkpoint-0000002");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("identical"), std::string::npos) << r.out;
}
