// rl/rollout: a step's completions judged and turned into the tensors of a GRPO step. With fixed
// answers (a task's own reference, a program that does not compile, an answer without a program)
// under the compile-only judge, each row carries its prompt exactly as the chat format renders
// CUDABench's messages, its completion tokens, the judge's status and the reward worked by hand;
// with the demo model as the policy, the same seed gives the same completions and another step
// other draws.
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/generate/sampling.h"
#include "cuset/judge/toolchain.h"
#include "cuset/model/model.h"
#include "cuset/rl/rollout.h"
#include "cuset/text/tokenizer.h"
#include "test_util.h"

using namespace cuset;

namespace {

std::string demo_dir() { return std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder"; }

std::vector<eval::Task> two_tasks() {
    std::vector<eval::Task> all = eval::load_tasks(std::string(CUSET_SOURCE_DIR) + "/data/cuda-tasks/tasks.jsonl");
    return {all.at(0), all.at(1)};
}

rl::RolloutOptions options(const std::string& name) {
    rl::RolloutOptions o;
    o.group_size = 3;
    o.seed = 1234;
    o.step = 7;
    o.judge.runner.mode = judge::JudgeMode::kCompile;
    o.judge.runner.work_dir = cuset::test::scratch_dir(name);
    o.judge.runner.nvcc = judge::find_nvcc("", "eval.nvcc");
    o.judge.jobs = 2;
    return o;
}

}  // namespace

TEST(Rollout, FixedAnswersGiveTheirStatusesRewardsAndRows) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const std::vector<eval::Task> tasks = two_tasks();
    rl::RolloutOptions o = options("rollout_fixed");
    auto answers_text = [&](int64_t row) {
        const eval::Task& t = tasks[static_cast<size_t>(row / 3)];
        const std::string texts[3] = {"Here it is:\n```cuda\n" + t.bench_cu + "\n```\n", "```cuda\nint main( {\n```",
                                      "I cannot write that."};
        return texts[row % 3];
    };
    std::vector<GenerationInput> seen;
    std::vector<int64_t> lengths;  // the completion tokens of each answer
    rl::SampleFn answers = [&](const std::vector<GenerationInput>& in, const rl::FinishFn&) {
        seen = in;
        std::vector<GenerationOutput> out;
        for (size_t i = 0; i < in.size(); ++i) {
            GenerationOutput g;
            g.text = answers_text(static_cast<int64_t>(i));
            g.tokens = tok->encode(g.text).ids;
            g.finish = FinishReason::kEos;
            lengths.push_back(static_cast<int64_t>(g.tokens.size()));
            out.push_back(g);
        }
        return out;
    };
    rl::Rollout r = rl::grpo_rollout(answers, fmt, tasks, /*pad_id=*/0, o);
    ASSERT_EQ(seen.size(), 6u);
    ASSERT_EQ(r.records.size(), 6u);
    // Hand-worked with the default weights: compiled 0.1 + 0.2, a compile error 0.1, no program 0.
    const double want[3] = {0.1 + 0.2, 0.1, 0.0};
    const char* status[3] = {"compiled", "compile-error", "no-code"};
    for (int64_t row = 0; row < 6; ++row) {
        const eval::Task& t = tasks[static_cast<size_t>(row / 3)];
        const rl::RolloutRecord& rec = r.records[static_cast<size_t>(row)];
        EXPECT_EQ(rec.task, t.id_text);
        EXPECT_EQ(rec.sample, row % 3 + 1);
        EXPECT_STREQ(cuset::judge::status_name(rec.status), status[row % 3]) << rec.error;
        EXPECT_DOUBLE_EQ(r.batch.rewards[row].item<double>(), static_cast<float>(want[row % 3]));
        // The prompt: CUDABench's two messages with the generation prompt, left-padded.
        Conversation c;
        c.messages = {{"system", eval::system_prompt()}, {"user", eval::build_user_prompt(t, 3, "")}};
        const std::vector<int32_t> p = fmt.generation_prompt(c);
        EXPECT_EQ(seen[static_cast<size_t>(row)].prompt, p);
        EXPECT_EQ(seen[static_cast<size_t>(row)].seed, sample_seed(1234, "7:" + t.id_text, row % 3));
        const int64_t P = r.batch.prompt_ids.size(1);
        at::Tensor prow = r.batch.prompt_ids[row].narrow(0, P - static_cast<int64_t>(p.size()), static_cast<int64_t>(p.size()));
        EXPECT_TRUE(at::equal(prow, at::tensor(std::vector<int64_t>(p.begin(), p.end())))) << row;
        EXPECT_EQ(r.batch.prompt_mask[row].sum().item<int64_t>(), static_cast<int64_t>(p.size()));
        EXPECT_EQ(r.batch.completion_mask[row].sum().item<int64_t>(), rec.tokens);
        EXPECT_EQ(rec.tokens, lengths[static_cast<size_t>(row)]);
        const std::vector<int32_t> ids = tok->encode(answers_text(row)).ids;
        EXPECT_TRUE(at::equal(r.batch.completion_ids[row].narrow(0, 0, rec.tokens),
                              at::tensor(std::vector<int64_t>(ids.begin(), ids.end()))))
            << row;
    }
    // The two tasks' prompts differ in length: the shorter ones are padded on the left.
    EXPECT_LT(r.batch.prompt_mask.sum(1).min().item<int64_t>(), r.batch.prompt_ids.size(1));
}

