// The bad-input suite: generated cases for each class of bad input found by the reliability
// review ("lose nothing, hang on nothing"), run through the real binary. Each case checks the
// exit code (docs/exit-codes.md), a one-line message naming the file or key, that every input
// file is byte-identical after the run, that no temporary file is left behind, and that the run
// ends in bounded time (a `timeout` wrapper; 124 means it hung).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::RunResult;
using cuset::test::run_command;
using cuset::test::scratch_dir;
using cuset::test::tiny_model_dir;
using cuset::test::write_file;

namespace {

const std::string kData = std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/mini_sft.jsonl";

// The binary with a time limit: a hang shows as exit 124, not as a stuck test.
RunResult run(const std::string& args, int seconds = 120) {
    return run_command("timeout -k 5 " + std::to_string(seconds) + " '" + std::string(CUSET_BINARY) + "' " + args);
}

std::string q(const std::string& s) { return "'" + s + "'"; }

// Every file below `dir` (relative name -> bytes); symlinks by their target text.
std::map<std::string, std::string> snapshot(const std::string& dir) {
    std::map<std::string, std::string> m;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
        std::string rel = fs::relative(it->path(), dir).string();
        if (it->is_symlink()) m[rel] = "-> " + fs::read_symlink(it->path()).string();
        else if (it->is_regular_file()) m[rel] = read_file(it->path().string());
        else if (it->is_directory()) m[rel + "/"] = "";
        else m[rel] = "(special)";
    }
    return m;
}

// The exit code, and the error as the last line of stderr: "cuset-train: ...", naming `needle`,
// one line, and quoting at most a bounded amount of the input.
void expect_error(const RunResult& r, int code, const std::string& needle) {
    EXPECT_EQ(r.exit_code, code) << r.err;
    std::string err = r.err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    std::string last = err.substr(err.find_last_of('\n') == std::string::npos ? 0 : err.find_last_of('\n') + 1);
    EXPECT_EQ(last.rfind("cuset-train: ", 0), 0u) << r.err;
    EXPECT_NE(last.find(needle), std::string::npos) << "expected '" << needle << "' in: " << last;
    EXPECT_EQ(last.find("internal error"), std::string::npos) << last;
    EXPECT_LT(last.size(), 1200u) << last;
}

void expect_no_temp_files(const std::string& dir) {
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
        EXPECT_EQ(it->path().filename().string().find(".tmp-"), std::string::npos) << it->path();
}

// A small configuration on the tiny model `model`, its data copied to dir/train.jsonl, written to
// dir/config.yaml.
std::string write_config(const std::string& dir, const std::string& model) {
    using cuset::test::kDefault;
    if (!fs::exists(dir + "/train.jsonl")) fs::copy_file(kData, dir + "/train.jsonl");
    return cuset::test::write_tiny_run_config(dir + "/config.yaml", dir + "/runs",
                                              {{"model.path", model},
                                               {"data.train", dir + "/train.jsonl"},
                                               {"data.eval", kDefault},
                                               {"data.max_seq_len", "96"},
                                               {"objective.region.window", kDefault},
                                               {"train.grad_accum", "1"},
                                               {"train.lr", "1.0e-3"},
                                               {"train.warmup_steps", "0"},
                                               {"checkpoint.every", "2"},
                                               {"run.name", "r"}});
}

std::string copy_tiny_model(const std::string& dir) {
    std::string m = dir + "/model";
    fs::copy(tiny_model_dir(), m, fs::copy_options::recursive);
    return m;
}

bool have_tiny_model() { return fs::exists(tiny_model_dir() + "/config.json"); }

// The tiny model is made by the golden_tiny_model fixture, which CTest runs before these tests
// (FIXTURES_REQUIRED): a missing one is a failure, never a reason to skip.
#define ASSERT_TINY_MODEL()                                                                      \
    ASSERT_TRUE(have_tiny_model()) << tiny_model_dir()                                           \
                                   << " is missing: the golden_tiny_model fixture did not run " \
                                      "(run the tests through ctest)"

}  // namespace

// ---------------------------------------------------------------- 1. output = input

TEST(BadInputOutputIsInput, DataCheckRefusesEverySpellingOfItsInput) {
    std::string d = scratch_dir("bad-out-in-check");
    fs::copy_file(kData, d + "/in.jsonl");
    fs::create_symlink(d + "/in.jsonl", d + "/link.jsonl");
    fs::create_hard_link(d + "/in.jsonl", d + "/hard.jsonl");
    for (const std::string& out : {d + "/in.jsonl", d + "/./in.jsonl", d + "/link.jsonl", d + "/hard.jsonl"}) {
        auto before = snapshot(d);
        for (const std::string flag : {"--out", "--report"}) {
            auto r = run("data check " + q(d + "/in.jsonl") + " " + flag + " " + q(out));
            expect_error(r, 2, "is the input");
            EXPECT_EQ(snapshot(d), before) << flag << " " << out;
        }
    }
    expect_no_temp_files(d);
}

TEST(BadInputOutputIsInput, TagRefusesItsInput) {
    std::string d = scratch_dir("bad-out-in-tag");
    fs::copy_file(std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/tagger/response.md", d + "/r.md");
    fs::create_symlink(d + "/r.md", d + "/link.md");
    auto before = snapshot(d);
    for (const std::string& out : {d + "/r.md", d + "/link.md"}) {
        auto r = run("tag " + q(d + "/r.md") + " -o " + q(out));
        expect_error(r, 2, "is the input");
        EXPECT_EQ(snapshot(d), before);
    }
}

TEST(BadInputOutputIsInput, ScoreRefusesItsDataAndModelFiles) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-out-in-score");
    std::string cfg = write_config(d, tiny_model_dir());
    fs::create_symlink(d + "/train.jsonl", d + "/link.jsonl");
    auto before = snapshot(d);
    for (const std::string& out : {d + "/train.jsonl", d + "/link.jsonl", tiny_model_dir() + "/config.json"}) {
        for (const std::string fmt : {"jsonl", "bin"}) {
            auto r = run("score --config " + q(cfg) + " --data " + q(d + "/train.jsonl") + " --format " + fmt +
                           " --out " + q(out));
            expect_error(r, 2, "is the input");
            EXPECT_EQ(snapshot(d), before) << out;
        }
    }
    // A score file named so that its index (".idx") would overwrite the data.
    fs::copy_file(kData, d + "/s.idx");
    auto r = run("score --config " + q(cfg) + " --data " + q(d + "/s.idx") + " --out " + q(d + "/s"));
    expect_error(r, 2, "is the input");
    EXPECT_EQ(read_file(d + "/s.idx"), read_file(kData));
    expect_no_temp_files(d);
}

TEST(BadInputOutputIsInput, AnalyzeRefusesToWriteOverItsScores) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-out-in-analyze");
    std::string cfg = write_config(d, tiny_model_dir());
    auto s = run("score --config " + q(cfg) + " --format jsonl --out " + q(d + "/out/analysis.json"));
    ASSERT_EQ(s.exit_code, 0) << s.err;
    auto before = snapshot(d);
    auto r = run("analyze --config " + q(cfg) + " --scores " + q(d + "/out/analysis.json") + " --out " + q(d + "/out"));
    expect_error(r, 2, "is the input");
    EXPECT_EQ(snapshot(d), before);
}

TEST(BadInputOutputIsInput, ExportRefusesItsModelFolder) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-out-in-export");
    std::string m = copy_tiny_model(d);
    fs::create_directory_symlink(m, d + "/link");
    auto before = snapshot(d);
    for (const std::string& out : {m, d + "/link", m + "/."}) {
        auto r = run("export --model " + q(m) + " --out " + q(out) + " --dtype float32");
        expect_error(r, 2, "is the input");
        EXPECT_EQ(snapshot(d), before) << out;
    }
    // Nor a folder that holds the model.
    auto r = run("export --model " + q(m) + " --out " + q(d) + " --dtype float32");
    expect_error(r, 2, "");
    EXPECT_EQ(snapshot(d), before);
}

