// GRPO as the trainer's steps (rl/grpo_steps.h), through the real binary on the CPU with the
// compile judge (nvcc, contained):
// - the task order: every task once per pass over the task file, a step's tasks split over ranks
//   in whole groups, a function of the seed;
// - a run logs every completion's verdict and reward (rewards.jsonl) and the step's curves
//   (metrics.jsonl), and resumes exactly: the continuation from a checkpoint writes the same
//   metrics, rewards and weights, and records a stopped run wrote past its checkpoint are cut;
// - it learns: a policy that writes a compiling and a non-compiling program about equally often
//   (data/tiny-coder fine-tuned here on such answers for the purpose) writes the compiling one
//   more often after a short GRPO run, by a margin stated below;
// - retry_all_failed: tasks without signal taken again at the end of the pass, on one rank or two,
//   single- or multi-turn, and resumed exactly;
// - configuration refusals (exit 2, one line naming the key).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/eval/cudabench.h"
#include "cuset/eval/repair.h"
#include "cuset/model/safetensors.h"
#include "cuset/model/safetensors_torch.h"
#include "cuset/rl/grpo_steps.h"
#include "test_util.h"
#include "weight_diff.h"

namespace fs = std::filesystem;
using cuset::test::kDefault;
using cuset::test::lines_of;
using cuset::test::read_file;
using cuset::test::read_metrics;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

const std::string kTasks = std::string(CUSET_SOURCE_DIR) + "/data/cuda-tasks/tasks.jsonl";
const std::string kDemo = std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder";

// The two answers the purpose-made policy gives: one nvcc accepts, one it rejects (an undeclared
// name). They part at the token after `return`.
const char* kCompiles = "```cuda\nint main() { return 0; }\n```";
const char* kFails = "```cuda\nint main() { return missing_value; }\n```";

// The prompts' system message in these runs (objective.grpo.system_prompt): CUDABench's own is
// about 1,300 tokens with the demo's tokenizer, which would make every step of a test ~20x longer.
const char* kSystem = "You write CUDA programs. Answer with one program in a ```cuda fence.";

// The first `n` tasks of the bundled task file, as their own file.
std::string write_tasks(const std::string& dir, size_t n) {
    std::ifstream in(kTasks);
    std::string out, line;
    for (size_t i = 0; i < n && std::getline(in, line);) {
        if (line.empty()) continue;
        out += line + "\n";
        ++i;
    }
    const std::string path = dir + "/tasks.jsonl";
    write_file(path, out);
    return path;
}

// data/tiny-coder fine-tuned (plain SFT) to answer each task's GRPO prompt (kSystem and the
// task's CUDABench user message at level 3, as rl/rollout.h sends them) with kCompiles or kFails,
// the two equally often: a policy whose compile reward GRPO can raise. Returns its checkpoint.
std::string make_policy(const std::string& dir, const std::string& tasks_file) {
    std::string data;
    for (const cuset::eval::Task& t : cuset::eval::load_tasks(tasks_file))
        for (int k = 0; k < 8; ++k) {
            json j = {{"system", kSystem},
                      {"prompt", cuset::eval::build_user_prompt(t, 3, cuset::eval::kDefaultGpuName)},
                      {"response", k % 2 ? kFails : kCompiles}};
            data += j.dump() + "\n";
        }
    write_file(dir + "/policy.jsonl", data);
    const std::string cfg = cuset::test::write_tiny_run_config(
        dir + "/policy.yaml", dir,
        {{"model.path", kDemo},
         {"data.train", dir + "/policy.jsonl"},
         {"data.eval", kDefault},
         {"data.max_seq_len", "512"},
         {"objective.method", "sft"},
         {"train.micro_batch_size", "4"},
         {"train.grad_accum", "1"},
         {"train.max_steps", "24"},
         {"train.lr", "2.0e-3"},
         {"train.schedule", "constant"},
         {"train.warmup_steps", "0"},
         {"checkpoint.keep_last", "1"}});
    auto r = run_cuset("--config " + cfg + " --run-name policy");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir + "/policy/checkpoint-0000024";
}

// A GRPO run's configuration on `policy` (the compile judge; other keys by `changes`).
std::string grpo_config(const std::string& dir, const std::string& name, const std::string& policy,
                        const std::string& tasks_file, const cuset::test::ConfigKeys& changes) {
    cuset::test::ConfigKeys keys = {{"model.path", policy},
                                    {"data.train", kDefault},
                                    {"data.eval", kDefault},
                                    {"objective.method", "grpo"},
                                    {"objective.grpo.tasks", tasks_file},
                                    {"objective.grpo.tasks_per_step", "2"},
                                    {"objective.grpo.num_generations", "4"},
                                    {"objective.grpo.max_completion_length", "24"},
                                    {"objective.grpo.judge", "compile"},
                                    {"objective.grpo.system_prompt", json(kSystem).dump()},
                                    {"eval.jobs", "2"},
                                    {"train.micro_batch_size", "8"},
                                    {"train.grad_accum", "1"},
                                    {"train.schedule", "constant"},
                                    {"train.warmup_steps", "0"},
                                    {"train.lr", "3.0e-4"}};
    keys.insert(keys.end(), changes.begin(), changes.end());  // a later key replaces an earlier one
    return cuset::test::write_tiny_run_config(dir + "/" + name + ".yaml", dir, keys);
}

std::vector<json> jsonl(const std::string& path) {
    std::vector<json> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(json::parse(line));
    return out;
}

// The records of every rank of run `run` of `dir` (rewards.jsonl, then rewards-rank<r>.jsonl), or
// of a one-process run, sorted: two runs that judged the same completions compare equal.
std::vector<std::string> sorted_records(const std::string& dir, const std::string& run) {
    std::vector<std::string> all = lines_of(dir + "/" + run + "/rewards.jsonl");
    for (int r = 1; fs::exists(dir + "/" + run + "/rewards-rank" + std::to_string(r) + ".jsonl"); ++r) {
        const std::vector<std::string> more = lines_of(dir + "/" + run + "/rewards-rank" + std::to_string(r) + ".jsonl");
        all.insert(all.end(), more.begin(), more.end());
    }
    std::sort(all.begin(), all.end());
    return all;
}

// Run `to` of `dir` made to resume from checkpoint `ckpt` of run `from`: a copy of the checkpoint
// folder and, with `rewards`, of the rewards file `from` wrote (records past the checkpoint included).
void resume_folder(const std::string& dir, const std::string& from, const std::string& to, const std::string& ckpt,
                   bool rewards) {
    fs::create_directories(dir + "/" + to);
    fs::copy(dir + "/" + from + "/" + ckpt, dir + "/" + to + "/" + ckpt, fs::copy_options::recursive);
    if (rewards) fs::copy_file(dir + "/" + from + "/rewards.jsonl", dir + "/" + to + "/rewards.jsonl");
}

// Runs `a` and `b` of `dir` ended alike: the weights of checkpoint `ckpt` bit for bit, and the
// same rewards.jsonl.
void expect_same_ending(const std::string& dir, const std::string& a, const std::string& b, const std::string& ckpt) {
    EXPECT_TRUE(read_file(dir + "/" + a + "/" + ckpt + "/model.safetensors") ==
                read_file(dir + "/" + b + "/" + ckpt + "/model.safetensors"))
        << b << " ended with other weights than " << a;
    EXPECT_EQ(lines_of(dir + "/" + b + "/rewards.jsonl"), lines_of(dir + "/" + a + "/rewards.jsonl"));
}

}  // namespace

