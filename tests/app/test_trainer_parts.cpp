// The trainer as a type driven in one process (train/trainer.h), its options made from a
// configuration as the train command makes them (app/options.h): a tiny run taken step by step and
// saved, a second Trainer resuming from that checkpoint, and the straight run, which must agree
// bit for bit: weights in memory and on disk, the optimizer state, the trainer state and every
// metrics line but its timings.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "cuset/app/options.h"
#include "cuset/core/error.h"
#include "cuset/core/signals.h"
#include "cuset/model/model.h"
#include "cuset/train/trainer.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;

namespace {

// The options of the tiny run `name` of `method` (6 steps, no periodic checkpoint) under `dir`.
cuset::TrainOptions tiny_options(const std::string& dir, const std::string& method, const std::string& name) {
    const std::string cfg_file = cuset::test::write_tiny_run_config(
        dir + "/" + name + ".yaml", dir,
        {{"objective.method", method}, {"train.max_steps", "6"}, {"run.name", name}});
    const cuset::Config cfg = cuset::config_load(cfg_file, {});
    return cuset::train_options_from(cfg, cuset::runtime_from(cfg));
}

// metrics.jsonl of a run folder without the timing fields, which no two runs share.
std::string metrics_without_timings(const std::string& run_dir) {
    const std::regex timing("\"(elapsed_s|step_time_s|tokens_per_s)\":[^,}]*,?");
    std::istringstream in(read_file(run_dir + "/metrics.jsonl"));
    std::string out, line;
    while (std::getline(in, line)) out += std::regex_replace(line, timing, "") + "\n";
    return out;
}

void expect_same_weights(cuset::Decoder& a, cuset::Decoder& b) {
    const auto pa = cuset::hf_named_parameters(a), pb = cuset::hf_named_parameters(b);
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t i = 0; i < pa.size(); ++i) {
        ASSERT_EQ(pa[i].first, pb[i].first);
        EXPECT_TRUE(at::equal(pa[i].second, pb[i].second)) << pa[i].first;
    }
}

class TrainerParts : public ::testing::TestWithParam<const char*> {};

}  // namespace

TEST_P(TrainerParts, ResumedInProcessEqualsTheStraightRun) {
    const std::string method = GetParam();
    const std::string dir = cuset::test::scratch_dir("trainer-parts-" + method);

    cuset::Trainer straight(tiny_options(dir, method, "straight"));
    ASSERT_EQ(straight.run(), 0);
    EXPECT_EQ(straight.state().step, 6);

    // Three steps taken one by one, then a checkpoint; this Trainer is left there.
    const cuset::TrainOptions part_opts = tiny_options(dir, method, "part");
    int64_t targets_at_3 = 0;
    {
        cuset::Trainer part(part_opts);
        part.begin();
        for (int i = 0; i < 3; ++i) {
            ASSERT_FALSE(part.done());
            part.step();
        }
        part.save_checkpoint();
        EXPECT_EQ(part.state().step, 3);
        targets_at_3 = part.state().targets_trained;
    }
    const std::string part_dir = dir + "/part";
    ASSERT_TRUE(fs::exists(part_dir + "/checkpoint-0000003/trainer_state.json"));
    EXPECT_GT(targets_at_3, 0);

    // A second Trainer of this process continues the run from that checkpoint.
    cuset::TrainOptions resume_opts = part_opts;
    resume_opts.resume = "auto";
    cuset::Trainer resumed(resume_opts);
    resumed.begin();
    EXPECT_EQ(resumed.state().step, 3);
    EXPECT_EQ(resumed.state().targets_trained, targets_at_3);
    while (!resumed.done()) resumed.step();
    resumed.end();

    expect_same_weights(straight.model(), resumed.model());
    EXPECT_EQ(resumed.state().targets_trained, straight.state().targets_trained);
    EXPECT_EQ(resumed.state().epoch, straight.state().epoch);
    EXPECT_EQ(resumed.state().step_in_epoch, straight.state().step_in_epoch);
    EXPECT_EQ(resumed.state().history, straight.state().history);
    const std::string a = dir + "/straight/checkpoint-0000006", b = part_dir + "/checkpoint-0000006";
    EXPECT_TRUE(read_file(a + "/model.safetensors") == read_file(b + "/model.safetensors")) << "final weights differ";
    EXPECT_TRUE(cuset::test::safetensors_without_save_id(a + "/optimizer.safetensors") ==
                cuset::test::safetensors_without_save_id(b + "/optimizer.safetensors"));
    // Steps 1-3 from the first Trainer and 4-6 from the second, with the evaluations before and
    // after: the straight run's lines.
    const std::string straight_metrics = metrics_without_timings(dir + "/straight");
    EXPECT_EQ(std::count(straight_metrics.begin(), straight_metrics.end(), '\n'), 8);
    EXPECT_EQ(metrics_without_timings(part_dir), straight_metrics);
    // The summary names what the state counts.
    const nlohmann::json summary = nlohmann::json::parse(read_file(part_dir + "/summary.json"));
    EXPECT_EQ(summary["targets_trained"], straight.state().targets_trained);
    EXPECT_EQ(nlohmann::json::parse(read_file(b + "/trainer_state.json"))["targets_trained"],
              straight.state().targets_trained);
}