TEST(BadInputOutputIsInput, GenerateRefusesItsPromptsAndModelFiles) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-out-in-generate");
    std::string m = copy_tiny_model(d);
    std::string cfg = write_config(d, m);
    fs::create_symlink(d + "/train.jsonl", d + "/link.jsonl");
    fs::create_hard_link(d + "/train.jsonl", d + "/hard.jsonl");
    auto before = snapshot(d);
    for (const std::string& out : {d + "/train.jsonl", d + "/./train.jsonl", d + "/link.jsonl", d + "/hard.jsonl",
                                   m + "/config.json", m + "/tokenizer.json", m + "/model.safetensors"}) {
        auto r = run("generate --config " + q(cfg) + " --prompts " + q(d + "/train.jsonl") + " --out " + q(out) +
                     " --max-new-tokens 2");
        expect_error(r, 2, "is the input");
        EXPECT_EQ(snapshot(d), before) << out;
    }
    expect_no_temp_files(d);
}

TEST(BadInputOutputIsInput, EvalRefusesToWriteOverItsTasksOrResults) {
    std::string d = scratch_dir("bad-out-in-eval");
    const std::string tasks = std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl";
    fs::create_directories(d + "/out");
    // The tasks file and a results file placed where eval writes its report and its copies.
    fs::copy_file(tasks, d + "/out/eval.json");
    write_file(d + "/out/eval.html", "{\"id\": 0, \"code1\": \"x\", \"response1\": \"x\"}\n");
    fs::create_symlink(d + "/out/eval.json", d + "/tasks-link.jsonl");
    auto before = snapshot(d);
    for (const std::string& t : {d + "/out/eval.json", d + "/tasks-link.jsonl"}) {
        auto r = run("eval --reference --tasks " + q(t) + " --judge compile --out " + q(d + "/out"), 60);
        expect_error(r, 2, "is the input");
        EXPECT_EQ(snapshot(d), before) << t;
    }
    auto r = run("eval --results " + q(d + "/out/eval.html") + " --tasks " + q(tasks) + " --judge compile --out " +
                 q(d + "/out"), 60);
    expect_error(r, 2, "is the input");
    EXPECT_EQ(snapshot(d), before);
    // Generating: the tasks file where the prompts given to the model are written.
    ASSERT_TINY_MODEL();
    {
        std::string cfg = write_config(d, tiny_model_dir());
        fs::copy_file(tasks, d + "/out/prompts.jsonl");
        auto before_gen = snapshot(d);
        auto g = run("eval --config " + q(cfg) + " --tasks " + q(d + "/out/prompts.jsonl") +
                     " --samples 1 --judge compile --out " + q(d + "/out"), 60);
        expect_error(g, 2, "is the input");
        EXPECT_EQ(snapshot(d), before_gen);
    }
    // The tasks inside OUT/work, the folder eval removes when it ends.
    fs::create_directories(d + "/out/work");
    fs::copy_file(tasks, d + "/out/work/tasks.jsonl");
    auto w = run("eval --reference --tasks " + q(d + "/out/work/tasks.jsonl") + " --judge compile --out " + q(d + "/out"), 120);
    expect_error(w, 2, "work folder");
    EXPECT_EQ(read_file(d + "/out/work/tasks.jsonl"), read_file(tasks));
    // A folder named work that cuset did not make (a user's notes in it) is not deleted.
    fs::remove(d + "/out/work/tasks.jsonl");
    write_file(d + "/out/work/notes.txt", "mine\n");
    auto u = run("eval --reference --tasks " + q(tasks) + " --judge compile --out " + q(d + "/out"), 120);
    expect_error(u, 2, "was not made by cuset-train eval");
    EXPECT_EQ(read_file(d + "/out/work/notes.txt"), "mine\n");
    expect_no_temp_files(d);
}

// ---------------------------------------------------------------- 2. checkpoint recovery

TEST(BadInputCheckpointRecovery, RestoresACompleteCopyMovedAsideAndKeepsUserFiles) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-ckpt-restore");
    std::string cfg = write_config(d, tiny_model_dir());
    auto a = run("--config " + q(cfg));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    std::string rundir = d + "/runs/r";
    std::string ckpt = rundir + "/checkpoint-0000002";
    ASSERT_TRUE(fs::exists(ckpt + "/trainer_state.json"));
    const std::string state = read_file(ckpt + "/trainer_state.json");
    // A crash between "move the old copy aside" and "rename the new one in" (a dead writer's
    // pid), a user's files that merely look temporary, and a folder without cuset's marker.
    const std::string old = ckpt + ".tmp-old-999999999-0123456789abcdef";
    fs::rename(ckpt, old);
    write_file(rundir + "/notes.tmp-1.txt", "mine");
    fs::create_directories(rundir + "/data.tmp-5");
    write_file(rundir + "/data.tmp-5/keep.txt", "mine too");
    fs::create_directories(rundir + "/other.tmp-999999999-00000000000000ff");
    write_file(rundir + "/other.tmp-999999999-00000000000000ff/x", "no marker: not cuset's");
    // cuset's own partial folder (marker inside) is removed.
    fs::create_directories(rundir + "/checkpoint-0000004.tmp-999999999-00000000000000aa");
    write_file(rundir + "/checkpoint-0000004.tmp-999999999-00000000000000aa/.cuset-partial", "");

    auto b = run("--config " + q(cfg) + " --resume auto");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_NE(b.err.find("restored"), std::string::npos) << b.err;
    EXPECT_NE(b.err.find("resumed from " + ckpt), std::string::npos) << b.err;
    EXPECT_EQ(read_file(ckpt + "/trainer_state.json"), state);
    EXPECT_FALSE(fs::exists(old));
    EXPECT_FALSE(fs::exists(ckpt + "/.cuset-old"));
    EXPECT_EQ(read_file(rundir + "/notes.tmp-1.txt"), "mine");
    EXPECT_EQ(read_file(rundir + "/data.tmp-5/keep.txt"), "mine too");
    EXPECT_TRUE(fs::exists(rundir + "/other.tmp-999999999-00000000000000ff/x"));
    EXPECT_FALSE(fs::exists(rundir + "/checkpoint-0000004.tmp-999999999-00000000000000aa"));
}

TEST(BadInputCheckpointRecovery, SavingOverACheckpointLeavesOneCopyAndNoDoubleSuffix) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-ckpt-resave");
    std::string cfg = write_config(d, tiny_model_dir());
    auto a = run("--config " + q(cfg));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(a.err.find(".tmp-"), std::string::npos) << a.err;  // no "x.tmp-1-a.tmp-1-b" in the log
    std::string rundir = d + "/runs/r";
    int n = 0;
    for (auto& e : fs::directory_iterator(rundir)) n += e.path().filename().string().rfind("checkpoint-", 0) == 0;
    EXPECT_EQ(n, 1);
    expect_no_temp_files(d);
}

