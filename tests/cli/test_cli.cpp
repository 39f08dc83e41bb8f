// The real binary: exit codes and the one-line messages for each class of bad command line or
// configuration, --version, --print-config and subcommand help.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "test_util.h"

using cuset::test::count_of;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

std::string yaml(const std::string& name, const std::string& text) {
    std::string path = scratch_dir("cli-" + name) + "/bad.yaml";
    write_file(path, text);
    return path;
}

// One clear line on stderr.
void expect_one_line(const std::string& err) {
    EXPECT_EQ(count_of(err, "\n"), 1) << err;
    EXPECT_EQ(err.rfind("cuset-train: ", 0), 0u) << err;
}

}  // namespace

TEST(Cli, Version) {
    auto r = run_cuset("--version");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("cuset-train 0."), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("LibTorch 2."), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("CUDA kernels:"), std::string::npos) << r.out;
    // The machine decides the values (CI has no GPU, a workstation may): the two lines are
    // there, well formed, and agree with each other.
    std::smatch available, devices;
    ASSERT_TRUE(std::regex_search(r.out, available, std::regex("(^|\n)CUDA available: (yes|no)\n"))) << r.out;
    ASSERT_TRUE(std::regex_search(r.out, devices, std::regex("(^|\n)CUDA devices: ([0-9]+)\n"))) << r.out;
    const bool yes = available[2] == "yes";
    const int count = std::stoi(devices[2]);
    EXPECT_EQ(yes, count > 0) << r.out;
}

TEST(Cli, PrintConfigShowsResolvedValues) {
    auto r = run_cuset("--config configs/qwen7b.yaml --set train.lr=3e-6 --print-config");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("path: \"models/Qwen2.5-Coder-7B-Instruct\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("lr: 3e-06"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("      q: 0.2"), std::string::npos) << r.out;
}

TEST(Cli, UnknownKeyExit2NamesKey) {
    auto r = run_cuset("--config " + yaml("unk", "train:\n  lerning_rate: 1\n") + " --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    expect_one_line(r.err);
    EXPECT_NE(r.err.find("bad.yaml:2:3: unknown key 'train.lerning_rate'"), std::string::npos) << r.err;
}

TEST(Cli, WrongTypeAndRangeExit2) {
    auto r = run_cuset("--config " + yaml("type", "objective:\n  region:\n    window: big\n") + " --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    expect_one_line(r.err);
    EXPECT_NE(r.err.find("'objective.region.window' expects an integer"), std::string::npos) << r.err;
    r = run_cuset("--config " + yaml("range", "objective:\n  mask:\n    drop_weight: -1\n") + " --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("'objective.mask.drop_weight' = -1 is out of range [0, 1]"), std::string::npos) << r.err;
}

TEST(Cli, BadSetExit2) {
    auto r = run_cuset("--config configs/demo.yaml --set train.lr=abc --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    expect_one_line(r.err);
    EXPECT_NE(r.err.find("--set train.lr"), std::string::npos) << r.err;
    r = run_cuset("--config configs/demo.yaml --set objective.metod=sft --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("did you mean 'objective.method'"), std::string::npos) << r.err;
}

TEST(Cli, UnreadableAndMalformedFilesExit2) {
    auto r = run_cuset("--config /nonexistent.yaml --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    expect_one_line(r.err);
    EXPECT_NE(r.err.find("cannot read '/nonexistent.yaml'"), std::string::npos) << r.err;
    r = run_cuset("--config " + yaml("malformed", "train: {lr: 1\n") + " --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    expect_one_line(r.err);
    EXPECT_NE(r.err.find("malformed YAML"), std::string::npos) << r.err;
}

TEST(Cli, UnknownFlagAndSubcommandExit2) {
    auto r = run_cuset("--config configs/demo.yaml --bogus");
    EXPECT_EQ(r.exit_code, 2);
    expect_one_line(r.err);
    EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
    r = run_cuset("frobnicate --config configs/demo.yaml");
    EXPECT_EQ(r.exit_code, 2);
    expect_one_line(r.err);
    EXPECT_NE(r.err.find("unknown subcommand 'frobnicate'"), std::string::npos) << r.err;
}

TEST(Cli, SubcommandHelp) {
    auto r = run_cuset("train --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("--resume"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--set"), std::string::npos) << r.out;
}

TEST(Cli, DryRunAcceptsShippedConfig) {
    auto r = run_cuset("--config configs/demo.yaml --dry-run");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // The dry run reads the model, tokenizer and data: the bundled split sizes of data/README.md.
    EXPECT_NE(r.err.find("train.jsonl: 110 samples"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("eval.jsonl: 24 samples"), std::string::npos) << r.err;
}

// train.device auto and model.dtype auto on this machine: the dry run plans in the dtype the
// training run then computes in (float32 without a GPU), in its runtime line and its memory
// estimate alike.
TEST(Cli, DryRunPlansInTheTrainingRunsDtype) {
    const std::string dir = scratch_dir("cli-dry-run-dtype");
    const std::string args = "--config configs/demo.yaml --set train.device=auto --set model.dtype=auto "
                             "--set train.max_steps=1 --set data.eval= --set data.max_seq_len=128 "
                             "--set data.cache_dir= --set log.progress=never --set run.output_dir=" + dir;
    auto dry = run_cuset(args + " --dry-run");
    ASSERT_EQ(dry.exit_code, 0) << dry.err;
    auto train = run_cuset(args + " --run-name r");
    ASSERT_EQ(train.exit_code, 0) << train.err;
    std::smatch planned, estimated, used;
    ASSERT_TRUE(std::regex_search(dry.err, planned, std::regex("would compute on device (\\S+) \\| dtype (\\S+)"))) << dry.err;
    ASSERT_TRUE(std::regex_search(dry.err, estimated, std::regex("memory estimate \\(full fine-tune: [^,]*, (\\S+)\\)")))
        << dry.err;
    ASSERT_TRUE(std::regex_search(train.err, used, std::regex("\\| device (\\S+) \\| dtype (\\S+) \\|"))) << train.err;
    EXPECT_EQ(planned[1], used[1]);
    EXPECT_EQ(planned[2], used[2]);
    EXPECT_EQ(estimated[1], used[2]);
}

TEST(Cli, DryRunChecksTheModelFolder) {
    // A shipped configuration for a model that is not downloaded here: exit 3, one line naming it.
    auto r = run_cuset("--config configs/qwen7b.yaml --dry-run");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("models/Qwen2.5-Coder-7B-Instruct"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("model.path"), std::string::npos) << r.err;
}
