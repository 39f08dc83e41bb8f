// rl/multi_turn: multi-turn GRPO rollouts with fixed answers under the compile-only judge. One
// task, G = 2 trajectories, up to 3 turns:
//   trajectory 1: a program that does not compile (reward 0.1), then the task's reference (0.3):
//                 it passes at turn 2 and stops;
//   trajectory 2: no program (0), no program again (0), a program that does not compile (0.1).
// With discount 0.5 the returns are, by hand, 0.25, 0.3 and 0.025, 0.05, 0.1; the leave-one-out
// advantages at turns 1 and 2 are +-0.225 and +-0.25, and 0 at turn 3 (no other trajectory got
// there). Every later turn's prompt is the conversation with the judge's finding as its last user
// message (eval's repair turn), each turn's stream its own seed; `programs` history keeps only an
// earlier answer's fenced program; a context limit ends a trajectory that has no room left; judging
// each answer as it finishes changes nothing; one turn is the single-turn rollout, bit for bit.
// With continue_after_pass, a passing answer with a speed-up gets the figure back and answers again.
// A KernelBench problem's trajectories answer KernelBench's findings (its system prompt, its
// prompt, the module's feedback) under the emulating judge.
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/eval/eval_run.h"
#include "cuset/eval/repair.h"
#include "cuset/generate/sampling.h"
#include "cuset/judge/toolchain.h"
#include "cuset/rl/multi_turn.h"
#include "cuset/text/tokenizer.h"
#include "test_util.h"

using namespace cuset;

namespace {

std::string demo_dir() { return std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder"; }

eval::Task first_task() { return eval::load_tasks(std::string(CUSET_SOURCE_DIR) + "/data/cuda-tasks/tasks.jsonl").at(0); }

rl::RolloutOptions options(const std::string& name) {
    rl::RolloutOptions o;
    o.group_size = 2;
    o.seed = 1234;
    o.step = 7;
    o.judge.runner.mode = judge::JudgeMode::kCompile;
    o.judge.runner.work_dir = cuset::test::scratch_dir(name);
    o.judge.runner.nvcc = judge::find_nvcc("", "eval.nvcc");
    o.judge.jobs = 2;
    return o;
}

const char* kBroken = "Here:\n```cuda\nint main( {\n```\nThat should do it.";

// The scripted answers: call c (turn c + 1) answers its inputs in order.
struct Script {
    const Tokenizer* tok = nullptr;
    std::vector<std::vector<std::string>> turns;  // per call, the answers in row order
    std::vector<std::vector<GenerationInput>> seen;
    bool report = false;  // tell the rollout of each finished row, as the generator does
    rl::SampleFn fn() {
        return [this](const std::vector<GenerationInput>& in, const rl::FinishFn& finished) {
            const size_t call = seen.size();
            seen.push_back(in);
            std::vector<GenerationOutput> out;
            for (size_t i = 0; i < in.size(); ++i) {
                GenerationOutput g;
                g.text = turns.at(call).at(i);
                g.tokens = tok->encode(g.text).ids;
                g.finish = FinishReason::kEos;
                if (report && finished) finished(i, g);
                out.push_back(g);
            }
            return out;
        };
    }
};

}  // namespace

TEST(MultiTurnRollout, ConversationsRewardsReturnsAndAdvantages) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const eval::Task task = first_task();
    const std::string reference = "```cuda\n" + task.bench_cu + "\n```";
    Script s;
    s.tok = tok.get();
    s.turns = {{kBroken, "I cannot write that."}, {reference, "Still nothing."}, {"```cuda\nint main( {\n```"}};
    rl::RolloutOptions o = options("multi_turn_fixed");
    rl::MultiTurnOptions mt;
    mt.turns = 3;
    mt.returns.discount = 0.5;
    mt.returns.advantage = TurnAdvantage::kLeaveOneOut;
    rl::Rollout r = rl::multi_turn_rollout(s.fn(), fmt, {task}, /*pad_id=*/0, o, mt);