TEST(GrpoSteps, TaskOrderCoversEveryTaskOncePerPassAndSplitsOverRanks) {
    const size_t n = 7;
    // 14 steps of 2 tasks = 4 passes over 7 tasks: each pass a permutation.
    std::vector<size_t> seq;
    for (int64_t s = 0; s < 14; ++s)
        for (size_t i : cuset::rl::grpo_step_tasks(11, n, 2, s, 0, 1)) seq.push_back(i);
    for (size_t pass = 0; pass < 4; ++pass) {
        std::set<size_t> seen(seq.begin() + pass * n, seq.begin() + (pass + 1) * n);
        EXPECT_EQ(seen.size(), n) << "pass " << pass << " repeats a task";
    }
    EXPECT_FALSE(std::equal(seq.begin(), seq.begin() + n, seq.begin() + n)) << "each pass is drawn anew";
    // Two ranks take the two halves of the one-rank step, in order.
    for (int64_t s = 0; s < 5; ++s) {
        std::vector<size_t> all = cuset::rl::grpo_step_tasks(11, n, 4, s, 0, 1);
        std::vector<size_t> r0 = cuset::rl::grpo_step_tasks(11, n, 4, s, 0, 2);
        std::vector<size_t> r1 = cuset::rl::grpo_step_tasks(11, n, 4, s, 1, 2);
        r0.insert(r0.end(), r1.begin(), r1.end());
        EXPECT_EQ(r0, all) << "step " << s;
    }
    EXPECT_EQ(cuset::rl::grpo_step_tasks(11, n, 2, 3, 0, 1), cuset::rl::grpo_step_tasks(11, n, 2, 3, 0, 1));
    std::vector<size_t> other;
    for (int64_t s = 0; s < 4; ++s)
        for (size_t i : cuset::rl::grpo_step_tasks(12, n, 2, s, 0, 1)) other.push_back(i);
    EXPECT_FALSE(std::equal(other.begin(), other.end(), seq.begin())) << "another seed, another order";
    EXPECT_THROW(cuset::rl::grpo_step_tasks(11, n, 3, 0, 0, 2), cuset::UsageError) << "3 tasks do not split over 2 ranks";
}

TEST(GrpoSteps, ARunLogsEveryVerdictAndResumesExactly) {
    const std::string dir = scratch_dir("grpo-steps-resume");
    const std::string tasks = write_tasks(dir, 3);
    const std::string policy = make_policy(dir, tasks);
    ASSERT_TRUE(fs::exists(policy + "/model.safetensors"));
    const std::string cfg = grpo_config(dir, "resume", policy, tasks,
                                        {{"train.max_steps", "4"}, {"checkpoint.every", "2"}, {"checkpoint.keep_last", "0"}});
    auto a = run_cuset("--config " + cfg + " --run-name a");
    ASSERT_EQ(a.exit_code, 0) << a.err;

    // Every completion's record: 4 steps x 2 tasks x 4 completions, with its verdict and reward.
    const std::vector<json> rec = jsonl(dir + "/a/rewards.jsonl");
    ASSERT_EQ(rec.size(), 32u);
    std::map<std::string, int> statuses;
    for (size_t i = 0; i < rec.size(); ++i) {
        EXPECT_EQ(rec[i]["step"].get<int64_t>(), static_cast<int64_t>(i / 8 + 1));
        EXPECT_EQ(rec[i]["sample"].get<int64_t>(), static_cast<int64_t>(i % 4 + 1));
        const std::string st = rec[i]["status"].get<std::string>();
        ++statuses[st];
        // The default weights: format 0.1 + compiles 0.2 for a compiled program, format only for
        // one nvcc rejects, nothing without a program.
        const double want = st == "compiled" ? 0.3 : st == "compile-error" ? 0.1 : 0.0;
        EXPECT_NEAR(rec[i]["reward"].get<double>(), want, 1e-12) << st;
        EXPECT_LE(rec[i]["tokens"].get<int64_t>(), 24);
    }
    EXPECT_GT(statuses["compiled"], 0) << "the policy writes the compiling program";
    EXPECT_GT(statuses["compile-error"], 0) << "and the failing one";

    // The step's curves: the mean reward is the mean of its 8 records; the statuses sum to 8.
    const std::vector<json> ma = read_metrics(dir + "/a");
    ASSERT_EQ(ma.size(), 4u);
    for (size_t s = 0; s < 4; ++s) {
        double sum = 0;
        for (size_t i = 8 * s; i < 8 * s + 8; ++i) sum += rec[i]["reward"].get<double>();
        // The step takes its rewards as fp32 ([N] tensor), the records as doubles: each differs by
        // at most half an fp32 ulp at 0.3, 1.5e-8, and so does their mean.
        EXPECT_NEAR(ma[s]["reward"].get<double>(), sum / 8, 3e-8) << "step " << s + 1;
        int64_t n = 0;
        for (auto& [k, v] : ma[s]["status"].items()) n += v.get<int64_t>();
        EXPECT_EQ(n, 8);
        for (const char* k : {"reward_std", "completion_length", "clip_ratio_region", "generate_s", "judge_s", "update_s",
                              "groups_judged_while_sampling"})
            EXPECT_TRUE(ma[s].contains(k)) << k;
    }

    // Continue from the step-2 checkpoint in a fresh process and run folder, which also holds
    // the records the stopped run wrote past it (steps 3-4): they are cut, then written again.
    resume_folder(dir, "a", "b", "checkpoint-0000002", true);
    auto b = run_cuset("--config " + cfg + " --run-name b --resume auto");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(lines_of(dir + "/b/rewards.jsonl"), lines_of(dir + "/a/rewards.jsonl"));
    const std::vector<json> mb = read_metrics(dir + "/b");
    ASSERT_EQ(mb.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(mb[i]["step"], ma[i + 2]["step"]);
        // Bit-identical continuation: the same doubles.
        EXPECT_EQ(mb[i]["loss"].get<double>(), ma[i + 2]["loss"].get<double>());
        EXPECT_EQ(mb[i]["grad_norm"].get<double>(), ma[i + 2]["grad_norm"].get<double>());
        EXPECT_EQ(mb[i]["reward"].get<double>(), ma[i + 2]["reward"].get<double>());
    }
    EXPECT_TRUE(read_file(dir + "/a/checkpoint-0000004/model.safetensors") ==
                read_file(dir + "/b/checkpoint-0000004/model.safetensors"))
        << "final weights differ";
    EXPECT_TRUE(read_file(dir + "/a/checkpoint-0000004/model.safetensors") !=
                read_file(dir + "/a/checkpoint-0000002/model.safetensors"))
        << "the steps changed the weights";
    EXPECT_FALSE(fs::exists(dir + "/a/grpo-work")) << "the judge's scratch folder is removed";
}

TEST(GrpoSteps, ThePolicyLearnsTheCompileReward) {
    const std::string dir = scratch_dir("grpo-steps-learn");
    const std::string tasks = write_tasks(dir, 2);
    const std::string policy = make_policy(dir, tasks);
    const std::string cfg = grpo_config(dir, "learn", policy, tasks, {{"train.max_steps", "16"}});
    auto r = run_cuset("--config " + cfg + " --run-name learn");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<json> m = read_metrics(dir + "/learn");
    ASSERT_EQ(m.size(), 16u);
    auto mean_reward = [&](size_t from, size_t to) {
        double s = 0;
        for (size_t i = from; i < to; ++i) s += m[i]["reward"].get<double>();
        return s / static_cast<double>(to - from);
    };
    const double first = mean_reward(0, 4), last = mean_reward(12, 16);
    // A completion's reward is 0.1 (rejected) or 0.3 (compiled): the compiled share is
    // (reward - 0.1) / 0.2. The policy starts near half; the margin asked, 0.05 in mean reward,
    // is a quarter of the reward's range and 25 percentage points of compiled share.
    EXPECT_GT(last, first + 0.05) << "mean reward of steps 1-4 " << first << ", of steps 13-16 " << last;
}