TEST(BadInputCheckpointRecovery, AnUnusableCheckpointIsNeverSkippedSilently) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-ckpt-unusable");
    std::string cfg = write_config(d, tiny_model_dir());
    std::string rundir = d + "/runs/r";
    fs::create_directories(rundir + "/checkpoint-0000002");
    write_file(rundir + "/checkpoint-0000002/model.safetensors", "x");
    auto before = snapshot(d);
    auto r = run("--config " + q(cfg) + " --resume auto");
    expect_error(r, 3, "checkpoint-0000002");
    auto fresh = run("--config " + q(cfg));  // nor trains over it without --resume
    expect_error(fresh, 2, "already holds checkpoints");
    EXPECT_TRUE(fs::exists(rundir + "/checkpoint-0000002/model.safetensors"));
    EXPECT_FALSE(fs::exists(rundir + "/checkpoint-0000002/trainer_state.json"));
}

// ---------------------------------------------------------------- 3. symlinks, FIFOs, devices

TEST(BadInputSpecialTargets, SymlinkIsWrittenThroughAndDevicesInPlace) {
    std::string d = scratch_dir("bad-special");
    fs::copy_file(kData, d + "/in.jsonl");
    fs::create_directories(d + "/real");
    fs::create_symlink("real/kept.jsonl", d + "/link.jsonl");  // dangling, relative
    auto r = run("data check " + q(d + "/in.jsonl") + " --out " + q(d + "/link.jsonl"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(d + "/link.jsonl"));
    EXPECT_EQ(read_file(d + "/real/kept.jsonl"), read_file(kData));
    // /dev/stdout: the kept samples on stdout; /dev/null: nothing replaced.
    auto s = run("data check " + q(d + "/in.jsonl") + " --out /dev/stdout");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_NE(s.out.find(read_file(kData)), std::string::npos) << s.out.substr(0, 300);
    auto n = run("data check " + q(d + "/in.jsonl") + " --report /dev/null");
    ASSERT_EQ(n.exit_code, 0) << n.err;
    struct stat st {};
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    // /dev/full: a write error, exit 4, naming the file.
    auto f = run("data check " + q(d + "/in.jsonl") + " --out /dev/full");
    expect_error(f, 4, "/dev/full");
    // A FIFO with a reader gets the bytes; one without a reader is an error, not a hang.
    ASSERT_EQ(::mkfifo((d + "/fifo").c_str(), 0600), 0);
    auto p = run_command("cat " + q(d + "/fifo") + " > " + q(d + "/got") + " & timeout -k 5 60 '" +
                         std::string(CUSET_BINARY) + "' data check " + q(d + "/in.jsonl") + " --out " + q(d + "/fifo") +
                         "; rc=$?; wait; exit $rc");
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_EQ(read_file(d + "/got"), read_file(kData));
    struct stat fst {};
    ASSERT_EQ(::lstat((d + "/fifo").c_str(), &fst), 0);
    EXPECT_TRUE(S_ISFIFO(fst.st_mode));
    auto nr = run("data check " + q(d + "/in.jsonl") + " --out " + q(d + "/fifo"), 30);
    expect_error(nr, 4, "fifo");
    // A folder where the output file belongs.
    auto dir = run("data check " + q(d + "/in.jsonl") + " --out " + q(d + "/real"));
    expect_error(dir, 2, d + "/real");
    EXPECT_EQ(read_file(d + "/in.jsonl"), read_file(kData));
    expect_no_temp_files(d);
}

// ---------------------------------------------------------------- 4. temporary names

TEST(BadInputTempNames, AnInputNamedLikeATemporaryIsKept) {
    std::string d = scratch_dir("bad-tmpname");
    for (const std::string in : {"x.tmp", "x.tmp-1", "x.jsonl.tmp"}) {
        fs::copy_file(kData, d + "/" + in, fs::copy_options::overwrite_existing);
        std::string out = in.substr(0, in.find(".tmp"));
        auto r = run("data check " + q(d + "/" + in) + " --out " + q(d + "/" + out) + " --report " +
                       q(d + "/" + out + ".report"));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(read_file(d + "/" + in), read_file(kData)) << in;
        EXPECT_EQ(read_file(d + "/" + out), read_file(kData)) << in;
    }
}

// ---------------------------------------------------------------- 5. export --out

TEST(BadInputExport, ReplacesOnlyAModelFolderOrAnEmptyOne) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-export-out");
    fs::create_directories(d + "/mine");
    write_file(d + "/mine/thesis.tex", "years of work");
    write_file(d + "/file", "a file");
    auto before = snapshot(d);
    for (const std::string& out : {d + "/mine", d + "/file"}) {
        auto r = run("export --model " + q(tiny_model_dir()) + " --out " + q(out) + " --dtype float32");
        expect_error(r, 2, out);
        EXPECT_EQ(snapshot(d), before);
    }
    fs::create_directories(d + "/empty");
    auto e = run("export --model " + q(tiny_model_dir()) + " --out " + q(d + "/empty") + " --dtype float32");
    ASSERT_EQ(e.exit_code, 0) << e.err;
    EXPECT_TRUE(fs::exists(d + "/empty/config.json"));
    auto again = run("export --model " + q(tiny_model_dir()) + " --out " + q(d + "/empty") + " --dtype bfloat16");
    ASSERT_EQ(again.exit_code, 0) << again.err;  // a model folder cuset wrote is replaced
    EXPECT_NE(read_file(d + "/empty/config.json").find("bfloat16"), std::string::npos);
    expect_no_temp_files(d);
}

// ---------------------------------------------------------------- 6. YAML that never ends

namespace {

std::string yaml_file(const std::string& name, const std::string& text) {
    std::string d = scratch_dir("bad-yaml-" + name);
    write_file(d + "/bad.yaml", text);
    return d + "/bad.yaml";
}

}  // namespace

TEST(BadInputYaml, CyclesDepthDuplicatesAndBytesAreUsageErrors) {
    std::string deep = "train:\n  x: ";
    for (int i = 0; i < 200; ++i) deep += "{a: ";
    deep += "1";
    for (int i = 0; i < 200; ++i) deep += "}";
    struct Case {
        std::string name, text, needle;
    };
    const std::vector<Case> cases = {
        {"cycle-top", "a: &r {b: *r}\n", "recursive alias"},
        {"cycle-section", "train: &r\n  lr: 1.0e-3\n  again: *r\n", "recursive alias"},
        {"cycle-list", "x: &l [1, *l]\n", "recursive alias"},
        {"deep", deep + "\n", "bad.yaml"},
        {"duplicate", "train:\n  lr: 1.0e-3\n  lr: 2.0e-3\n", "duplicate key 'train.lr'"},
        {"duplicate-section", "train:\n  lr: 1.0e-3\ntrain:\n  seed: 3\n", "duplicate key 'train'"},
        {"duplicate-flow", "train: {lr: 1.0e-3, lr: 2.0e-3}\n", "duplicate key 'train.lr'"},
        {"duplicate-deep", "data:\n  template:\n    user: \"x\"\n    user: \"y\"\n", "duplicate key 'data.template.user'"},
        {"utf8", "data:\n  system_prompt: \"caf\xC3\x28\"\n", "bad.yaml:2:22: not valid UTF-8"},
    };
    for (const Case& c : cases) {
        std::string path = yaml_file(c.name, c.text);
        auto r = run("--config " + q(path) + " --dry-run", 30);
        expect_error(r, 2, c.needle);
        EXPECT_EQ(read_file(path), c.text) << c.name;
    }
}

TEST(BadInputYaml, ConfigThatIsAFolderIsAUsageError) {
    std::string d = scratch_dir("bad-yaml-dir");
    auto r = run("--config " + q(d) + " --dry-run", 30);
    expect_error(r, 2, d);
    auto s = run("score --config " + q(d), 30);
    expect_error(s, 2, d);
}

// ---------------------------------------------------------------- 7. sizes checked before allocating