    ASSERT_EQ(s.seen.size(), 3u);
    EXPECT_EQ(s.seen[0].size(), 2u);
    EXPECT_EQ(s.seen[1].size(), 2u);
    EXPECT_EQ(s.seen[2].size(), 1u);  // trajectory 1 passed at turn 2
    ASSERT_EQ(r.records.size(), 5u);
    const int64_t want_turn[5] = {1, 2, 1, 2, 3};
    const int64_t want_sample[5] = {1, 1, 2, 2, 2};
    const char* want_status[5] = {"compile-error", "compiled", "no-code", "no-code", "compile-error"};
    const double want_reward[5] = {0.1, 0.1 + 0.2, 0.0, 0.0, 0.1};
    const double want_return[5] = {0.25, 0.3, 0.025, 0.05, 0.1};
    const double want_adv[5] = {0.225, 0.25, -0.225, -0.25, 0.0};
    for (size_t i = 0; i < 5; ++i) {
        const rl::RolloutRecord& rec = r.records[i];
        EXPECT_EQ(rec.turn, want_turn[i]) << i;
        EXPECT_EQ(rec.sample, want_sample[i]) << i;
        EXPECT_STREQ(cuset::judge::status_name(rec.status), want_status[i]) << i << ": " << rec.error;
        EXPECT_NEAR(rec.reward, want_reward[i], 1e-12) << i;
        // fp32 returns and advantages of rewards of order 0.1: 1e-6 is a few fp32 ulps of the sums.
        EXPECT_NEAR(rec.ret, want_return[i], 1e-6) << i;
        EXPECT_NEAR(rec.advantage, want_adv[i], 1e-6) << i;
        EXPECT_NEAR(r.batch.advantages[static_cast<int64_t>(i)].item<double>(), want_adv[i], 1e-6) << i;
        EXPECT_NEAR(r.batch.rewards[static_cast<int64_t>(i)].item<double>(), want_reward[i], 1e-7) << i;
    }
    EXPECT_EQ(r.trajectories, 2);
    EXPECT_EQ(r.turns_taken, 5);
    EXPECT_EQ(r.fixed, 1);
    ASSERT_EQ(r.batch.prompt_ids.size(0), 5);
    ASSERT_EQ(r.batch.advantages.sizes(), (at::IntArrayRef{5}));

    // Turn 1: the single-turn prompt and seeds. Turn 2 of trajectory 1: its answer and the judge's
    // finding about it, then the generation prompt; its own stream.
    Conversation c;
    c.messages = {{"system", eval::system_prompt()}, {"user", eval::build_user_prompt(task, 3, "")}};
    EXPECT_EQ(s.seen[0][0].prompt, fmt.generation_prompt(c));
    EXPECT_EQ(s.seen[0][1].seed, sample_seed(1234, "7:" + task.id_text, 1));
    const std::string feedback = eval::repair_turn(judge::Status::kCompileError, r.records[0].error);
    ASSERT_FALSE(feedback.empty());
    Conversation c2 = c;
    c2.messages.push_back({"assistant", kBroken});
    c2.messages.push_back({"user", feedback});
    EXPECT_EQ(s.seen[1][0].prompt, fmt.generation_prompt(c2));
    EXPECT_EQ(s.seen[1][0].seed, sample_seed(1234, "7:" + task.id_text + ":t2", 0));
    // Trajectory 2's turn 3 follows two findings about answers without a program.
    Conversation c3 = c;
    const std::string none = eval::repair_turn(judge::Status::kNoCode, r.records[2].error);
    c3.messages.push_back({"assistant", "I cannot write that."});
    c3.messages.push_back({"user", none});
    c3.messages.push_back({"assistant", "Still nothing."});
    c3.messages.push_back({"user", eval::repair_turn(judge::Status::kNoCode, r.records[3].error)});
    EXPECT_EQ(s.seen[2][0].prompt, fmt.generation_prompt(c3));
    // Each row's prompt and completion in the batch.
    const std::vector<int32_t>& p = s.seen[1][0].prompt;
    const int64_t P = r.batch.prompt_ids.size(1);
    EXPECT_EQ(r.batch.prompt_mask[1].sum().item<int64_t>(), static_cast<int64_t>(p.size()));
    EXPECT_TRUE(at::equal(r.batch.prompt_ids[1].narrow(0, P - static_cast<int64_t>(p.size()), static_cast<int64_t>(p.size())),
                          at::tensor(std::vector<int64_t>(p.begin(), p.end()))));
    const std::vector<int32_t> ids = tok->encode(reference).ids;
    EXPECT_TRUE(at::equal(r.batch.completion_ids[1].narrow(0, 0, static_cast<int64_t>(ids.size())),
                          at::tensor(std::vector<int64_t>(ids.begin(), ids.end()))));
}