// sft and cuset, and asft with its frozen reference model (the method table's reference column).
INSTANTIATE_TEST_SUITE_P(Methods, TrainerParts, ::testing::Values("sft", "cuset", "asft"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

// SIGTERM at a known step: the step in which it arrives is completed, a checkpoint is written,
// StoppedBySignal (exit 75) names --resume auto, and the resumed run ends as the straight one did.
// The signal is raised between steps 2 and 3, so no run can finish before it arrives.
TEST(TrainerSignal, SigtermAtAKnownStepSavesAndTheResumedRunEqualsTheStraightRun) {
    const std::string dir = cuset::test::scratch_dir("trainer-parts-sigterm");
    cuset::Trainer straight(tiny_options(dir, "cuset", "straight"));
    ASSERT_EQ(straight.run(), 0);

    const cuset::TrainOptions cut_opts = tiny_options(dir, "cuset", "cut");
    {
        cuset::Trainer cut(cut_opts);
        cut.begin();  // installs the SIGINT/SIGTERM handler
        cut.step();
        cut.step();
        ASSERT_EQ(::raise(SIGTERM), 0);
        try {
            cut.step();
            ADD_FAILURE() << "a step after SIGTERM did not stop the run";
        } catch (const cuset::StoppedBySignal& e) {
            EXPECT_EQ(e.code(), cuset::ExitCode::kSignal);
            EXPECT_NE(std::string(e.what()).find("at step 3"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("--resume auto"), std::string::npos) << e.what();
        }
        cuset::signals_reset();
        EXPECT_EQ(cut.state().step, 3);
    }
    int n_ckpt = 0;
    for (const auto& e : fs::directory_iterator(dir + "/cut"))
        n_ckpt += e.path().filename().string().rfind("checkpoint-", 0) == 0;
    EXPECT_EQ(n_ckpt, 1);  // the one written on the signal
    ASSERT_TRUE(fs::exists(dir + "/cut/checkpoint-0000003/trainer_state.json"));

    cuset::TrainOptions resume_opts = cut_opts;
    resume_opts.resume = "auto";
    cuset::Trainer resumed(resume_opts);
    ASSERT_EQ(resumed.run(), 0);
    expect_same_weights(straight.model(), resumed.model());
    const std::string a = dir + "/straight/checkpoint-0000006", b = dir + "/cut/checkpoint-0000006";
    EXPECT_TRUE(read_file(a + "/model.safetensors") == read_file(b + "/model.safetensors")) << "final weights differ";
    EXPECT_TRUE(cuset::test::safetensors_without_save_id(a + "/optimizer.safetensors") ==
                cuset::test::safetensors_without_save_id(b + "/optimizer.safetensors"));
    EXPECT_EQ(metrics_without_timings(dir + "/cut"), metrics_without_timings(dir + "/straight"));
}