namespace {

// The tiny model with config.json keys replaced.
std::string model_with(const std::string& dir, const nlohmann::json& patch) {
    std::string m = copy_tiny_model(dir);
    nlohmann::json c = nlohmann::json::parse(read_file(m + "/config.json"));
    c.merge_patch(patch);
    write_file(m + "/config.json", c.dump(2));
    return m;
}

}  // namespace

TEST(BadInputModelSizes, ConfigLargerThanTheWeightsIsBadInputNotAnAllocation) {
    ASSERT_TINY_MODEL();
    const std::vector<std::pair<nlohmann::json, std::string>> cases = {
        {{{"num_hidden_layers", 100000}}, "num_hidden_layers 100000"},
        {{{"num_hidden_layers", 1}}, "more layers"},
        {{{"intermediate_size", int64_t(1) << 40}}, "intermediate_size"},
        {{{"hidden_size", int64_t(1) << 62}}, "hidden_size"},
        {{{"vocab_size", 4000000000LL}}, "vocab_size"},
        {{{"num_attention_heads", int64_t(1) << 40}, {"num_key_value_heads", int64_t(1) << 40}, {"head_dim", int64_t(1) << 40}},
         "config.json"},
    };
    int i = 0;
    for (const auto& [patch, needle] : cases) {
        std::string d = scratch_dir("bad-model-size-" + std::to_string(i++));
        std::string m = model_with(d, patch);
        const std::string cfg = write_config(d, m);
        auto before = snapshot(m);
        // A 4 GB address-space limit: allocating from the bad sizes would fail with a trace.
        auto r = run_command("ulimit -v 4000000; timeout -k 5 60 '" + std::string(CUSET_BINARY) + "' export --model " + q(m) +
                             " --out " + q(d + "/out") + " --dtype float32");
        expect_error(r, 3, needle);
        auto t = run_command("ulimit -v 4000000; timeout -k 5 60 '" + std::string(CUSET_BINARY) + "' --config " + q(cfg));
        expect_error(t, 3, needle);
        EXPECT_EQ(snapshot(m), before);
        EXPECT_FALSE(fs::exists(d + "/out"));
    }
}

TEST(BadInputModelSizes, CorruptedCacheCountIsRebuilt) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-cache-count");
    std::string cfg = write_config(d, tiny_model_dir());
    std::string text = read_file(cfg);
    text.replace(text.find("cache_dir: \"\""), 13, "cache_dir: " + d + "/cache");
    write_file(cfg, text);
    auto a = run("score --config " + q(cfg) + " --format jsonl --out " + q(d + "/a.jsonl"));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    std::string cache;
    for (auto& e : fs::directory_iterator(d + "/cache")) cache = e.path().string();
    ASSERT_FALSE(cache.empty());
    // magic 8, version 4, key (count 8 + bytes), samples 8, first id (count 8 + bytes), then the
    // first sample's token count: set it to 2^32 - 1.
    std::string bytes = read_file(cache);
    auto u64 = [&](size_t at) {
        uint64_t v = 0;
        std::memcpy(&v, bytes.data() + at, 8);
        return v;
    };
    size_t at = 12;
    at += 8 + u64(at);
    at += 8;
    at += 8 + u64(at);
    const uint64_t bad = (uint64_t(1) << 32) - 1;
    std::memcpy(bytes.data() + at, &bad, 8);
    write_file(cache, bytes);
    auto b = run_command("ulimit -v 4000000; timeout -k 5 120 '" + std::string(CUSET_BINARY) + "' score --config " + q(cfg) +
                         " --format jsonl --out " + q(d + "/b.jsonl"));
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(read_file(d + "/a.jsonl"), read_file(d + "/b.jsonl"));
    EXPECT_NE(read_file(cache), bytes);  // rebuilt
}

// ---------------------------------------------------------------- 9. a folder where a file belongs

TEST(BadInputFolderForFile, IsBadInputNamingThePath) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-folder-for-file");
    std::string m = copy_tiny_model(d);
    fs::remove(m + "/config.json");
    fs::create_directories(m + "/config.json");
    auto r = run("export --model " + q(m) + " --out " + q(d + "/out"));
    expect_error(r, 3, m + "/config.json");
    auto f = run("export --model " + q(m + "/model.safetensors") + " --out " + q(d + "/out"));
    expect_error(f, 3, "is a file");
    fs::create_directories(d + "/in.md");
    auto t = run("tag " + q(d + "/in.md"));
    expect_error(t, 3, d + "/in.md");
}

// ---------------------------------------------------------------- 11. trainer state

TEST(BadInputTrainerState, ImpossibleValuesAreBadInput) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-trainer-state");
    std::string cfg = write_config(d, tiny_model_dir());
    auto a = run("--config " + q(cfg));
    ASSERT_EQ(a.exit_code, 0) << a.err;
    const std::string ckpt = d + "/runs/r/checkpoint-0000002";
    const std::string good = read_file(ckpt + "/trainer_state.json");
    for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
             {"step", -1}, {"step_in_epoch", 99999999}, {"global_batch", -1}, {"world_size", 0}, {"skipped_steps", 5}, {"history", 3}}) {
        nlohmann::json j = nlohmann::json::parse(good);
        j[key] = value;
        write_file(ckpt + "/trainer_state.json", j.dump(2));
        auto r = run("--config " + q(cfg) + " --resume " + q(ckpt) + " --set train.max_steps=4");
        expect_error(r, 3, "trainer_state.json");
    }
    fs::remove(ckpt + "/trainer_state.json");
    fs::create_directories(ckpt + "/trainer_state.json");
    auto r = run("--config " + q(cfg) + " --resume " + q(ckpt) + " --set train.max_steps=4");
    expect_error(r, 3, ckpt + "/trainer_state.json");
}

// ---------------------------------------------------------------- 8. token ids outside the embedding

TEST(BadInputTokenIds, TokenizerIdsAreCheckedBeforeTheyReachTheModel) {
    ASSERT_TINY_MODEL();
    struct Case {
        std::string name;
        std::function<void(nlohmann::json&)> edit;
        std::string needle;
    };
    const std::vector<Case> cases = {
        {"negative", [](nlohmann::json& t) { t["model"]["vocab"].begin().value() = -1; }, "token ids are integers"},
        {"huge", [](nlohmann::json& t) { t["model"]["vocab"].begin().value() = 5000000000LL; }, "token ids are integers"},
        {"added-far", [](nlohmann::json& t) {
             t["added_tokens"].push_back({{"id", 1000000}, {"content", "<far>"}, {"special", true}});
         }, "embedding rows"},
        {"empty", [](nlohmann::json& t) {
             t["model"]["vocab"] = nlohmann::json::object();
             t["model"]["merges"] = nlohmann::json::array();
             t["added_tokens"] = nlohmann::json::array();
         }, "tokenizer.json"},
    };
    for (const Case& c : cases) {
        std::string d = scratch_dir("bad-token-ids-" + c.name);
        std::string m = copy_tiny_model(d);
        nlohmann::json t = nlohmann::json::parse(read_file(m + "/tokenizer.json"));
        c.edit(t);
        write_file(m + "/tokenizer.json", t.dump());
        std::string cfg = write_config(d, m);
        auto before = snapshot(m);
        auto s = run("score --config " + q(cfg) + " --format jsonl --out " + q(d + "/s.jsonl"));
        expect_error(s, 3, c.needle);
        auto r = run("--config " + q(cfg));
        expect_error(r, 3, c.needle);
        EXPECT_EQ(snapshot(m), before) << c.name;
        EXPECT_FALSE(fs::exists(d + "/s.jsonl")) << c.name;
    }
}

// ---------------------------------------------------------------- 12-15. smaller classes

