// Seeing a run, through the real binary on the tiny Qwen2 model: report.html written into the run
// folder, TensorBoard event files that PyPI's tensorboard reads back with every scalar of
// metrics.jsonl at its step, the checkpoints' README.md model card, and `--resume auto --extend`
// (refused without --extend with exit 3; with it, continuing from the checkpoint's exact state:
// with a constant schedule the extended run equals one configured that long from the start).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::read_metrics;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using nlohmann::json;

namespace {

// Like test_trainer's configuration, with a constant schedule after 2 warmup steps: the
// learning rate of a step does not depend on the run's length.
std::string write_config(const std::string& dir, int max_steps) {
    return cuset::test::write_tiny_run_config(dir + "/views.yaml", dir,
                                              {{"objective.method", "cuset"},
                                               {"train.max_steps", std::to_string(max_steps)},
                                               {"train.schedule", "constant"},
                                               {"checkpoint.every", "4"},
                                               {"log.tensorboard", "true"}});
}

json read_json(const std::string& path) { return json::parse(read_file(path)); }

}  // namespace

TEST(RunViews, ReportTensorBoardModelCardAndExtend) {
    std::string dir = scratch_dir("run-views");
    std::string cfg = write_config(dir, 8);

    // 12 steps configured from the start, and 8 steps to be extended to 12.
    auto full = run_cuset("--config " + cfg + " --run-name full --set train.max_steps=12");
    ASSERT_EQ(full.exit_code, 0) << full.err;
    auto ext = run_cuset("--config " + cfg + " --run-name ext");
    ASSERT_EQ(ext.exit_code, 0) << ext.err;

    // report.html in the run folder.
    std::string report = read_file(dir + "/ext/report.html");
    EXPECT_NE(report.find("<svg"), std::string::npos);
    EXPECT_NE(report.find("Learning rate"), std::string::npos);
    EXPECT_EQ(report.find("<script"), std::string::npos);

    // The model card of the last checkpoint.
    std::string card = read_file(dir + "/ext/checkpoint-0000008/README.md");
    json state = read_json(dir + "/ext/checkpoint-0000008/trainer_state.json");
    EXPECT_EQ(card.rfind("---\nbase_model: \"" + cuset::test::tiny_model_dir() + "\"\n", 0), 0u) << card;
    EXPECT_NE(card.find("\nlibrary_name: cuset\n"), std::string::npos);
    EXPECT_NE(card.find("tags:\n- cuset\n"), std::string::npos);
    EXPECT_NE(card.find("- steps: 8 of 8"), std::string::npos) << card;
    EXPECT_NE(card.find("`" + state["data_hash"].get<std::string>() + "`"), std::string::npos);
    EXPECT_NE(card.find("method: \"cuset\""), std::string::npos);
    EXPECT_NE(card.find("| after training |"), std::string::npos);
    EXPECT_NE(card.find("cuset-train --config " + cfg), std::string::npos) << card;
    EXPECT_EQ(card.find("--run-name ext"), std::string::npos);
    EXPECT_TRUE(fs::exists(dir + "/ext/checkpoint-0000004/README.md"));

    // A longer schedule without --extend: refused as any other configuration change, with a hint.
    auto refused = run_cuset("--config " + cfg + " --run-name ext --resume auto --set train.max_steps=12");
    EXPECT_EQ(refused.exit_code, 3) << refused.err;
    EXPECT_NE(refused.err.find("--extend"), std::string::npos) << refused.err;
    // --extend does not let anything else change.
    auto other = run_cuset("--config " + cfg + " --run-name ext --resume auto --extend --set train.max_steps=12 --set train.lr=0.5");
    EXPECT_EQ(other.exit_code, 3) << other.err;
    EXPECT_NE(other.err.find("different configuration"), std::string::npos) << other.err;
    auto extended = run_cuset("--config " + cfg + " --run-name ext --resume auto --extend --set train.max_steps=12");
    ASSERT_EQ(extended.exit_code, 0) << extended.err;

    auto mf = read_metrics(dir + "/full"), me = read_metrics(dir + "/ext");
    ASSERT_EQ(mf.size(), 12u);
    ASSERT_EQ(me.size(), 12u);
    for (size_t i = 0; i < 12; ++i) {
        EXPECT_EQ(me[i]["step"], mf[i]["step"]);
        // The exact state carried over: the same doubles, the first extended step included.
        EXPECT_EQ(me[i]["loss"].get<double>(), mf[i]["loss"].get<double>()) << "step " << mf[i]["step"];
        EXPECT_EQ(me[i]["grad_norm"].get<double>(), mf[i]["grad_norm"].get<double>()) << "step " << mf[i]["step"];
        EXPECT_EQ(me[i]["lr"].get<double>(), mf[i]["lr"].get<double>());
    }
    // Weights and AdamW moments as saved, at step 8 and at the end.
    for (const char* ck : {"checkpoint-0000008", "checkpoint-0000012"}) {
        EXPECT_TRUE(read_file(dir + "/full/" + ck + "/model.safetensors") == read_file(dir + "/ext/" + ck + "/model.safetensors"))
            << ck;
        EXPECT_TRUE(cuset::test::safetensors_without_save_id(dir + "/full/" + ck + "/optimizer.safetensors") ==
                    cuset::test::safetensors_without_save_id(dir + "/ext/" + ck + "/optimizer.safetensors"))
            << ck;
    }
    json summary = read_json(dir + "/ext/summary.json");
    EXPECT_EQ(summary["steps"], 12);
    EXPECT_EQ(summary["schedule_extended_at_step"], 8);
    EXPECT_EQ(summary["schedule_extended_from_total_steps"], 8);
    EXPECT_NE(read_file(dir + "/ext/train.log").find("schedule extended at step 8"), std::string::npos);
    EXPECT_NE(read_file(dir + "/ext/checkpoint-0000012/README.md").find("schedule extended at step 8 (from 8 to 12 steps)"),
              std::string::npos);
    // The extended checkpoint belongs to the new configuration: it resumes without --extend.
    auto again = run_cuset("--config " + cfg + " --run-name ext --resume auto --set train.max_steps=12");
    EXPECT_EQ(again.exit_code, 0) << again.err;

    // TensorBoard: both sessions' event files hold every number of metrics.jsonl at its step.
    int n_events = 0;
    for (auto& e : fs::directory_iterator(dir + "/ext"))
        n_events += e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
    EXPECT_EQ(n_events, 3);  // the first run, the extension, the resume that had nothing left to do
    for (const char* run : {"full", "ext"}) {
        auto r = run_command(std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/golden/check_tensorboard.py " +
                             dir + "/" + run + " " + dir + "/" + run + "/metrics.jsonl");
        EXPECT_EQ(r.exit_code, 0) << run << ": " << r.out << r.err;
    }
}