// TRL's mask_truncated_completions: a completion that ran into the length limit (finish
// "length") keeps its tokens and its reward (its group's advantages count it) but leaves the loss
// (an all-zero completion mask); completions that ended at EOS or a stop string keep theirs.
TEST(Rollout, MaskTruncatedLeavesCutCompletionsOutOfTheLoss) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const std::vector<eval::Task> tasks = two_tasks();
    const FinishReason finish[3] = {FinishReason::kEos, FinishReason::kLength, FinishReason::kStop};
    rl::SampleFn answers = [&](const std::vector<GenerationInput>& in, const rl::FinishFn&) {
        std::vector<GenerationOutput> out;
        for (size_t i = 0; i < in.size(); ++i) {
            GenerationOutput g;
            g.text = "```cuda\nint main() { return 0; }\n```";
            g.tokens = tok->encode(g.text).ids;
            g.finish = finish[i % 3];
            out.push_back(g);
        }
        return out;
    };
    for (const bool mask : {false, true}) {
        rl::RolloutOptions o = options(mask ? "rollout_mask_on" : "rollout_mask_off");
        o.mask_truncated = mask;
        rl::Rollout r = rl::grpo_rollout(answers, fmt, tasks, 0, o);
        ASSERT_EQ(r.records.size(), 6u);
        for (int64_t row = 0; row < 6; ++row) {
            const bool cut = row % 3 == 1;
            const int64_t n = r.records[static_cast<size_t>(row)].tokens;
            EXPECT_EQ(r.records[static_cast<size_t>(row)].finish, cut ? "length" : row % 3 ? "stop" : "eos");
            EXPECT_EQ(r.batch.completion_mask[row].sum().item<int64_t>(), mask && cut ? 0 : n) << row;
            EXPECT_DOUBLE_EQ(r.batch.rewards[row].item<double>(), static_cast<float>(0.3)) << "the reward stays";
            const std::vector<int32_t> ids = tok->encode(std::string("```cuda\nint main() { return 0; }\n```")).ids;
            EXPECT_TRUE(at::equal(r.batch.completion_ids[row].narrow(0, 0, n),
                                  at::tensor(std::vector<int64_t>(ids.begin(), ids.end()))))
                << "the tokens stay";
        }
    }
}

TEST(Rollout, TheDemoModelsDrawsFollowTheSeed) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    Decoder model = model_load(demo_dir(), at::kFloat, c10::Device(c10::kCPU));
    GenerateOptions go;
    go.max_new_tokens = 12;
    go.sampling.temperature = 1.0;
    Generator gen(model, *tok, go, c10::Device(c10::kCPU));
    rl::SampleFn sample = [&](const std::vector<GenerationInput>& in, const rl::FinishFn& f) {
        return gen.generate(in, {}, f);
    };
    const std::vector<eval::Task> tasks = {two_tasks()[0]};
    rl::RolloutOptions o = options("rollout_model");
    o.group_size = 2;
    rl::Rollout a = rl::grpo_rollout(sample, fmt, tasks, 0, o);
    rl::Rollout b = rl::grpo_rollout(sample, fmt, tasks, 0, o);
    EXPECT_TRUE(at::equal(a.batch.completion_ids, b.batch.completion_ids)) << "same seed, same completions";
    o.step = 8;
    rl::Rollout c = rl::grpo_rollout(sample, fmt, tasks, 0, o);
    EXPECT_FALSE(at::equal(a.batch.completion_ids, c.batch.completion_ids)) << "another step draws anew";
    EXPECT_FALSE(at::equal(a.batch.completion_ids[0], a.batch.completion_ids[1])) << "the group's streams differ";
    // Judged after the sampling instead of as the group finishes: the same rollout.
    o.step = 7;
    o.judge_while_sampling = false;
    rl::Rollout d = rl::grpo_rollout(sample, fmt, tasks, 0, o);
    EXPECT_TRUE(at::equal(a.batch.completion_ids, d.batch.completion_ids));
    EXPECT_TRUE(at::equal(a.batch.rewards, d.batch.rewards));
    EXPECT_EQ(d.groups_judged_while_sampling, 0);
    for (const rl::RolloutRecord& r : a.records) {
        EXPECT_GT(r.tokens, 0);
        EXPECT_LE(r.tokens, 12);
        EXPECT_FALSE(std::isnan(r.reward)) << "the compile judge scores every answer";
    }
}