TEST(BadInputSmall, DataCheckTimeoutMustBeAPositiveNumber) {
    std::string d = scratch_dir("bad-timeout");
    fs::copy_file(kData, d + "/in.jsonl");
    for (const std::string v : {"nan", "inf", "-1", "0"}) {
        auto r = run("data check " + q(d + "/in.jsonl") + " --timeout " + v, 30);
        expect_error(r, 2, "--timeout");
    }
    EXPECT_EQ(read_file(d + "/in.jsonl"), read_file(kData));
}

TEST(BadInputSmall, RunNameIsOneFolderName) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-run-name");
    std::string cfg = write_config(d, tiny_model_dir());
    for (const std::string name : {"../escape", "a/b", "..", "/abs"}) {
        auto r = run("--config " + q(cfg) + " --run-name " + q(name) + " --dry-run", 30);
        expect_error(r, 2, "run.name");
    }
    EXPECT_FALSE(fs::exists(d + "/escape"));
    EXPECT_FALSE(fs::exists(d + "/runs/a"));
}

TEST(BadInputSmall, NulBytesInAJsonlLineRejectTheLine) {
    std::string d = scratch_dir("bad-nul");
    std::string text = read_file(kData).substr(0, read_file(kData).find('\n') + 1);
    text += std::string("{\"prompt\": \"a\", \"response\": \"b\"}\0\0\n", 35);
    text += std::string("{\"prompt\": \"a\0b\", \"response\": \"c\"}\n", 35);
    write_file(d + "/in.jsonl", text);
    auto r = run("data check " + q(d + "/in.jsonl") + " --out " + q(d + "/kept.jsonl"), 60);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    r.out += r.err;
    EXPECT_NE(r.out.find("line 2 REJECTED: invalid_json: invalid JSON: a NUL byte at column 33"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("line 3 REJECTED: invalid_json: invalid JSON: a NUL byte at column 14"), std::string::npos) << r.out;
    EXPECT_EQ(read_file(d + "/in.jsonl"), text);
    EXPECT_EQ(read_file(d + "/kept.jsonl"), text.substr(0, text.find('\n') + 1));
}

TEST(BadInputTrainerState, ARunInWhichEveryStepWasSkippedFails) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("bad-all-skipped");
    // The tiny model with one NaN in the final norm: every step's loss is non-finite. Two steps,
    // fewer than train.max_bad_steps, and a checkpoint due at the last step.
    std::string m = copy_tiny_model(d);
    auto poison = run_command(std::string(CUSET_PYTHON) +
                              " -c \"import sys, torch; from safetensors.torch import load_file, save_file; "
                              "p=sys.argv[1]+'/model.safetensors'; t=load_file(p); "
                              "t['model.norm.weight'][0]=float('nan'); save_file(t, p, metadata={'format':'pt'})\" " +
                              q(m));
    ASSERT_EQ(poison.exit_code, 0) << poison.err;
    std::string cfg = write_config(d, m);
    auto before = snapshot(m);
    auto r = run("--config " + q(cfg) + " --set train.max_bad_steps=5");
    expect_error(r, 4, "all 2 steps were skipped");
    EXPECT_EQ(snapshot(m), before);
    // No checkpoint of the untrained (NaN) model, neither the periodic one nor the final one.
    for (auto& e : fs::directory_iterator(d + "/runs/r"))
        EXPECT_NE(e.path().filename().string().rfind("checkpoint-", 0), 0u) << e.path();
    EXPECT_FALSE(fs::exists(d + "/runs/r/summary.json"));
    expect_no_temp_files(d);
}

// ---------------------------------------------------------------- 13. messages have a bounded length

namespace {

// Every line of a command's output (stdout and stderr) is short, and all of it together is too.
void expect_bounded_output(const RunResult& r, size_t max_total = 8000) {
    const std::string all = r.out + r.err;
    EXPECT_LT(all.size(), max_total) << all.substr(0, 2000);
    size_t begin = 0;
    while (begin < all.size()) {
        size_t end = all.find('\n', begin);
        if (end == std::string::npos) end = all.size();
        EXPECT_LT(end - begin, 1000u) << all.substr(begin, 300);
        begin = end + 1;
    }
}

}  // namespace

TEST(BadInputMessages, AHugeBadJsonlLineIsQuotedBounded) {
    std::string d = scratch_dir("bad-huge-line");
    const std::string good = read_file(kData).substr(0, read_file(kData).find('\n') + 1);
    const std::string mb(1 << 20, 'a');
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"unterminated", "{\"prompt\": \"" + mb + "\n"},                                   // the parser quotes what it read
        {"garbage", "{\"prompt\": " + mb + "}\n"},                                          // an invalid literal
        {"role", "{\"messages\": [{\"role\": \"" + mb + "\", \"content\": \"x\"}]}\n"},     // an unknown role
        {"long-id", "{\"id\": \"" + mb + "\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}\n"},  // named by its id
    };
    for (const auto& [name, line] : cases) {
        const std::string file = d + "/" + name + ".jsonl";
        write_file(file, good + line);
        auto c = run("data check " + q(file), 60);
        EXPECT_EQ(c.exit_code, 3) << name;
        EXPECT_NE((c.out + c.err).find("line 2"), std::string::npos) << name << ": " << (c.out + c.err).substr(0, 2000);
        expect_bounded_output(c);
        ASSERT_TINY_MODEL();
        {
            std::string cfg = write_config(d, tiny_model_dir());
            std::string text = read_file(cfg);
            text.replace(text.find(d + "/train.jsonl"), (d + "/train.jsonl").size(), file);
            write_file(cfg, text);
            auto t = run("--config " + q(cfg) + " --dry-run", 60);
            expect_error(t, 3, name + ".jsonl:2");
            expect_bounded_output(t);
        }
        EXPECT_EQ(read_file(file), good + line) << name;
    }
}

TEST(BadInputMessages, HugeConfigValuesAreQuotedBounded) {
    const std::string mb(1 << 20, 'x');
    // model config.json (model-info and export read it before any weight).
    ASSERT_TINY_MODEL();
    {
        const std::vector<std::pair<nlohmann::json, std::string>> cases = {
            {{{"hidden_act", mb}}, "hidden_act"},
            {{{"num_hidden_layers", mb}}, "num_hidden_layers"},
            {{{"architectures", {mb}}}, "architectures"},
            {{{"rope_scaling", {{"rope_type", mb}}}}, "rope_scaling"},
        };
        int i = 0;
        for (const auto& [patch, needle] : cases) {
            std::string d = scratch_dir("bad-huge-config-json-" + std::to_string(i++));
            std::string m = model_with(d, patch);
            auto r = run("model-info " + q(m), 60);
            expect_error(r, 3, needle);
            expect_bounded_output(r);
            auto e = run("export --model " + q(m) + " --out " + q(d + "/out"), 60);
            expect_error(e, 3, needle);
            expect_bounded_output(e);
        }
    }
    // The YAML configuration and --set: a huge value, a huge unknown key (no slow suggestion).
    std::string d = scratch_dir("bad-huge-yaml");
    const std::vector<std::pair<std::string, std::string>> yaml = {
        {"train:\n  lr: " + mb + "\n", "train.lr"},
        {"train:\n  device: " + mb + "\n", "train.device"},
        {"objective:\n  method: " + mb + "\n", "objective.method"},
        {"train:\n  ? " + mb + "\n  : 1\n", "unknown key"},  // an explicit key: plain ones stop at 1024 characters
        {"run:\n  name: a/" + mb + "\n", "run.name"},
    };
    int i = 0;
    for (const auto& [text, needle] : yaml) {
        std::string file = d + "/c" + std::to_string(i++) + ".yaml";
        write_file(file, text);
        auto r = run("--config " + q(file) + " --dry-run", 30);
        expect_error(r, 2, needle);
        expect_bounded_output(r);
    }
    write_file(d + "/empty.yaml", "{}\n");
    auto s = run("--config " + q(d + "/empty.yaml") + " --dry-run --set train.grad_clip=" + std::string(100000, '9') + "x", 30);
    expect_error(s, 2, "train.grad_clip");
    expect_bounded_output(s);
}