TEST(MultiTurnRollout, ProgramsHistoryKeepsOnlyTheFencedProgram) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const eval::Task task = first_task();
    Script s;
    s.tok = tok.get();
    s.turns = {{kBroken, kBroken}, {"no", "no"}};
    rl::RolloutOptions o = options("multi_turn_programs");
    rl::MultiTurnOptions mt;
    mt.turns = 2;
    mt.history = rl::TurnHistory::kPrograms;
    rl::Rollout r = rl::multi_turn_rollout(s.fn(), fmt, {task}, 0, o, mt);
    ASSERT_EQ(s.seen.size(), 2u);
    Conversation c;
    c.messages = {{"system", eval::system_prompt()},
                  {"user", eval::build_user_prompt(task, 3, "")},
                  {"assistant", "```cuda\nint main( {\n```"},  // the prose around the program is gone
                  {"user", eval::repair_turn(judge::Status::kCompileError, r.records[0].error)}};
    EXPECT_EQ(s.seen[1][0].prompt, fmt.generation_prompt(c));
    EXPECT_EQ(rl::turn_history_parse("programs", "k"), rl::TurnHistory::kPrograms);
    EXPECT_THROW(rl::turn_history_parse("prose", "k"), UsageError);
}

TEST(MultiTurnRollout, ATrajectoryWithoutRoomForAnotherAnswerEnds) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const eval::Task task = first_task();
    Conversation c;
    c.messages = {{"system", eval::system_prompt()}, {"user", eval::build_user_prompt(task, 3, "")}};
    const int64_t first = static_cast<int64_t>(fmt.generation_prompt(c).size());
    Script s;
    s.tok = tok.get();
    s.turns = {{kBroken, kBroken}};
    rl::RolloutOptions o = options("multi_turn_context");
    rl::MultiTurnOptions mt;
    mt.turns = 3;
    mt.max_new_tokens = 64;
    mt.max_context = first + 64;  // room for turn 1 only
    rl::Rollout r = rl::multi_turn_rollout(s.fn(), fmt, {task}, 0, o, mt);
    EXPECT_EQ(s.seen.size(), 1u);
    EXPECT_EQ(r.records.size(), 2u);
    EXPECT_EQ(r.turns_taken, 2);
    // Two failures alike at turn 1: no signal, advantages 0.
    EXPECT_EQ(r.batch.advantages.abs().max().item<double>(), 0.0);
}

// Judging each answer as soon as it has finished (judge_while_sampling, the default) gives the
// rollout of judging each turn after its sampling: the same records and tensors.
TEST(MultiTurnRollout, JudgingWhileSamplingChangesNothing) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const eval::Task task = first_task();
    const std::string reference = "```cuda\n" + task.bench_cu + "\n```";
    rl::MultiTurnOptions mt;
    mt.turns = 3;
    std::vector<rl::Rollout> r;
    for (const bool early : {true, false}) {
        Script s;
        s.tok = tok.get();
        s.report = true;
        s.turns = {{kBroken, "I cannot write that."}, {reference, "Still nothing."}, {"```cuda\nint main( {\n```"}};
        rl::RolloutOptions o = options(early ? "multi_turn_early" : "multi_turn_late");
        o.judge_while_sampling = early;
        r.push_back(rl::multi_turn_rollout(s.fn(), fmt, {task}, 0, o, mt));
    }
    ASSERT_EQ(r[0].records.size(), r[1].records.size());
    for (size_t i = 0; i < r[0].records.size(); ++i) {
        EXPECT_EQ(r[0].records[i].status, r[1].records[i].status) << i;
        EXPECT_EQ(r[0].records[i].turn, r[1].records[i].turn) << i;
        EXPECT_EQ(r[0].records[i].reward, r[1].records[i].reward) << i;
        EXPECT_EQ(r[0].records[i].advantage, r[1].records[i].advantage) << i;
    }
    EXPECT_TRUE(at::equal(r[0].batch.prompt_ids, r[1].batch.prompt_ids));
    EXPECT_TRUE(at::equal(r[0].batch.completion_ids, r[1].batch.completion_ids));
    EXPECT_TRUE(at::equal(r[0].batch.advantages, r[1].batch.advantages));
    EXPECT_EQ(r[1].groups_judged_while_sampling, 0);
}