TEST(Rollout, Refusals) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    rl::RolloutOptions o = options("rollout_refusals");
    rl::SampleFn none = [](const std::vector<GenerationInput>&, const rl::FinishFn&) { return std::vector<GenerationOutput>{}; };
    EXPECT_THROW(rl::grpo_rollout(none, fmt, two_tasks(), 0, o), RuntimeFailure);  // no completions back
    o.group_size = 1;
    EXPECT_THROW(rl::grpo_rollout(none, fmt, two_tasks(), 0, o), UsageError);
}

// Judging while sampling: the sampler reports the first task's three rows as finished and then
// waits until the judge has given their verdicts (it would wait forever, bounded here at 300 s,
// if the judging began only after the sampler returned); the second task's rows are never
// reported and are judged once it returns. The rollout equals the one judged after the sampling.
TEST(Rollout, AGroupIsJudgedWhileTheOthersAreStillSampled) {
    auto tok = tokenizer_load(demo_dir());
    ChatFormatter fmt(*tok, ChatFormatOptions{}, demo_dir());
    const std::vector<eval::Task> tasks = two_tasks();
    auto outputs = [&](size_t n) {
        std::vector<GenerationOutput> out;
        for (size_t i = 0; i < n; ++i) {
            GenerationOutput g;
            g.text = i % 3 == 1 ? "```cuda\nint main( {\n```" : "```cuda\n" + tasks[i / 3].bench_cu + "\n```";
            g.tokens = tok->encode(g.text).ids;
            g.finish = FinishReason::kEos;
            out.push_back(g);
        }
        return out;
    };
    std::mutex mu;
    std::condition_variable cv;
    int64_t verdicts = 0, verdicts_before_return = -1;
    rl::RolloutOptions o = options("rollout_overlap");
    o.judge.on_sample = [&](size_t, const eval::SampleResult&) {
        std::lock_guard<std::mutex> lock(mu);
        ++verdicts;
        cv.notify_all();
    };
    rl::SampleFn waiting = [&](const std::vector<GenerationInput>& in, const rl::FinishFn& finished) {
        std::vector<GenerationOutput> out = outputs(in.size());
        for (size_t row = 0; row < 3; ++row) finished(row, out[row]);
        std::unique_lock<std::mutex> lock(mu);
        cv.wait_for(lock, std::chrono::seconds(300), [&] { return verdicts >= 3; });
        verdicts_before_return = verdicts;
        return out;
    };
    rl::Rollout r = rl::grpo_rollout(waiting, fmt, tasks, 0, o);
    EXPECT_EQ(verdicts_before_return, 3) << "the first group was judged during the sampling, and only it";
    EXPECT_EQ(verdicts, 6);
    EXPECT_EQ(r.groups_judged_while_sampling, 1);

    rl::RolloutOptions after = options("rollout_overlap_off");
    after.judge_while_sampling = false;
    rl::SampleFn plain = [&](const std::vector<GenerationInput>& in, const rl::FinishFn&) { return outputs(in.size()); };
    rl::Rollout a = rl::grpo_rollout(plain, fmt, tasks, 0, after);
    EXPECT_EQ(a.groups_judged_while_sampling, 0);
    ASSERT_EQ(r.records.size(), a.records.size());
    for (size_t i = 0; i < r.records.size(); ++i) {
        EXPECT_EQ(r.records[i].status, a.records[i].status) << i;
        EXPECT_EQ(r.records[i].reward, a.records[i].reward) << i;
    }
    EXPECT_STREQ(cuset::judge::status_name(r.records[0].status), "compiled");
    EXPECT_STREQ(cuset::judge::status_name(r.records[1].status), "compile-error");
    EXPECT_TRUE(at::equal(r.batch.rewards, a.batch.rewards));
    EXPECT_TRUE(at::equal(r.batch.completion_ids, a.batch.completion_ids));
}