// ---------------------------------------------------------------- 14. wording

TEST(BadInputMessages, NonFiniteNumbersRangesAndModelFilesAreWordedPlainly) {
    std::string d = scratch_dir("bad-wording");
    // A number key given an infinity or a NaN: the key and "a finite number >= 0".
    for (const std::string v : {".inf", "inf", "-.inf", ".nan", "1e999"}) {
        write_file(d + "/c.yaml", "train:\n  grad_clip: " + v + "\n");
        auto r = run("--config " + q(d + "/c.yaml") + " --dry-run", 30);
        expect_error(r, 2, "key 'train.grad_clip' must be a finite number >= 0, got '" + v + "'");
        auto s = run("--config " + q(d + "/c.yaml") + " --dry-run --set train.grad_clip=" + v, 30);
        expect_error(s, 2, "train.grad_clip");
    }
    // A bounded key reads as a plain range (no 309-digit "inf").
    write_file(d + "/c.yaml", "objective:\n  mask:\n    threshold:\n      q: 1.5\n");
    auto q15 = run("--config " + q(d + "/c.yaml") + " --dry-run", 30);
    expect_error(q15, 2, "objective.mask.threshold.q");
    EXPECT_NE(q15.err.find("[0, 1]"), std::string::npos) << q15.err;
    // --jobs -1: the flag and a range a person can read.
    fs::copy_file(kData, d + "/in.jsonl");
    for (const std::string v : {"-1", "x", "1e999"}) {
        auto j = run("data check " + q(d + "/in.jsonl") + " --jobs " + v, 30);
        expect_error(j, 2, "--jobs");
        EXPECT_EQ(j.err.find("0000000000"), std::string::npos) << j.err;
        EXPECT_LT(j.err.size(), 300u) << j.err;
    }
    // A file that is not a SentencePiece model: one line naming it, exit 3, no library internals.
    write_file(d + "/tokenizer.model", "this is not a protobuf \x01\x02\x03 at all\n");
    write_file(d + "/text.txt", "hello\n");
    for (const std::string& tok : {d + "/tokenizer.model", d}) {
        auto r = run("tokenize --tokenizer " + q(tok) + " " + q(d + "/text.txt"), 30);
        expect_error(r, 3, d + "/tokenizer.model: not a SentencePiece model");
        EXPECT_EQ(r.err.find(".cc"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("INTERNAL"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("ParseFromArray"), std::string::npos) << r.err;
    }
}

// ================================================================ the newer commands
// generate, eval, report, LoRA adapters, ZeRO shards and rank variables, --against: the classes of
// the second bad-input review, each through the real binary.

namespace {

const std::string kTasks = std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl";

// A LoRA adapter of the tiny model made by the binary itself (two training steps), in
// dir/runs/lora/checkpoint-0000002; its config is dir/config.yaml.
std::string train_lora_adapter(const std::string& dir, std::string* cfg) {
    *cfg = write_config(dir, tiny_model_dir());
    auto t = run("--config " + q(*cfg) + " --run-name lora --set model.lora.enabled=true --set model.lora.r=2");
    EXPECT_EQ(t.exit_code, 0) << t.err;
    const std::string a = dir + "/runs/lora/checkpoint-0000002";
    EXPECT_TRUE(fs::exists(a + "/adapter_config.json")) << t.err;
    return a;
}

// A short run of the tiny model, for report: dir/runs/r with metrics.jsonl and summary.json.
std::string train_run(const std::string& dir) {
    std::string cfg = write_config(dir, tiny_model_dir());
    auto t = run("--config " + q(cfg));
    EXPECT_EQ(t.exit_code, 0) << t.err;
    return dir + "/runs/r";
}

std::string one_prompt_file(const std::string& path) {
    write_file(path, "{\"id\": \"p\", \"prompt\": \"Write a CUDA kernel.\"}\n");
    return path;
}

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// `depth` nested arrays around 1.
std::string deep_array(size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

// Overwrites the data of tensor `name` in a safetensors file with 0xFF bytes (NaN in F32).
void poison_tensor(const std::string& path, const std::string& name) {
    std::string bytes = read_file(path);
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    const nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
    const auto off = header.at(name).at("data_offsets");
    for (uint64_t i = off[0].get<uint64_t>(); i < off[1].get<uint64_t>(); ++i) bytes[8 + n + i] = '\xff';
    write_file(path, bytes);
}

}  // namespace

// ---------------------------------------------------------------- W1. an output that is an input

TEST(BadInputWave2OutputIsInput, GenerateRefusesItsAdapterFiles) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("w2-out-adapter");
    std::string cfg;
    const std::string adapter = train_lora_adapter(d, &cfg);
    one_prompt_file(d + "/p.jsonl");
    fs::create_symlink(adapter + "/adapter_config.json", d + "/link.json");
    auto before = snapshot(d);
    for (const std::string& out : {adapter + "/adapter_model.safetensors", adapter + "/adapter_config.json", d + "/link.json"}) {
        auto r = run("generate --config " + q(cfg) + " --set model.lora.path=" + q(adapter) + " --prompts " +
                     q(d + "/p.jsonl") + " --out " + q(out) + " --max-new-tokens 2");
        expect_error(r, 2, "is the input");
        EXPECT_EQ(snapshot(d), before) << out;
    }
    expect_no_temp_files(d);
}

TEST(BadInputWave2OutputIsInput, ReportRefusesARunsOwnFilesAndTrainItsDataInTheRunFolder) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("w2-out-report");
    const std::string run_dir = train_run(d);
    ASSERT_TRUE(fs::exists(run_dir + "/summary.json"));
    fs::create_hard_link(run_dir + "/metrics.jsonl", d + "/hard.jsonl");
    auto before = snapshot(d);
    for (const std::string& out : {run_dir + "/metrics.jsonl", run_dir + "/summary.json", d + "/hard.jsonl"}) {
        auto r = run("report " + q(run_dir) + " --out " + q(out));
        expect_error(r, 2, "is the input");
        EXPECT_EQ(snapshot(d), before) << out;
    }
    // The same rule in a command not named by the review: a training data file kept in the run
    // folder under a name the run writes.
    std::string d2 = scratch_dir("w2-out-train");
    std::string cfg = write_config(d2, tiny_model_dir());
    fs::create_directories(d2 + "/runs/r");
    fs::copy_file(kData, d2 + "/runs/r/metrics.jsonl");
    auto before2 = snapshot(d2);
    auto t = run("--config " + q(cfg) + " --set data.train=" + q(d2 + "/runs/r/metrics.jsonl"));
    expect_error(t, 2, "is the input");
    EXPECT_EQ(snapshot(d2), before2);
}

// ---------------------------------------------------------------- W2. FIFOs and endless devices

TEST(BadInputWave2Hang, FifosAndDevicesAreRefusedBeforeReading) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("w2-fifo");
    const std::string fifo = d + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // A run folder whose metrics.jsonl is a FIFO no one writes.
    fs::create_directories(d + "/run");
    ASSERT_EQ(::mkfifo((d + "/run/metrics.jsonl").c_str(), 0600), 0);
    std::string cfg = write_config(d, tiny_model_dir());
    struct Case {
        std::string args;
        int code;
        std::string needle;
    };
    const std::vector<Case> cases = {
        {"report " + q(d + "/run") + " --out " + q(d + "/r.html"), 3, d + "/run/metrics.jsonl"},
        {"generate --config " + q(cfg) + " --prompts /dev/zero --out " + q(d + "/g.jsonl"), 3, "/dev/zero"},
        {"generate --config " + q(cfg) + " --prompts " + q(fifo) + " --out " + q(d + "/g.jsonl"), 3, fifo},
        {"data check " + q(d + "/train.jsonl") + " --against /dev/zero", 3, "/dev/zero"},
        {"data check " + q(fifo), 3, fifo},
        {"eval --reference --tasks " + q(fifo) + " --judge compile --out " + q(d + "/e"), 3, fifo},
        {"eval --results /dev/zero --tasks " + q(kTasks) + " --judge compile --out " + q(d + "/e"), 3, "/dev/zero"},
        {"tag /dev/zero", 3, "/dev/zero"},
        {"tokenize " + q(fifo) + " --tokenizer " + q(tiny_model_dir()), 3, fifo},
        {"--config " + q(fifo) + " --dry-run", 2, fifo},
    };
    for (const Case& c : cases) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = run(c.args, 30);
        expect_error(r, c.code, c.needle);
        EXPECT_TRUE(r.err.find("FIFO") != std::string::npos || r.err.find("device") != std::string::npos)
            << c.args << ": " << r.err;
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 25.0) << c.args;
    }
}