// The judge's finding about kFails (the compile-only judge's first error line), found by judging
// it through `eval --results`, and the user turn that carries it (eval's repair turn).
std::string compile_feedback(const std::string& dir, const std::string& tasks_file) {
    const cuset::eval::Task t = cuset::eval::load_tasks(tasks_file).at(0);
    json line = {{"id", t.id}, {"task_name", t.task_name}, {"code1", "int main() { return missing_value; }"}};
    write_file(dir + "/fails.jsonl", line.dump() + "\n");
    auto r = run_cuset("eval --results " + dir + "/fails.jsonl --tasks " + tasks_file + " --judge compile --out " + dir +
                       "/fails.eval --set log.progress=never");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(read_file(dir + "/fails.eval/eval.json"));
    const json& s = j["tasks"][0]["samples"][0];
    EXPECT_EQ(s["status"], "compile-error") << s.dump();
    return cuset::eval::repair_turn(cuset::judge::Status::kCompileError, s["error"].get<std::string>());
}

// Multi-turn GRPO (objective.grpo.turns 2) learns what the second turn is for: a policy that
// first answers with the failing program, and after the judge's finding answers with the
// compiling or the failing program about equally often (data/tiny-coder fine-tuned here on such
// conversations), answers the finding with the compiling one more often after a short run. Every
// turn has its line in rewards.jsonl (turn, return, advantage); metrics.jsonl has mean_turns.
// A checkpoint inside a generation (num_iterations 2) keeps the per-turn advantages, and a run
// resumed from it ends as the uninterrupted one.
TEST(GrpoSteps, MultiTurnTheSecondTurnLearnsToAnswerTheFinding) {
    const std::string dir = scratch_dir("grpo-steps-turns");
    const std::string tasks = write_tasks(dir, 2);
    const std::string feedback = compile_feedback(dir, tasks);
    ASSERT_FALSE(feedback.empty());
    std::string data;
    for (const cuset::eval::Task& t : cuset::eval::load_tasks(tasks))
        for (int k = 0; k < 8; ++k) {
            json msgs = json::array({{{"role", "system"}, {"content", kSystem}},
                                     {{"role", "user"}, {"content", cuset::eval::build_user_prompt(t, 3, cuset::eval::kDefaultGpuName)}},
                                     {{"role", "assistant"}, {"content", kFails}},
                                     {{"role", "user"}, {"content", feedback}},
                                     {{"role", "assistant"}, {"content", k % 2 ? kFails : kCompiles}}});
            data += json({{"messages", msgs}}).dump() + "\n";
        }
    write_file(dir + "/policy.jsonl", data);
    const std::string pcfg = cuset::test::write_tiny_run_config(
        dir + "/policy.yaml", dir,
        {{"model.path", kDemo}, {"data.train", dir + "/policy.jsonl"}, {"data.eval", kDefault}, {"data.max_seq_len", "1024"},
         {"objective.method", "sft"}, {"train.micro_batch_size", "4"}, {"train.grad_accum", "1"}, {"train.max_steps", "32"},
         {"train.lr", "2.0e-3"}, {"train.schedule", "constant"}, {"train.warmup_steps", "0"}, {"checkpoint.keep_last", "1"}});
    auto p = run_cuset("--config " + pcfg + " --run-name policy");
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const std::string policy = dir + "/policy/checkpoint-0000032";

    const std::string cfg = grpo_config(dir, "turns", policy, tasks,
                                        {{"train.max_steps", "16"}, {"objective.grpo.turns", "2"},
                                         {"objective.grpo.turn_discount", "0.5"}, {"data.max_seq_len", "1024"}});
    auto r = run_cuset("--config " + cfg + " --run-name turns");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<json> m = read_metrics(dir + "/turns");
    ASSERT_EQ(m.size(), 16u);
    for (const json& s : m) {
        ASSERT_TRUE(s.contains("mean_turns")) << s.dump();
        EXPECT_GE(s["mean_turns"].get<double>(), 1.0);
        EXPECT_LE(s["mean_turns"].get<double>(), 2.0);
        ASSERT_TRUE(s.contains("pass_turn1")) << s.dump();
        EXPECT_GE(s["pass_turn1"].get<double>(), 0.0);
        EXPECT_LE(s["pass_turn1"].get<double>(), 1.0);
    }
    // report.html draws the per-turn curves.
    EXPECT_NE(read_file(dir + "/turns/report.html").find("Pass rate per turn"), std::string::npos);
    // The second turns' rewards, early and late: 0.1 (rejected) or 0.3 (compiled).
    std::map<int64_t, std::vector<double>> second;  // step -> turn-2 rewards
    for (const json& rec : jsonl(dir + "/turns/rewards.jsonl")) {
        ASSERT_TRUE(rec.contains("turn") && rec.contains("return") && rec.contains("advantage")) << rec.dump();
        if (rec["turn"] != 2) continue;
        second[rec["step"].get<int64_t>()].push_back(rec["reward"].get<double>());
        EXPECT_NEAR(rec["return"].get<double>(), rec["reward"].get<double>(), 1e-6) << "a last turn's return is its reward";
    }
    auto mean_over = [&](int64_t from, int64_t to) {
        double sum = 0;
        int64_t n = 0;
        for (int64_t s = from; s <= to; ++s)
            for (double v : second[s]) sum += v, ++n;
        return n ? sum / static_cast<double>(n) : 0.0;
    };
    // Rewards are 0.1 (rejected) or 0.3 (compiled). The turn-1 answer learns too (its return
    // counts the second turn's reward, and a compiling first answer ends the trajectory), so
    // second turns thin out as the run goes on: they are compared where there are enough of them,
    // steps 1-2 (16 rows at most) against steps 3-6. The margin asked, as for single-turn GRPO:
    // 0.05 in mean reward, a quarter of the reward's range (25 points of compiled share).
    const double first = mean_over(1, 2), later = mean_over(3, 6);
    EXPECT_GT(later, first + 0.05) << "turn-2 mean reward of steps 1-2 " << first << ", of steps 3-6 " << later;
    // And what the trajectories end with: the mean reward of each one's last turn, early and late.
    // It starts near 0.24 (half the second turns compile) of at most 0.3; asked: 0.03, half the
    // room left.
    std::map<int64_t, std::map<std::pair<std::string, int64_t>, double>> last_of;  // step -> (task, sample) -> reward
    for (const json& rec : jsonl(dir + "/turns/rewards.jsonl"))  // turns come in order: the last one stays
        last_of[rec["step"].get<int64_t>()][{rec["task"].dump(), rec["sample"].get<int64_t>()}] = rec["reward"].get<double>();
    auto final_mean = [&](int64_t from, int64_t to) {
        double sum = 0;
        int64_t n = 0;
        for (int64_t s = from; s <= to; ++s)
            for (const auto& [key, v] : last_of[s]) sum += v, ++n;
        return n ? sum / static_cast<double>(n) : 0.0;
    };
    EXPECT_GT(final_mean(13, 16), final_mean(1, 4) + 0.03);

    // num_iterations 2: the checkpoint after step 1 holds the generation batch with its advantages.
    const std::string icfg = grpo_config(dir, "iter", policy, tasks,
                                         {{"train.max_steps", "2"}, {"objective.grpo.turns", "2"},
                                          {"objective.grpo.num_iterations", "2"}, {"data.max_seq_len", "1024"},
                                          {"checkpoint.every", "1"}, {"checkpoint.keep_last", "0"}});
    auto it = run_cuset("--config " + icfg + " --run-name iter");
    ASSERT_EQ(it.exit_code, 0) << it.err;
    const auto batch = cuset::safetensors_load(dir + "/iter/checkpoint-0000001/grpo-rollout-rank0.safetensors", c10::kCPU);
    ASSERT_TRUE(batch.count("advantages"));
    EXPECT_EQ(batch.at("advantages").size(0), batch.at("completion_ids").size(0));
    resume_folder(dir, "iter", "c", "checkpoint-0000001", true);
    auto c = run_cuset("--config " + icfg + " --run-name c --resume auto");
    ASSERT_EQ(c.exit_code, 0) << c.err;
    expect_same_ending(dir, "iter", "c", "checkpoint-0000002");

    // Two ranks (each its task's trajectories, every turn) against one process: the same records
    // and, as for single-turn GRPO (TwoRanksMatchOneProcessAndStopTogether, whose bounds these
    // are), the same weights to rounding. And a LoRA run trains the adapter on every turn's rows.
    const std::string rcfg = grpo_config(dir, "mt-ranks", policy, tasks,
                                         {{"train.max_steps", "2"}, {"objective.grpo.turns", "2"}, {"data.max_seq_len", "1024"},
                                          {"train.eps", "1.0e-3"}, {"distributed.timeout_s", "60"}});
    auto one = run_cuset("--config " + rcfg + " --run-name mt-one");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    cuset::test::run_ranks(2, rcfg, dir, "mt-two", cuset::test::free_port(3), {"--set", "train.micro_batch_size=4"});
    const std::vector<std::string> want = sorted_records(dir, "mt-one");
    EXPECT_EQ(sorted_records(dir, "mt-two"), want);
    EXPECT_GT(want.size(), 8u) << "2 steps x 2 tasks x 4 trajectories, some of them two turns";
    CUSET_EXPECT_WITHIN(cuset::test::max_weight_diff(dir + "/mt-one/checkpoint-0000002", dir + "/mt-two/checkpoint-0000002"), 1e-6);
    // ZeRO stage 2 across the same two ranks, and activation checkpointing in one process: the
    // same records, and the same weights to the same bound (ZeRO 2 reduce-scatters the gradient,
    // another order of the same fp32 sums; checkpointing recomputes the same forward).
    cuset::test::run_ranks(2, rcfg, dir, "mt-zero2", cuset::test::free_port(4),
                           {"--set", "train.micro_batch_size=4", "--set", "distributed.zero_stage=2"});
    EXPECT_EQ(sorted_records(dir, "mt-zero2"), want) << "ZeRO stage 2";
    CUSET_EXPECT_WITHIN(cuset::test::max_weight_diff(dir + "/mt-one/checkpoint-0000002", dir + "/mt-zero2/checkpoint-0000002"), 1e-6);
    auto ac = run_cuset("--config " + rcfg + " --run-name mt-ac --set model.activation_checkpointing=true");
    ASSERT_EQ(ac.exit_code, 0) << ac.err;
    EXPECT_EQ(sorted_records(dir, "mt-ac"), want) << "activation checkpointing";
    CUSET_EXPECT_WITHIN(cuset::test::max_weight_diff(dir + "/mt-one/checkpoint-0000002", dir + "/mt-ac/checkpoint-0000002"), 1e-6);
    const std::string lcfg = grpo_config(dir, "mt-lora", policy, tasks,
                                         {{"train.max_steps", "2"}, {"objective.grpo.turns", "2"}, {"data.max_seq_len", "1024"},
                                          {"model.lora.enabled", "true"}, {"model.lora.r", "4"}, {"train.lr", "1.0e-2"}});
    auto lora = run_cuset("--config " + lcfg + " --run-name mt-lora");
    ASSERT_EQ(lora.exit_code, 0) << lora.err;
    EXPECT_TRUE(fs::exists(dir + "/mt-lora/checkpoint-0000002/adapter_model.safetensors"));
    for (const json& rec : jsonl(dir + "/mt-lora/rewards.jsonl")) EXPECT_TRUE(rec.contains("turn")) << rec.dump();
}