// One turn is single-turn GRPO: the multi-turn rollout with turns 1 samples the same prompts with
// the same seeds, gets the same verdicts, rewards and tensors as grpo_rollout, and its per-row
// advantages are grpo_advantages' of those rewards, bit for bit.
TEST(MultiTurnRollout, OneTurnIsTheSingleTurnRollout) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const eval::Task task = first_task();
    const std::string reference = "```cuda\n" + task.bench_cu + "\n```";
    std::vector<Script> s(2);
    for (Script& x : s) {
        x.tok = tok.get();
        x.turns = {{kBroken, reference}};
    }
    rl::RolloutOptions o = options("multi_turn_one");
    const rl::Rollout single = rl::grpo_rollout(s[0].fn(), fmt, {task}, 0, o);
    rl::MultiTurnOptions mt;
    mt.turns = 1;
    const rl::Rollout multi = rl::multi_turn_rollout(s[1].fn(), fmt, {task}, 0, o, mt);
    ASSERT_EQ(s[0].seen.size(), 1u);
    ASSERT_EQ(s[1].seen.size(), 1u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(s[0].seen[0][i].prompt, s[1].seen[0][i].prompt);
        EXPECT_EQ(s[0].seen[0][i].seed, s[1].seen[0][i].seed);
        EXPECT_EQ(single.records[i].status, multi.records[i].status);
        EXPECT_EQ(single.records[i].reward, multi.records[i].reward);
        EXPECT_EQ(multi.records[i].turn, 1);
    }
    for (auto field : {&GrpoRollout::prompt_ids, &GrpoRollout::prompt_mask, &GrpoRollout::completion_ids,
                       &GrpoRollout::completion_mask, &GrpoRollout::rewards})
        EXPECT_TRUE(at::equal(single.batch.*field, multi.batch.*field));
    EXPECT_TRUE(at::equal(multi.batch.advantages, grpo_advantages(single.batch.rewards, 2, RewardScaling::kGroup).advantages));
    EXPECT_FALSE(single.batch.advantages.defined());
}

// A KernelBench problem (the fixture ReLU of tests/fixtures/kernelbench/judge, as `data tasks
// --from-kernelbench` writes it) under the emulating judge, G = 2, T = 2: trajectory 1 answers
// with a module that writes its input (input-mutated), then with an honest one (pass);
// trajectory 2 passes at once. The turn-2 prompt is KernelBench's conversation (its system prompt
// and prompt, the answer, the module's finding with the rule it broke); the pass earns more.
TEST(MultiTurnRollout, KernelBenchProblemsAnswerTheirOwnFindings) {
    const std::string dir = cuset::test::scratch_dir("multi_turn_kernelbench");
    const std::string fixtures = std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/kernelbench";
    auto made = cuset::test::run_cuset("data tasks --from-kernelbench '" + fixtures + "/judge' --levels 1 --out '" + dir +
                                       "/kb.jsonl'");
    ASSERT_EQ(made.exit_code, 0) << made.err;
    eval::Task task;
    for (const eval::Task& t : eval::load_tasks(dir + "/kb.jsonl"))
        if (t.id_text == "level1_19_ReLU") task = t;
    ASSERT_TRUE(task.kernelbench.has_value());
    auto answer = [&](const std::string& file) {
        return "Here.\n```python\n" + cuset::test::read_file(fixtures + "/candidates/" + file) + "```\n";
    };
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    Script s;
    s.tok = tok.get();
    s.turns = {{answer("hack_input_mutation.py"), answer("honest_relu.py")}, {answer("honest_relu.py")}};
    rl::RolloutOptions o = options("multi_turn_kernelbench_judge");
    o.judge.runner.mode = judge::JudgeMode::kEmulate;
    o.judge.runner.python = judge::find_python(CUSET_PYTHON, "eval.python");
    o.judge.runner.cache_dir = eval::judge_cache_dir();  // the toolchain the command line builds once per machine
    rl::MultiTurnOptions mt;
    mt.turns = 2;
    rl::Rollout r = rl::multi_turn_rollout(s.fn(), fmt, {task}, /*pad_id=*/0, o, mt);

    ASSERT_EQ(r.records.size(), 3u);
    EXPECT_STREQ(cuset::judge::status_name(r.records[0].status), "input-mutated") << r.records[0].error;
    EXPECT_STREQ(cuset::judge::status_name(r.records[1].status), "pass") << r.records[1].error;
    EXPECT_STREQ(cuset::judge::status_name(r.records[2].status), "pass") << r.records[2].error;
    EXPECT_EQ(r.records[1].turn, 2);
    EXPECT_GT(r.records[1].reward, r.records[0].reward);
    EXPECT_EQ(r.records[1].reward, r.records[2].reward);
    EXPECT_EQ(r.fixed, 1);
    ASSERT_EQ(s.seen.size(), 2u);
    ASSERT_EQ(s.seen[1].size(), 1u);
    Conversation c;
    c.id = "task " + task.id_text;
    c.messages = {{"system", "You are a helpful assistant"},
                  {"user", task.kernelbench->prompt},
                  {"assistant", s.turns[0][0]},
                  {"user", eval::repair_turn(task, judge::Status::kInputMutated, r.records[0].error)}};
    EXPECT_EQ(s.seen[1][0].prompt, fmt.generation_prompt(c, false));
    const std::string feedback = c.messages.back().content;
    EXPECT_NE(feedback.find("forward changes its input tensors"), std::string::npos) << feedback;
    EXPECT_NE(feedback.find("```python"), std::string::npos) << feedback;
}