// ---------------------------------------------------------------- W3. deep JSON

TEST(BadInputWave2Depth, DeepJsonIsAOneLineErrorNotACrash) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("w2-deep");
    std::string cfg = write_config(d, tiny_model_dir());
    one_prompt_file(d + "/p.jsonl");
    // generate.stop a million levels deep (in the YAML file: too long for a command line).
    write_file(d + "/stop.yaml", read_file(cfg) + "generate:\n  stop: '" + deep_array(1000000) + "'\n");
    auto s = run("generate --config " + q(d + "/stop.yaml") + " --prompts " + q(d + "/p.jsonl") + " --out " +
                 q(d + "/g.jsonl"), 60);
    expect_error(s, 2, "generate.stop");
    EXPECT_FALSE(fs::exists(d + "/g.jsonl"));
    // A tasks file with a 300k-deep field on its second line.
    const std::string tasks = read_file(kTasks);
    const size_t second = tasks.find('\n') + 1;
    write_file(d + "/tasks.jsonl", tasks.substr(0, second) + "{\"id\": 9, \"deep\": " + deep_array(300000) + "}\n");
    auto t = run("eval --reference --tasks " + q(d + "/tasks.jsonl") + " --judge compile --out " + q(d + "/e"), 60);
    expect_error(t, 3, d + "/tasks.jsonl:2: JSON nested deeper than 128 levels");
    // The same task as --against of data check.
    auto a = run("data check " + q(d + "/train.jsonl") + " --against " + q(d + "/tasks.jsonl"), 60);
    expect_error(a, 3, d + "/tasks.jsonl:2");
    // A 200k-deep summary.json in a run folder.
    fs::create_directories(d + "/run");
    write_file(d + "/run/metrics.jsonl", "{\"step\": 1, \"loss\": 2.0}\n");
    write_file(d + "/run/summary.json", "{\"a\": " + deep_array(200000) + "}\n");
    auto r = run("report " + q(d + "/run") + " --out " + q(d + "/r.html"), 60);
    expect_error(r, 3, d + "/run/summary.json: JSON nested deeper");
    EXPECT_FALSE(fs::exists(d + "/r.html"));
    // A deep config.json of a model folder, and a deep training record (rejected like any bad line).
    std::string m = copy_tiny_model(d);
    std::string conf = read_file(m + "/config.json");
    conf.insert(conf.find('{') + 1, "\"deep\": " + deep_array(100000) + ",");
    write_file(m + "/config.json", conf);
    auto mi = run("model-info " + q(m), 60);
    expect_error(mi, 3, m + "/config.json");
    write_file(d + "/deep.jsonl", read_file(kData).substr(0, read_file(kData).find('\n') + 1) +
                                      "{\"prompt\": " + deep_array(500000) + ", \"response\": \"b\"}\n");
    auto c = run("data check " + q(d + "/deep.jsonl"), 60);
    EXPECT_EQ(c.exit_code, 3) << c.err;
    EXPECT_NE((c.out + c.err).find("line 2 REJECTED: invalid_json: JSON nested deeper than 128 levels"), std::string::npos)
        << (c.out + c.err).substr(0, 2000);
}

// ---------------------------------------------------------------- W6. state that does not belong together

TEST(BadInputWave2State, AdapterValuesAreRangeCheckedAndNanWeightsRefused) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("w2-adapter");
    std::string cfg;
    const std::string adapter = train_lora_adapter(d, &cfg);
    one_prompt_file(d + "/p.jsonl");
    const nlohmann::json good = nlohmann::json::parse(read_file(adapter + "/adapter_config.json"));
    auto gen = [&](const std::string& a) {
        return run("generate --config " + q(cfg) + " --set model.lora.path=" + q(a) + " --prompts " + q(d + "/p.jsonl") +
                       " --out " + q(d + "/g.jsonl") + " --max-new-tokens 2",
                   60);
    };
    struct Case {
        std::string key;
        nlohmann::json value;
        std::string needle;
    };
    for (const Case& c : {Case{"r", int64_t(1) << 40, "'r' must be in [1, 65536]"}, Case{"r", 4.7, "'r' must be an integer"},
                          Case{"r", "2", "'r' must be a number"}, Case{"lora_alpha", -1.0, "'lora_alpha' must be in"},
                          Case{"lora_dropout", 1.5, "'lora_dropout' must be in"}}) {
        const std::string a = d + "/bad-" + c.key + "-" + c.value.dump();
        fs::copy(adapter, a, fs::copy_options::recursive);
        nlohmann::json j = good;
        j[c.key] = c.value;
        write_file(a + "/adapter_config.json", j.dump());
        auto before = snapshot(a);
        auto r = gen(a);
        expect_error(r, 3, a + "/adapter_config.json: " + c.needle);
        EXPECT_EQ(snapshot(a), before);
    }
    EXPECT_FALSE(fs::exists(d + "/g.jsonl"));
    // NaN weights.
    const std::string nan = d + "/nan";
    fs::copy(adapter, nan, fs::copy_options::recursive);
    poison_tensor(nan + "/adapter_model.safetensors", "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
    auto r = gen(nan);
    expect_error(r, 3, "holds NaN or infinite values");
    // A mismatch with the model is one line, however many tensors differ.
    const std::string more = d + "/more";
    fs::copy(adapter, more, fs::copy_options::recursive);
    nlohmann::json j = good;
    j["r"] = 4;  // every A and B of the adapter has the shape of r = 2
    write_file(more + "/adapter_config.json", j.dump());
    auto m = gen(more);
    expect_error(m, 3, "the adapter does not match the model: shape of ");
    EXPECT_NE(m.err.find(" more)"), std::string::npos) << m.err;
    EXPECT_EQ(m.err.find("\n  "), std::string::npos) << m.err;  // no continuation lines
}