TEST(GrpoSteps, ConfigurationRefusals) {
    const std::string dir = scratch_dir("grpo-steps-refusals");
    const std::string tasks = write_tasks(dir, 2);
    struct Case {
        cuset::test::ConfigKeys keys;
        std::string key;
    };
    const std::vector<Case> cases = {
        {{{"objective.grpo.tasks", "\"\""}, {"train.max_steps", "2"}}, "objective.grpo.tasks"},
        {{{"train.max_steps", "0"}}, "train.max_steps"},
        {{{"train.max_steps", "2"}, {"distributed.zero_stage", "3"}}, "distributed.zero_stage"},
        {{{"train.max_steps", "2"}, {"objective.grpo.loss_type", "ppo"}}, "objective.grpo.loss_type"},
        {{{"train.max_steps", "2"}, {"objective.grpo.num_generations", "1"}}, "objective.grpo.num_generations"},
        {{{"train.max_steps", "2"}, {"objective.grpo.continue_after_pass", "true"}}, "objective.grpo.continue_after_pass"},
        {{{"train.max_steps", "2"}, {"objective.grpo.turns", "2"}, {"objective.grpo.continue_after_pass", "true"}},
         "objective.grpo.continue_after_pass"},
    };
    int i = 0;
    for (const Case& c : cases) {
        const std::string cfg = grpo_config(dir, "case-" + std::to_string(i++), kDemo, tasks, c.keys);
        auto r = run_cuset("--config " + cfg + " --run-name r");
        EXPECT_EQ(r.exit_code, 2) << c.key << ": " << r.err;
        EXPECT_NE(r.err.find(c.key), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(dir + "/r/checkpoint-0000002"));
    }
}

