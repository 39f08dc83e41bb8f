// Checkpoint folders: trainer-state versioning, newest-complete selection, pruning, removal of
// interrupted writes, atomic commit, and the stop signals.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>

#include "cuset/train/checkpoint.h"
#include "cuset/core/error.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

void make_checkpoint(const std::string& run, int64_t step, bool complete) {
    std::string dir = run + "/" + cuset::checkpoint_name(step);
    fs::create_directories(dir);
    write_file(dir + "/model.safetensors", "x");
    if (complete) {
        cuset::TrainerState s;
        s.step = step;
        write_file(dir + "/trainer_state.json", cuset::trainer_state_to_json(s).dump());
    }
}

}  // namespace

TEST(TrainerState, JsonRoundTrip) {
    cuset::TrainerState s;
    s.step = 12;
    s.epoch = 1;
    s.step_in_epoch = 3;
    s.total_steps = 40;
    s.targets_trained = 98765;
    s.config_hash = "abc";
    s.data_hash = "def";
    s.history.push_back({{"step", 10}, {"eval_loss", 1.5}});
    cuset::TrainerState t = cuset::trainer_state_from_json(cuset::trainer_state_to_json(s), "x");
    EXPECT_EQ(cuset::trainer_state_to_json(t), cuset::trainer_state_to_json(s));
}

TEST(TrainerState, UnknownVersionIsAClearError) {
    nlohmann::json j = cuset::trainer_state_to_json({});
    j["version"] = 99;
    try {
        cuset::trainer_state_from_json(j, "runs/a/checkpoint-0000005/trainer_state.json");
        FAIL();
    } catch (const cuset::InputError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("version 99 is not supported"), std::string::npos) << m;
        EXPECT_NE(m.find("checkpoint-0000005/trainer_state.json"), std::string::npos) << m;
    }
    EXPECT_THROW(cuset::trainer_state_from_json({{"format", "other"}}, "f"), cuset::InputError);
    nlohmann::json missing = cuset::trainer_state_to_json({});
    missing.erase("step");
    EXPECT_THROW(cuset::trainer_state_from_json(missing, "f"), cuset::InputError);
}

TEST(Checkpoint, NamesSortByStep) {
    EXPECT_EQ(cuset::checkpoint_name(42), "checkpoint-0000042");
    EXPECT_EQ(cuset::checkpoint_step_of("checkpoint-0000042"), 42);
    EXPECT_EQ(cuset::checkpoint_step_of("checkpoint-0000042.tmp-77"), -1);
    EXPECT_EQ(cuset::checkpoint_step_of("checkpoint-"), -1);
    EXPECT_EQ(cuset::checkpoint_step_of("model"), -1);
}

TEST(Checkpoint, LatestSkipsIncompleteAndPruneKeepsNewest) {
    std::string run = scratch_dir("ckpt-latest");
    EXPECT_EQ(cuset::checkpoint_latest(run), "");
    make_checkpoint(run, 5, true);
    make_checkpoint(run, 10, true);
    make_checkpoint(run, 20, false);  // no trainer_state.json: interrupted before it was written
    fs::create_directories(run + "/checkpoint-0000030.tmp-123");  // not cuset's name: kept
    const std::string partial = run + "/checkpoint-0000040.tmp-999999999-00000000000000aa";  // cuset's, marked
    fs::create_directories(partial);
    write_file(partial + "/" + cuset::kAtomicPartialMarker, "");
    EXPECT_EQ(cuset::checkpoint_latest(run), run + "/checkpoint-0000010");
    make_checkpoint(run, 15, true);
    cuset::checkpoint_prune(run, 2);
    auto left = cuset::checkpoint_list(run);
    ASSERT_EQ(left.size(), 2u);
    EXPECT_EQ(left[0], run + "/checkpoint-0000010");
    EXPECT_EQ(left[1], run + "/checkpoint-0000015");
    cuset::checkpoint_remove_partial(run);
    EXPECT_TRUE(fs::exists(run + "/checkpoint-0000030.tmp-123"));
    EXPECT_FALSE(fs::exists(partial));
}

TEST(Checkpoint, CommitRenamesOnlyWhenCompleteAndReplaces) {
    std::string run = scratch_dir("ckpt-commit");
    std::string final_dir = run + "/" + cuset::checkpoint_name(3);
    std::string tmp = cuset::checkpoint_temp_name(final_dir);
    fs::create_directories(tmp);
    write_file(tmp + "/a.txt", "one");
    EXPECT_FALSE(fs::exists(final_dir));
    cuset::checkpoint_commit(tmp, final_dir);
    EXPECT_FALSE(fs::exists(tmp));
    EXPECT_EQ(read_file(final_dir + "/a.txt"), "one");
    std::string tmp2 = cuset::checkpoint_temp_name(final_dir);
    fs::create_directories(tmp2);
    write_file(tmp2 + "/a.txt", "two");
    cuset::checkpoint_commit(tmp2, final_dir);
    EXPECT_EQ(read_file(final_dir + "/a.txt"), "two");
    EXPECT_EQ(fs::directory_iterator(run) == fs::directory_iterator(), false);
    int n = 0;
    for (auto& e : fs::directory_iterator(run)) n += e.is_directory();
    EXPECT_EQ(n, 1);  // no leftover of the replaced copy
}

TEST(Checkpoint, AtomicFileWrite) {
    std::string dir = scratch_dir("ckpt-file");
    cuset::file_write_atomic(dir + "/x.json", "{\"a\":1}");
    EXPECT_EQ(read_file(dir + "/x.json"), "{\"a\":1}");
    int n = 0;
    for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
    EXPECT_EQ(n, 1);
}

TEST(Signals, FirstSignalRequestsStop) {
    cuset::signals_reset();
    cuset::signals_install();
    EXPECT_FALSE(cuset::signals_stop_requested());
    ::raise(SIGTERM);
    EXPECT_TRUE(cuset::signals_stop_requested());
    EXPECT_EQ(cuset::signals_received(), SIGTERM);
    cuset::signals_reset();
}