TEST(BadInputWave2State, AnOptimizerFileFromAnotherCheckpointIsRefused) {
    ASSERT_TINY_MODEL();
    for (const std::string stage : {"0", "1"}) {
        std::string d = scratch_dir("w2-shard-" + stage);
        std::string cfg = write_config(d, tiny_model_dir());
        const std::string set = " --set distributed.zero_stage=" + stage + " --set checkpoint.keep_last=0";
        auto a = run("--config " + q(cfg) + set + " --set train.max_steps=4");
        ASSERT_EQ(a.exit_code, 0) << a.err;
        const std::string c2 = d + "/runs/r/checkpoint-0000002", c4 = d + "/runs/r/checkpoint-0000004";
        const std::string name = stage == "0" ? "optimizer.safetensors" : "optimizer-0-of-1.safetensors";
        ASSERT_TRUE(fs::exists(c2 + "/" + name) && fs::exists(c4 + "/" + name)) << a.err;
        // With the step-2 file copied into step 4 the resume is refused, the checkpoints untouched.
        fs::copy_file(c4 + "/" + name, d + "/step4-" + name);
        fs::copy_file(c2 + "/" + name, c4 + "/" + name, fs::copy_options::overwrite_existing);
        auto before = snapshot(c4);
        auto before2 = snapshot(c2);
        auto r = run("--config " + q(cfg) + set + " --set train.max_steps=6 --extend --resume " + q(c4));
        expect_error(r, 3, c4 + "/" + name + " was written at step 2, the checkpoint is at step 4");
        EXPECT_TRUE(snapshot(c4) == before && snapshot(c2) == before2);
        // The same step of another run (same configuration): the identity differs.
        std::string d2 = scratch_dir("w2-shard-other-" + stage);
        std::string cfg2 = write_config(d2, tiny_model_dir());
        auto b = run("--config " + q(cfg2) + set + " --set train.max_steps=4");
        ASSERT_EQ(b.exit_code, 0) << b.err;
        const std::string o4 = d2 + "/runs/r/checkpoint-0000004";
        auto ok = run("--config " + q(cfg2) + set + " --set train.max_steps=6 --extend --resume " + q(o4) + " --run-name r2");
        EXPECT_EQ(ok.exit_code, 0) << ok.err;  // as saved: resumes
        fs::copy_file(d + "/step4-" + name, o4 + "/" + name, fs::copy_options::overwrite_existing);
        auto x = run("--config " + q(cfg2) + set + " --set train.max_steps=6 --extend --resume " + q(o4) + " --run-name r3");
        expect_error(x, 3, o4 + "/" + name + " belongs to another checkpoint");
    }
}

// ---------------------------------------------------------------- W7. wrong path types

TEST(BadInputWave2PathTypes, FoldersWhereFilesBelongAndFilesWhereFoldersBelong) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("w2-types");
    std::string m = copy_tiny_model(d);
    fs::remove(m + "/generation_config.json");
    fs::create_directories(m + "/generation_config.json");
    std::string cfg = write_config(d, m);
    one_prompt_file(d + "/p.jsonl");
    auto g = run("generate --config " + q(cfg) + " --prompts " + q(d + "/p.jsonl") + " --out " + q(d + "/g.jsonl") +
                 " --max-new-tokens 2", 60);
    expect_error(g, 3, m + "/generation_config.json' is a folder");
    EXPECT_FALSE(fs::exists(d + "/g.jsonl"));
    fs::create_directories(d + "/run/metrics.jsonl");
    auto r = run("report " + q(d + "/run") + " --out " + q(d + "/r.html"), 60);
    expect_error(r, 3, d + "/run/metrics.jsonl' is a folder");
    fs::create_directories(d + "/run2/summary.json");
    write_file(d + "/run2/metrics.jsonl", "{\"step\": 1, \"loss\": 2.0}\n");
    auto s = run("report " + q(d + "/run2") + " --out " + q(d + "/r.html"), 60);
    expect_error(s, 3, d + "/run2/summary.json' is a folder");
    EXPECT_FALSE(fs::exists(d + "/r.html"));
    write_file(d + "/e.txt", "mine\n");
    auto e = run("eval --reference --tasks " + q(kTasks) + " --judge compile --out " + q(d + "/e.txt"), 60);
    expect_error(e, 2, d + "/e.txt' is a file");
    EXPECT_EQ(read_file(d + "/e.txt"), "mine\n");
}

// ---------------------------------------------------------------- W8. rank variables

TEST(BadInputWave2Ranks, RankVariablesAndBackendAreCheckedBeforeAnyCollective) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("w2-ranks");
    std::string cfg = write_config(d, tiny_model_dir());
    struct Case {
        std::string env, extra, needle;
    };
    const std::vector<Case> cases = {
        {"WORLD_SIZE=99999999999999999999 RANK=0", "", "WORLD_SIZE='99999999999999999999' is not an integer in"},
        {"WORLD_SIZE=2 RANK=-1", "", "RANK='-1' is not an integer"},
        {"WORLD_SIZE=2 RANK=2", "", "rank 2 is not below the world size 2"},
        {"WORLD_SIZE=2 RANK=1 LOCAL_RANK=5", "", "local rank 5 is not below the world size 2"},
        {"RANK=1", "", "RANK=1 is set but WORLD_SIZE is not"},
        {"WORLD_SIZE=2 RANK=0 MASTER_ADDR='a b'", "", "MASTER_ADDR='a b' is not a host name"},
        {"WORLD_SIZE=2 RANK=0 MASTER_PORT=70000", "", "MASTER_PORT='70000' is not an integer in [0, 65535]"},
        {"", " --set distributed.backend=nccl --set train.device=cpu", "'distributed.backend' is nccl"},
    };
    for (const Case& c : cases) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = run_command("env " + c.env + " timeout -k 5 60 '" + std::string(CUSET_BINARY) + "' --config " + q(cfg) + c.extra);
        expect_error(r, 2, c.needle);
        EXPECT_EQ(r.err.find("frame #"), std::string::npos) << r.err;  // no c10d stack trace
        EXPECT_LT(count_lines(r.err), 4) << r.err;
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 50.0) << c.env;
        EXPECT_FALSE(fs::exists(d + "/runs/r/metrics.jsonl")) << c.env;
    }
    // A lone rank 1 whose rank 0 never comes: the rendezvous times out with one line, not with
    // c10d's stack trace of every connection attempt.
    auto r = run_command("env WORLD_SIZE=2 RANK=1 MASTER_PORT=29731 timeout -k 5 60 '" + std::string(CUSET_BINARY) +
                         "' --config " + q(cfg) + " --set distributed.timeout_s=3");
    expect_error(r, 4, "rank 1 could not join the rendezvous at 127.0.0.1:29731 within 3 s");
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

// ---------------------------------------------------------------- W9. messages and repeated records

TEST(BadInputWave2Records, NulBytesAfterAPromptAndARepeatedResultAreRefused) {
    ASSERT_TINY_MODEL();
    std::string d = scratch_dir("w2-records");
    std::string cfg = write_config(d, tiny_model_dir());
    const std::string prompt = "{\"id\": \"p\", \"prompt\": \"Write a CUDA kernel.\"}";  // 45 bytes
    write_file(d + "/p.jsonl", prompt + std::string(3, '\0') + "\n");
    auto g = run("generate --config " + q(cfg) + " --prompts " + q(d + "/p.jsonl") + " --out " + q(d + "/g.jsonl") +
                 " --max-new-tokens 2", 60);
    expect_error(g, 3, d + "/p.jsonl:1: invalid JSON: a NUL byte at column 46");
    EXPECT_FALSE(fs::exists(d + "/g.jsonl"));
    // One task three times in a results file: refused (it would count three times in every rate).
    const std::string rec = "{\"id\": 0, \"task_name\": \"Vector_Add\", \"code1\": \"int main() {}\", \"response1\": \"x\"}\n";
    write_file(d + "/results.jsonl", rec + rec + rec);
    auto e = run("eval --results " + q(d + "/results.jsonl") + " --tasks " + q(kTasks) + " --judge compile --out " +
                 q(d + "/e"), 60);
    expect_error(e, 3, d + "/results.jsonl:2: id 0 again (first at line 1)");
}