// objective.grpo.retry_all_failed: with completions of 2 tokens no answer holds a program, so
// every group fails alike (status no-code, reward 0) and gives no signal. Over 3 tasks in steps of
// 2, pass 1 (order a b c) is then, worked by hand: step 1 a b (both queued), step 2 c and a's
// retry (c queued; a retry is not queued again), step 3 the retries of b and c, step 4 the first
// two tasks of pass 2 (both queued again: a new pass). The log names the queued tasks, rewards.jsonl marks the retried records,
// metrics.jsonl counts both, and a run resumed from the step-2 checkpoint (which holds the queue)
// ends as the uninterrupted one. Resuming with the other setting is refused (exit 3).
TEST(GrpoSteps, RetryAllFailedTakesTasksWithoutSignalAgainAtTheEndOfThePass) {
    const std::string dir = scratch_dir("grpo-steps-retry");
    const std::string tasks = write_tasks(dir, 3);
    const cuset::test::ConfigKeys keys = {{"train.max_steps", "4"},
                                          {"train.seed", "7"},
                                          {"checkpoint.every", "2"},
                                          {"checkpoint.keep_last", "0"},
                                          {"objective.grpo.max_completion_length", "2"},
                                          {"objective.grpo.retry_all_failed", "true"}};
    const std::string cfg = grpo_config(dir, "retry", kDemo, tasks, keys);
    auto a = run_cuset("--config " + cfg + " --run-name a");
    ASSERT_EQ(a.exit_code, 0) << a.err;

    const std::vector<cuset::eval::Task> t = cuset::eval::load_tasks(tasks);
    const std::vector<size_t> p1 = cuset::rl::grpo_pass_order(7, 3, 0), p2 = cuset::rl::grpo_pass_order(7, 3, 1);
    const std::vector<std::pair<size_t, bool>> want = {{p1[0], false}, {p1[1], false}, {p1[2], false}, {p1[0], true},
                                                       {p1[1], true},  {p1[2], true},  {p2[0], false}, {p2[1], false}};
    const std::vector<json> rec = jsonl(dir + "/a/rewards.jsonl");
    ASSERT_EQ(rec.size(), 32u);  // 4 steps x 2 tasks x 4 completions
    for (size_t i = 0; i < rec.size(); ++i) {
        const auto& [task, retried] = want[i / 4];
        EXPECT_EQ(rec[i]["status"], "no-code") << "record " << i;
        EXPECT_EQ(rec[i]["reward"].get<double>(), 0.0);
        EXPECT_EQ(rec[i]["task"], t[task].id_text) << "record " << i;
        EXPECT_EQ(rec[i].value("retry", false), retried) << "record " << i;
    }
    const std::vector<json> m = read_metrics(dir + "/a");
    ASSERT_EQ(m.size(), 4u);
    const int64_t retried[] = {0, 1, 2, 0}, queued[] = {2, 1, 0, 2};
    for (size_t s = 0; s < 4; ++s) {
        EXPECT_EQ(m[s]["retried_tasks"].get<int64_t>(), retried[s]) << "step " << s + 1;
        EXPECT_EQ(m[s]["queued_for_retry"].get<int64_t>(), queued[s]) << "step " << s + 1;
    }
    EXPECT_NE(a.err.find("task(s) " + t[p1[0]].id_text + ", " + t[p1[1]].id_text + " gave no signal"), std::string::npos)
        << a.err;
    ASSERT_TRUE(fs::exists(dir + "/a/checkpoint-0000002/grpo-schedule.json"));

    // Resumed from step 2 in a fresh process: the queue (c's retry) comes from the checkpoint.
    resume_folder(dir, "a", "b", "checkpoint-0000002", true);
    auto b = run_cuset("--config " + cfg + " --run-name b --resume auto");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    expect_same_ending(dir, "a", "b", "checkpoint-0000004");
    const std::vector<json> mb = read_metrics(dir + "/b");
    ASSERT_EQ(mb.size(), 2u);
    EXPECT_EQ(mb[0]["retried_tasks"].get<int64_t>(), 2);

    // Multi-turn (every trajectory's two answers fail alike: its first-turn returns are equal) over
    // two ranks under ZeRO stage 1: the queue is summed over the ranks, so the records are one
    // process's, split between the ranks' files.
    const std::string mcfg = grpo_config(dir, "turns", kDemo, tasks,
                                         {{"train.max_steps", "4"}, {"train.seed", "7"}, {"objective.grpo.turns", "2"},
                                          {"objective.grpo.max_completion_length", "2"}, {"data.max_seq_len", "1024"},
                                          {"objective.grpo.retry_all_failed", "true"}, {"distributed.timeout_s", "60"}});
    auto mt = run_cuset("--config " + mcfg + " --run-name mt-one");
    ASSERT_EQ(mt.exit_code, 0) << mt.err;
    const std::vector<std::string> want_mt = lines_of(dir + "/mt-one/rewards.jsonl");
    ASSERT_EQ(want_mt.size(), 64u) << "4 steps x 2 tasks x 4 trajectories x 2 turns";
    for (size_t i = 0; i < want_mt.size(); ++i) {
        const json r = json::parse(want_mt[i]);
        EXPECT_EQ(r["task"], t[want[i / 8].first].id_text) << "record " << i;
        EXPECT_EQ(r.value("retry", false), want[i / 8].second) << "record " << i;
    }
    cuset::test::run_ranks(2, mcfg, dir, "mt-two", cuset::test::free_port(6),
                           {"--set", "train.micro_batch_size=4", "--set", "distributed.zero_stage=1"});
    EXPECT_EQ(sorted_records(dir, "mt-two"), sorted_records(dir, "mt-one"));
    const std::vector<json> m2 = read_metrics(dir + "/mt-two");
    ASSERT_EQ(m2.size(), 4u);
    for (size_t s = 0; s < 4; ++s) EXPECT_EQ(m2[s]["queued_for_retry"].get<int64_t>(), queued[s]) << "step " << s + 1;
    // The same weights to the two-rank bound of TwoRanksMatchOneProcessAndStopTogether (ZeRO stage 1
    // shards the AdamW state; the update is the same fp32 arithmetic on each shard).
    CUSET_EXPECT_WITHIN(cuset::test::max_weight_diff(dir + "/mt-one/checkpoint-0000004", dir + "/mt-two/checkpoint-0000004"), 1e-6);

    // A checkpoint whose schedule is missing, or one with a schedule its run did not keep (a
    // checkpoint put together by hand: another setting is already refused by the configuration's
    // hash), is refused with exit 3, naming the file.
    resume_folder(dir, "a", "c", "checkpoint-0000002", false);
    fs::remove(dir + "/c/checkpoint-0000002/grpo-schedule.json");
    auto c = run_cuset("--config " + cfg + " --run-name c --resume auto");
    EXPECT_EQ(c.exit_code, 3) << c.err;
    EXPECT_NE(c.err.find("holds no grpo-schedule.json"), std::string::npos) << c.err;
    cuset::test::ConfigKeys off = keys;
    off.push_back({"objective.grpo.retry_all_failed", "false"});
    const std::string cfg_off = grpo_config(dir, "off", kDemo, tasks, off);
    auto d = run_cuset("--config " + cfg_off + " --run-name d");
    ASSERT_EQ(d.exit_code, 0) << d.err;
    EXPECT_FALSE(fs::exists(dir + "/d/checkpoint-0000002/grpo-schedule.json"));
    for (const json& r : jsonl(dir + "/d/rewards.jsonl")) EXPECT_FALSE(r.contains("retry"));
    for (const json& r : read_metrics(dir + "/d")) EXPECT_FALSE(r.contains("retried_tasks"));
    resume_folder(dir, "d", "e", "checkpoint-0000002", false);
    fs::copy_file(dir + "/a/checkpoint-0000002/grpo-schedule.json", dir + "/e/checkpoint-0000002/grpo-schedule.json");
    auto e = run_cuset("--config " + cfg_off + " --run-name e --resume auto");
    EXPECT_EQ(e.exit_code, 3) << e.err;
    EXPECT_NE(e.err.find("objective.grpo.retry_all_failed"), std::string::npos) << e.err;
}

// The KL term's reference: a full fine-tune loads the frozen starting model, a LoRA run takes its
// own base with the adapters off (no second model). Either way the policy equals its reference
// at the first step (the same weights through the same kernels; a new adapter's B is 0), so the
// first step's KL is exactly 0, and the update makes the second one positive.
TEST(GrpoSteps, TheKlTermIsToTheStartingModel) {
    const std::string dir = scratch_dir("grpo-steps-kl");
    const std::string tasks = write_tasks(dir, 2);
    const std::string policy = make_policy(dir, tasks);
    for (const bool lora : {false, true}) {
        const std::string name = lora ? "lora" : "full";
        cuset::test::ConfigKeys keys = {{"train.max_steps", "2"}, {"objective.grpo.beta", "0.04"}};
        if (lora) keys.insert(keys.end(), {{"model.lora.enabled", "true"}, {"model.lora.r", "4"}, {"train.lr", "1.0e-2"}});
        auto r = run_cuset("--config " + grpo_config(dir, name, policy, tasks, keys) + " --run-name " + name);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::vector<json> m = read_metrics(dir + "/" + name);
        ASSERT_EQ(m.size(), 2u);
        ASSERT_TRUE(m[0].contains("kl") && m[1].contains("kl")) << name;
        EXPECT_EQ(m[0]["kl"].get<double>(), 0.0) << name << ": the policy is its reference at the first step";
        EXPECT_GT(m[1]["kl"].get<double>(), 0.0) << name << ": the update moved it away";
        EXPECT_EQ(fs::exists(dir + "/" + name + "/checkpoint-0000002/adapter_model.safetensors"), lora) << name;
    }
}