// continue_after_pass under the emulating judge with the speed-up measure on (the measure itself
// is tested in tests/eval/test_speedup.cpp; emulated times say nothing about a GPU, which is why
// the configuration asks for a gpu judge, but the rollout's rule is the same). G = 2, T = 2:
// trajectory 1 passes at turn 1 with a speed-up, and instead of ending gets the figure back and
// answers again; trajectory 2 fails to compile and gets the compiler's finding. Without the
// option, the passing trajectory ends at turn 1.
TEST(MultiTurnRollout, ContinueAfterPassAsksAPassingTrajectoryForSpeed) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const eval::Task task = first_task();
    const std::string reference = "```cuda\n" + task.bench_cu + "\n```";
    for (bool go_on : {true, false}) {
        Script s;
        s.tok = tok.get();
        s.turns = {{reference, kBroken}, {reference, reference}};
        rl::RolloutOptions o = options(go_on ? "multi_turn_continue" : "multi_turn_stop");
        o.judge.runner.mode = judge::JudgeMode::kEmulate;
        o.judge.runner.python = judge::find_python(CUSET_PYTHON, "eval.python");
        o.judge.runner.cache_dir = o.judge.runner.work_dir + "/cache";
        o.judge.runner.speedup.enabled = true;
        o.judge.runner.speedup.warmup = 0;
        o.judge.runner.speedup.repeats = 1;
        rl::MultiTurnOptions mt;
        mt.turns = 2;
        mt.continue_after_pass = go_on;
        rl::Rollout r = rl::multi_turn_rollout(s.fn(), fmt, {task}, /*pad_id=*/0, o, mt);
        ASSERT_GE(r.records.size(), 3u);
        EXPECT_STREQ(cuset::judge::status_name(r.records[0].status), "pass") << r.records[0].error;
        ASSERT_TRUE(r.records[0].speedup.has_value()) << r.records[0].speedup_note;
        ASSERT_EQ(s.seen.size(), 2u);
        if (!go_on) {
            EXPECT_EQ(r.records.size(), 3u) << "a pass ends its trajectory";
            EXPECT_EQ(s.seen[1].size(), 1u);
            continue;
        }
        ASSERT_EQ(r.records.size(), 4u);
        EXPECT_EQ(r.records[1].turn, 2);
        EXPECT_EQ(r.records[1].sample, 1);
        EXPECT_STREQ(cuset::judge::status_name(r.records[1].status), "pass") << r.records[1].error;
        ASSERT_EQ(s.seen[1].size(), 2u);
        Conversation c;
        c.id = "task " + task.id_text;
        c.messages = {{"system", eval::system_prompt(task)},
                      {"user", eval::build_user_prompt(task, o.level, o.gpu_name)},
                      {"assistant", reference},
                      {"user", eval::speedup_turn(task, *r.records[0].speedup)}};
        EXPECT_EQ(s.seen[1][0].prompt, fmt.generation_prompt(c, false));
        EXPECT_EQ(r.fixed, 1) << "trajectory 2, fixed at turn 2; trajectory 1 passed at turn 1";
    }
}