// model.activation_checkpointing through the GRPO loop: the layers' activations are recomputed in
// the backward instead of kept, with the same kernels on the same inputs, so the run is the one
// without it: the same completions and verdicts (sampling runs in eval mode, where checkpointing
// is off), and losses, gradient norms and final weights equal to fp32 rounding. Bounds: loss
// 1e-6 absolute (a near-cancelling sum of advantage-signed terms of size ~1), gradient norm 1e-5
// relative, weights 1e-6 absolute (two AdamW steps at lr 3e-4 move a weight by <= 6e-4; a
// different summation order in the recomputed backward changes an update by rounding only, ~1e-7
// of it). Full fine-tune and LoRA.
TEST(GrpoSteps, ActivationCheckpointingChangesNothingButMemory) {
    const std::string dir = scratch_dir("grpo-steps-checkpointing");
    const std::string tasks = write_tasks(dir, 2);
    const std::string policy = make_policy(dir, tasks);
    for (const bool lora : {false, true}) {
        const std::string base = lora ? "lora" : "full";
        cuset::test::ConfigKeys keys = {{"train.max_steps", "2"}, {"objective.grpo.beta", "0.04"}};
        if (lora) keys.insert(keys.end(), {{"model.lora.enabled", "true"}, {"model.lora.r", "4"}, {"train.lr", "1.0e-2"}});
        cuset::test::ConfigKeys ckpt = keys;
        ckpt.push_back({"model.activation_checkpointing", "true"});
        for (const auto& [name, k] : {std::pair<std::string, cuset::test::ConfigKeys>{base, keys}, {base + "-ac", ckpt}}) {
            auto r = run_cuset("--config " + grpo_config(dir, name, policy, tasks, k) + " --run-name " + name);
            ASSERT_EQ(r.exit_code, 0) << r.err;
        }
        EXPECT_NE(read_file(dir + "/" + base + "-ac/train.log").find("activation checkpointing"), std::string::npos);
        EXPECT_EQ(lines_of(dir + "/" + base + "-ac/rewards.jsonl"), lines_of(dir + "/" + base + "/rewards.jsonl"));
        const std::vector<json> a = read_metrics(dir + "/" + base), b = read_metrics(dir + "/" + base + "-ac");
        ASSERT_EQ(a.size(), 2u);
        ASSERT_EQ(b.size(), 2u);
        for (size_t s = 0; s < 2; ++s) {
            CUSET_EXPECT_NEAR(b[s]["loss"].get<double>(), a[s]["loss"].get<double>(), 1e-6) << base << " step " << s + 1;
            CUSET_EXPECT_NEAR(b[s]["grad_norm"].get<double>(), a[s]["grad_norm"].get<double>(),
                              1e-5 * a[s]["grad_norm"].get<double>())
                << base << " step " << s + 1;
            EXPECT_EQ(b[s]["reward"], a[s]["reward"]);
        }
        EXPECT_GT(a[1]["kl"].get<double>(), 0.0) << base << ": the first update moved the policy";
        const std::string file = lora ? "adapter_model.safetensors" : "model.safetensors";
        CUSET_EXPECT_WITHIN(cuset::test::max_weight_diff(dir + "/" + base + "/checkpoint-0000002",
                                                         dir + "/" + base + "-ac/checkpoint-0000002", file),
                            1e-6)
            << base;
    }
}

// objective.grpo.token_weights: cuset. With CuSeT's mask and region weight switched off every
// coefficient is 1 and the run is the plain one bit for bit (the weights take the completion
// mask's place and equal it). With the defaults, part of the completion tokens fall below their
// completion's confidence threshold and leave the loss (these answers hold no kernel or launch
// for the sensitivity rule to keep), the completions weigh more than 1 by their hardest region,
// the first step samples the same completions and its loss differs; a checkpoint inside a
// generation keeps the coefficients with the batch.
TEST(GrpoSteps, CusetTokenWeightsOnTheLoss) {
    const std::string dir = scratch_dir("grpo-steps-token-weights");
    const std::string tasks = write_tasks(dir, 2);
    const std::string policy = make_policy(dir, tasks);
    const cuset::test::ConfigKeys two = {{"train.max_steps", "2"}};
    const std::vector<std::pair<std::string, cuset::test::ConfigKeys>> runs = {
        {"plain", two},
        {"off", {{"train.max_steps", "2"}, {"objective.grpo.token_weights", "cuset"}, {"objective.mask.confidence", "false"},
                 {"objective.region.enabled", "false"}}},
        {"cuset", {{"train.max_steps", "2"}, {"objective.grpo.token_weights", "cuset"},
                   {"objective.grpo.num_iterations", "2"}, {"checkpoint.every", "1"}, {"checkpoint.keep_last", "0"}}}};
    for (const auto& [name, keys] : runs) {
        auto r = run_cuset("--config " + grpo_config(dir, name, policy, tasks, keys) + " --run-name " + name);
        ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    }
    const std::vector<json> plain = read_metrics(dir + "/plain"), off = read_metrics(dir + "/off"),
                            cw = read_metrics(dir + "/cuset");
    ASSERT_EQ(plain.size(), 2u);
    ASSERT_EQ(off.size(), 2u);
    ASSERT_EQ(cw.size(), 2u);
    for (size_t s = 0; s < 2; ++s) {
        EXPECT_EQ(off[s]["loss"], plain[s]["loss"]) << "step " << s + 1;
        EXPECT_EQ(off[s]["grad_norm"], plain[s]["grad_norm"]) << "step " << s + 1;
        EXPECT_EQ(off[s]["cuset_kept_fraction"].get<double>(), 1.0);
        EXPECT_EQ(off[s]["cuset_weight_mean"].get<double>(), 1.0);
        EXPECT_FALSE(plain[s].contains("cuset_kept_fraction"));
    }
    expect_same_ending(dir, "plain", "off", "checkpoint-0000002");

    const double kept = cw[0]["cuset_kept_fraction"].get<double>();
    EXPECT_GT(kept, 0.0);
    EXPECT_LT(kept, 1.0) << "the default threshold (objective.mask.threshold.q) leaves some tokens out";
    EXPECT_EQ(cw[0]["cuset_sensitive_fraction"].get<double>(), 0.0) << "int main() { return 0; } has no kernel";
    EXPECT_GT(cw[0]["cuset_weight_mean"].get<double>(), 1.0);
    EXPECT_FALSE(cw[1].contains("cuset_kept_fraction")) << "step 2 trains on step 1's generation again";
    const std::vector<json> rec_plain = jsonl(dir + "/plain/rewards.jsonl"), rec_cw = jsonl(dir + "/cuset/rewards.jsonl");
    ASSERT_EQ(rec_cw.size(), 8u);
    for (size_t i = 0; i < rec_cw.size(); ++i) EXPECT_EQ(rec_cw[i], rec_plain[i]) << "the first step samples alike";
    EXPECT_NE(cw[0]["loss"], plain[0]["loss"]);
    const auto batch = cuset::safetensors_load(dir + "/cuset/checkpoint-0000001/grpo-rollout-rank0.safetensors", c10::kCPU);
    ASSERT_TRUE(batch.count("token_weights"));
    const at::Tensor w = batch.at("token_weights"), mask = batch.at("completion_mask");
    EXPECT_TRUE(at::equal(w.gt(0), w.gt(0).logical_and(mask.to(at::kBool)))) << "weights only on completion tokens";
    EXPECT_GT(w.max().item<double>(), 1.0);
}

// objective.grpo.judge_while_sampling: a group judged as soon as it is complete, beside the
// decoding of the others, or every group after the sampling: the same completions, verdicts,
// losses and final weights (the batch decoded is the same).
TEST(GrpoSteps, JudgingWhileSamplingChangesNothingButTime) {
    const std::string dir = scratch_dir("grpo-steps-judge-while-sampling");
    const std::string tasks = write_tasks(dir, 2);
    const std::string policy = make_policy(dir, tasks);
    for (const char* name : {"during", "after"}) {
        const cuset::test::ConfigKeys keys = {
            {"train.max_steps", "2"},
            {"objective.grpo.judge_while_sampling", std::string(name) == "during" ? "true" : "false"}};
        auto r = run_cuset("--config " + grpo_config(dir, name, policy, tasks, keys) + " --run-name " + name);
        ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    }
    const std::vector<json> during = read_metrics(dir + "/during"), after = read_metrics(dir + "/after");
    ASSERT_EQ(during.size(), 2u);
    ASSERT_EQ(after.size(), 2u);
    for (size_t s = 0; s < 2; ++s) {
        EXPECT_EQ(during[s]["loss"], after[s]["loss"]) << "step " << s + 1;
        EXPECT_EQ(during[s]["grad_norm"], after[s]["grad_norm"]) << "step " << s + 1;
        EXPECT_EQ(during[s]["status"], after[s]["status"]) << "step " << s + 1;
        EXPECT_EQ(after[s]["groups_judged_while_sampling"].get<int64_t>(), 0);
        const int64_t early = during[s]["groups_judged_while_sampling"].get<int64_t>();
        EXPECT_GE(early, 0);
        EXPECT_LE(early, 2) << "two groups a step";
    }
    expect_same_ending(dir, "during", "after", "checkpoint-0000002");
}

// SIGTERM at any point of a step (sampling, judging or the update) stops the run with exit 75 and
// a checkpoint of the last step taken; the resumed run then ends with the uninterrupted run's
// weights and rewards.jsonl.
TEST(GrpoSteps, SigtermThenResumeMatchesUninterrupted) {
    const std::string dir = scratch_dir("grpo-steps-sigterm");
    const std::string tasks = write_tasks(dir, 3);
    const std::string policy = make_policy(dir, tasks);
    const std::string cfg = grpo_config(dir, "sigterm", policy, tasks, {{"train.max_steps", "12"}});
    auto full = run_cuset("--config " + cfg + " --run-name full");
    ASSERT_EQ(full.exit_code, 0) << full.err;
    auto cut = cuset::test::run_cuset_then_sigterm(cfg, dir, "cut", 2, 300);
    ASSERT_TRUE(WIFEXITED(cut.status));
    ASSERT_LT(cut.steps, 12u) << "the run finished before the signal arrived";
    EXPECT_EQ(WEXITSTATUS(cut.status), 75) << read_file(dir + "/cut.err");
    EXPECT_NE(read_file(dir + "/cut.err").find("--resume auto"), std::string::npos);
    auto resumed = run_cuset("--config " + cfg + " --run-name cut --resume auto");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    expect_same_ending(dir, "full", "cut", "checkpoint-0000012");  // interrupted + resumed = uninterrupted
}

// num_iterations (TRL's mu): steps k*mu .. k*mu + mu - 1 train on generation k. Checked here with
// mu = 2 over 4 steps:
// - only steps 1 and 3 sample and judge (their records and curves); steps 2 and 4 train on the
//   batch again and log their update only;
// - the importance ratio is to the policy that sampled: at a generation's first step it is 1
//   (the same forward), so the step equals a mu = 1 step; at its second step the policy has moved
//   and the ratio is clipped somewhere, which a mu = 1 run never shows;
// - a checkpoint inside a generation holds the batch, and a run resumed from it ends with the
//   uninterrupted run's weights.
TEST(GrpoSteps, NumIterationsTrainsOnOneGenerationSeveralTimes) {
    const std::string dir = scratch_dir("grpo-steps-iterations");
    const std::string tasks = write_tasks(dir, 3);
    const std::string policy = make_policy(dir, tasks);
    // A large learning rate, so that one update moves some token's probability by more than the
    // clip range (epsilon 0.2).
    const cuset::test::ConfigKeys base = {{"train.lr", "5.0e-3"}, {"checkpoint.every", "1"}, {"checkpoint.keep_last", "0"}};
    auto with = [&](cuset::test::ConfigKeys k) {
        cuset::test::ConfigKeys all = base;
        all.insert(all.end(), k.begin(), k.end());
        return all;
    };
    const std::string cfg_one = grpo_config(dir, "one", policy, tasks, with({{"train.max_steps", "1"}}));
    const std::string cfg_mu = grpo_config(dir, "mu", policy, tasks,
                                           with({{"train.max_steps", "4"}, {"objective.grpo.num_iterations", "2"}}));
    auto one = run_cuset("--config " + cfg_one + " --run-name one");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    auto mu = run_cuset("--config " + cfg_mu + " --run-name mu");
    ASSERT_EQ(mu.exit_code, 0) << mu.err;

    const std::vector<json> m = read_metrics(dir + "/mu");
    ASSERT_EQ(m.size(), 4u);
    for (size_t s = 0; s < 4; ++s) {
        const bool fresh = s % 2 == 0;
        EXPECT_EQ(m[s]["generation"].get<int64_t>(), static_cast<int64_t>(s / 2 + 1));
        EXPECT_EQ(m[s].contains("reward"), fresh) << "step " << s + 1;
        EXPECT_EQ(m[s].contains("status"), fresh) << "step " << s + 1;
        EXPECT_FALSE(m[s]["skipped"].get<bool>());
    }
    const std::vector<json> rec = jsonl(dir + "/mu/rewards.jsonl");
    ASSERT_EQ(rec.size(), 16u) << "2 generations x 2 tasks x 4 completions";
    for (size_t i = 0; i < rec.size(); ++i) EXPECT_EQ(rec[i]["step"].get<int64_t>(), i < 8 ? 1 : 3);

    // Step 1 against the mu = 1 run's: the ratio is exp(logp - old) with old from a no-grad
    // forward of the same weights on the same rows, equal to the autograd forward's to within
    // fp32 rounding of the log-softmax (~1e-7 per token), so nothing is clipped and the gradient
    // norm agrees to 1e-5 relative. The loss is a sum of advantage-signed terms that nearly
    // cancel: compared absolutely, 1e-5 (a per-token ratio error of 1e-7 times |A| <= ~2 over a
    // normalised sum).
    const std::vector<json> m1 = read_metrics(dir + "/one");
    ASSERT_EQ(m1.size(), 1u);
    EXPECT_EQ(m[0]["clip_ratio_region"].get<double>(), 0.0);
    EXPECT_NEAR(m[0]["grad_norm"].get<double>(), m1[0]["grad_norm"].get<double>(),
                1e-5 * m1[0]["grad_norm"].get<double>());
    EXPECT_NEAR(m[0]["loss"].get<double>(), m1[0]["loss"].get<double>(), 1e-5);
    EXPECT_EQ(m1[0]["clip_ratio_region"].get<double>(), 0.0) << "with mu = 1 the ratio is always 1";
    EXPECT_GT(m[1]["clip_ratio_region"].get<double>(), 0.0)
        << "step 2's ratio is to the policy of step 1, which its update moved";

    // The batch is in the checkpoints inside a generation (after steps 1 and 3) only.
    for (int s = 1; s <= 4; ++s) {
        char name[32];
        std::snprintf(name, sizeof name, "checkpoint-%07d", s);
        EXPECT_EQ(fs::exists(dir + "/mu/" + name + "/grpo-rollout-rank0.safetensors"), s % 2 == 1) << name;
    }
    // Resumed after step 3, in a fresh folder: step 4 trains on generation 2 as saved.
    resume_folder(dir, "mu", "c", "checkpoint-0000003", true);
    auto c = run_cuset("--config " + cfg_mu + " --run-name c --resume auto");
    ASSERT_EQ(c.exit_code, 0) << c.err;
    expect_same_ending(dir, "mu", "c", "checkpoint-0000004");
    // Without the batch the checkpoint cannot be resumed, and says so.
    resume_folder(dir, "mu", "d", "checkpoint-0000003", false);
    fs::remove(dir + "/d/checkpoint-0000003/grpo-rollout-rank0.safetensors");
    auto d = run_cuset("--config " + cfg_mu + " --run-name d --resume auto");
    EXPECT_EQ(d.exit_code, 3) << d.err;  // a bad checkpoint
    EXPECT_NE(d.err.find("grpo-rollout-rank0.safetensors"), std::string::npos) << d.err;
    // A batch written by another number of ranks (rank 0's half of it) is refused, not half-trained on.
    fs::remove_all(dir + "/d");
    resume_folder(dir, "mu", "d", "checkpoint-0000003", false);
    const std::string batch = dir + "/d/checkpoint-0000003/grpo-rollout-rank0.safetensors";
    cuset::NamedTensors tensors;
    for (auto& [name, t] : cuset::safetensors_load(batch, c10::kCPU)) tensors.emplace_back(name, t);
    cuset::safetensors_save(batch, tensors, {{"generation", "1"}, {"world", "2"}});
    auto e = run_cuset("--config " + cfg_mu + " --run-name d --resume auto");
    EXPECT_EQ(e.exit_code, 3) << e.err;
    EXPECT_NE(e.err.find("a generation batch of 2 rank(s), this run has 1"), std::string::npos) << e.err;

    // A batch that is not the one this step trains on, or a damaged one, is bad input (exit 3,
    // naming the file and what differs), never trained on: generation 1's batch (checkpoint 1)
    // copied into checkpoint 3, token ids past the vocabulary, old_logps a column short, of
    // another dtype, or NaN on completion tokens.
    const auto saved = cuset::safetensors_load(dir + "/mu/checkpoint-0000003/grpo-rollout-rank0.safetensors", c10::kCPU);
    const std::map<std::string, std::string> meta =
        cuset::SafetensorsFile(dir + "/mu/checkpoint-0000003/grpo-rollout-rank0.safetensors").metadata();
    struct Damage {
        std::string what;
        std::function<void(std::map<std::string, at::Tensor>&)> apply;
        std::string message;
    };
    const std::vector<Damage> damages = {
        {"generation 1's batch", nullptr,
         "a generation batch of generation 0, but the step resumed from this checkpoint needs generation 1"},
        {"ids past the vocabulary", [](auto& t) { t["completion_ids"][0][0].fill_(int64_t{1000000000}); },
         "completion_ids holds token ids outside the model's vocabulary"},
        {"old_logps a column short",
         [](auto& t) { t["old_logps"] = t["old_logps"].narrow(1, 0, t["old_logps"].size(1) - 1).contiguous(); },
         "old_logps is Float"},
        {"old_logps as int32", [](auto& t) { t["old_logps"] = t["old_logps"].to(at::kInt); }, "old_logps is Int"},
        {"old_logps NaN", [](auto& t) { t["old_logps"].fill_(std::nan("")); }, "old_logps is not finite on completion tokens"},
    };
    for (const Damage& dmg : damages) {
        fs::remove_all(dir + "/d");
        resume_folder(dir, "mu", "d", "checkpoint-0000003", false);
        if (dmg.apply) {
            std::map<std::string, at::Tensor> t;
            for (const auto& [name, x] : saved) t[name] = x.clone();
            dmg.apply(t);
            cuset::NamedTensors out(t.begin(), t.end());
            cuset::safetensors_save(batch, out, meta);
        } else {
            fs::copy_file(dir + "/mu/checkpoint-0000001/grpo-rollout-rank0.safetensors", batch,
                          fs::copy_options::overwrite_existing);
        }
        auto r = run_cuset("--config " + cfg_mu + " --run-name d --resume auto");
        EXPECT_EQ(r.exit_code, 3) << dmg.what << "\n" << r.err;
        EXPECT_NE(r.err.find(batch + ": "), std::string::npos) << dmg.what << "\n" << r.err;
        EXPECT_NE(r.err.find(dmg.message), std::string::npos) << dmg.what << "\n" << r.err;
        EXPECT_FALSE(fs::exists(dir + "/d/checkpoint-0000004")) << dmg.what << ": trained on";
    }
}

// Several ranks: two Gloo ranks with one task each against one process with both, the same
// global batch. A completion's sampling stream depends on (seed, step, task, sample) only, so both
// layouts draw the same completions and verdicts (the decoding batches differ, which moves logits
// by rounding only: no sampled token changes at these sizes); the dapo loss is normalised over
// the whole batch on every rank and the gradient averaged, so the runs differ only in the order
// of fp32 sums. With ZeRO stage 2 the same. Then a SIGTERM to rank 0 alone during the run: both
// ranks stop at the same step with exit 75 (the other is not left waiting in a collective), and
// the two resumed ranks end with the uninterrupted two-rank run's weights, bit for bit.
TEST(GrpoSteps, TwoRanksMatchOneProcessAndStopTogether) {
    using cuset::test::free_port;
    using cuset::test::max_weight_diff;
    using cuset::test::run_ranks;
    const std::string dir = scratch_dir("grpo-steps-ranks");
    const std::string tasks = write_tasks(dir, 3);
    const std::string policy = make_policy(dir, tasks);
    const std::string cfg = grpo_config(dir, "ranks", policy, tasks,
                                        {{"train.max_steps", "3"}, {"train.eps", "1.0e-3"}, {"distributed.timeout_s", "60"}});
    auto one = run_cuset("--config " + cfg + " --run-name one");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    run_ranks(2, cfg, dir, "two", free_port(0), {"--set", "train.micro_batch_size=4"});
    run_ranks(2, cfg, dir, "zero2", free_port(1), {"--set", "train.micro_batch_size=4", "--set", "distributed.zero_stage=2"});
    const std::vector<std::string> want = lines_of(dir + "/one/rewards.jsonl");
    ASSERT_EQ(want.size(), 24u);
    const std::vector<json> m1 = read_metrics(dir + "/one");
    for (const std::string run : {"two", "zero2"}) {
        // Rank 0 judged the first task of each step, rank 1 the second: together, the same records.
        EXPECT_EQ(sorted_records(dir, run), sorted_records(dir, "one")) << run;
        const std::vector<json> m = read_metrics(dir + "/" + run);
        ASSERT_EQ(m.size(), 3u) << run;
        for (size_t s = 0; s < 3; ++s) {
            // The step's statistics are over both ranks: the mean reward of the same 8 fp32
            // rewards summed in another order (1e-7 absolute at rewards <= 0.3). The gradient
            // norm: the elements of a gradient are fp32 sums over the tokens, many of them small
            // differences of large terms (advantages of both signs), so their relative rounding
            // is far above u; summed per rank and over ranks in another order (ZeRO 2's
            // reduce-scatter, a sharded sum of squares) the norm moved by 3.1e-6 relative at
            // most here; 5e-5. A gradient summed instead of averaged doubles it.
            CUSET_EXPECT_NEAR(m[s]["reward"].get<double>(), m1[s]["reward"].get<double>(), 1e-7) << run;
            EXPECT_EQ(m[s]["status"], m1[s]["status"]) << run;
            CUSET_EXPECT_NEAR(m[s]["grad_norm"].get<double>(), m1[s]["grad_norm"].get<double>(),
                              5e-5 * m1[s]["grad_norm"].get<double>())
                << run << " step " << s + 1;
        }
        // Weights: AdamW's update moves by at most lr / eps times a gradient's rounding error
        // (lr 3e-4 / eps 1e-3 = 0.3; |g| ~ 1e-2 per element at 50 u relative, three steps):
        // ~1e-7; 1e-6. A gradient summed instead of averaged over the ranks moves weights by
        // ~lr = 3e-4.
        CUSET_EXPECT_WITHIN(max_weight_diff(dir + "/one/checkpoint-0000003", dir + "/" + run + "/checkpoint-0000003"),
                            1e-6)
            << run;
    }

    // SIGTERM to rank 0 alone once a step is logged.
    const int port = free_port(2);
    std::vector<int> pids;
    for (int r = 0; r < 2; ++r)
        pids.push_back(cuset::test::spawn_rank(cfg, "cut", r, 2, port, dir + "/cut-r" + std::to_string(r) + ".log",
                                               {"--set", "train.micro_batch_size=4"}));
    const auto t0 = std::chrono::steady_clock::now();
    while (read_metrics(dir + "/cut").size() < 1 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(300))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kill(pids[0], SIGTERM);
    const int c0 = cuset::test::wait_exit(pids[0]), c1 = cuset::test::wait_exit(pids[1]);
    const size_t taken = read_metrics(dir + "/cut").size();
    ASSERT_LT(taken, 3u) << "the run finished before the signal arrived";
    EXPECT_EQ(c0, 75) << read_file(dir + "/cut-r0.log");
    EXPECT_EQ(c1, 75) << read_file(dir + "/cut-r1.log");
    EXPECT_NE(read_file(dir + "/cut-r1.log").find("another rank"), std::string::npos) << read_file(dir + "/cut-r1.log");
    run_ranks(2, cfg, dir, "cut", free_port(3), {"--set", "train.micro_batch_size=4", "--resume", "auto"});
    expect_same_ending(dir, "two", "cut", "checkpoint-0000003");  // interrupted + resumed ranks = uninterrupted
}
