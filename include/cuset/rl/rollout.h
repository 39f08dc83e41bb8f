// A GRPO rollout on the judge: for each task of a step, G completions sampled from the policy for
// the task's CUDABench prompt (the system and user messages eval sends, rendered by the model's
// chat format with its generation prompt), their programs judged by the one judge (eval/judge.h,
// contained), each verdict turned into a reward (judge/reward.h), and the padded tensors
// rl/grpo_step.h takes. A record per completion (task, sample, status, reward, tokens) lets a
// run be audited for reward hacking.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"
#include "cuset/generate/generator.h"
#include "cuset/judge/reward.h"
#include "cuset/text/chat_format.h"
#include "cuset/rl/grpo_step.h"

namespace cuset::rl {

// Called by a sampler as soon as row i of its batch has finished (Generator::generate's on_finish).
using FinishFn = std::function<void(size_t, const GenerationOutput&)>;
// Decodes a batch (Generator::generate, or fixed answers in tests and replays). A sampler that
// reports finished rows through the FinishFn lets the rollout judge a group while the others are
// still decoding; one that does not is judged once it returns.
using SampleFn = std::function<std::vector<GenerationOutput>(const std::vector<GenerationInput>&, const FinishFn&)>;

struct RolloutOptions {
    int64_t group_size = 8;    // G completions per task
    int level = 3;             // CUDABench's description level of the prompt
    std::string gpu_name;      // the GPU label of the prompt ("" = the task's)
    uint64_t seed = 0;         // the run's seed: completion k of a task draws from
                               // sample_seed(seed, "<step>:<task id>", k)
    int64_t step = 0;
    bool thinking = false;     // Qwen3-style thinking blocks in the generation prompt
    std::string system_prompt; // the system message ("" = CUDABench's, what eval sends)
    eval::JudgeOptions judge;  // mode, tools, containment, work folder, jobs
    judge::RewardWeights rewards;
    bool mask_truncated = false; // a completion cut at the length limit (finish "length") gets an
                                 // all-zero completion mask: out of the loss, its reward still in
                                 // its group's advantages (TRL's mask_truncated_completions)
    // A task's group is judged as soon as its G completions have finished, on a thread beside the
    // decoding of the others; the verdicts, rewards and tensors are the same as when everything is
    // judged after the sampling (the batch decoded is the same), only sooner.
    bool judge_while_sampling = true;
};

struct RolloutRecord {
    std::string task;     // the task's id
    int64_t group = 0;    // its task's index in the rollout's task list
    int64_t sample = 0;   // 1-based within its group
    judge::Status status = judge::Status::kNoCode;  // the judge's verdict
    std::string reason;   // reward_of's reason
    double reward = 0;    // NaN = unscorable
    int64_t tokens = 0;   // completion tokens
    std::string finish;   // eos | stop | length
    std::string error;    // the judge's first error line
    std::optional<double> speedup;  // over the task's reference (the speed-up reward's timing runs)
    std::string speedup_note;       // why a pass has no speed-up
    // Multi-turn rollouts (rl/multi_turn.h) only: the row's turn (1-based; 0 = a single-turn
    // rollout), its discounted return and its advantage.
    int64_t turn = 0;
    double ret = 0, advantage = 0;
};

struct Rollout {
    GrpoRollout batch;                   // [N = tasks x G] rows, a task's G adjacent
    std::vector<RolloutRecord> records;  // one per row, in row order
    int64_t groups_judged_while_sampling = 0;  // groups whose judging began before the sampler returned
    // Multi-turn rollouts: trajectories, the turns they took in all, and those whose first answer
    // failed and a later one succeeded.
    int64_t trajectories = 0, turns_taken = 0, fixed = 0;
};

// Rows sampled and judged: group g is rows g*G .. g*G + G - 1, all answering group_tasks[g].
struct SampledRows {
    std::vector<GenerationOutput> outs;     // [N] in row order
    std::vector<eval::TaskResult> groups;   // per group: its G verdicts (samples[k] = row g*G + k)
    int64_t groups_judged_while_sampling = 0;
};
// Samples `inputs` (whole groups of group_size rows) and judges every answer's program: a group as
// soon as its rows have finished, on a thread beside the decoding of the others when
// `while_sampling` (the same verdicts as judging after the sampling, only sooner), else all
// together once the sampler returns. The judge's environment failures and stop signals propagate.
SampledRows sample_and_judge(const SampleFn& sample, const std::vector<GenerationInput>& inputs,
                             const std::vector<eval::Task>& group_tasks, int64_t group_size, const eval::JudgeOptions& jo,
                             bool while_sampling);

// The padded tensors of `batch` for rows of `prompts` and their completions `outs`: prompts
// left-padded, completions right-padded, with `pad_id`; a completion cut at the length limit gets
// an all-zero mask when `mask_truncated`. Sets prompt_ids, prompt_mask, completion_ids and
// completion_mask.
void fill_rollout_rows(GrpoRollout& batch, const std::vector<std::vector<int32_t>>& prompts,
                       const std::vector<GenerationOutput>& outs, int32_t pad_id, bool mask_truncated);

// The record of a judged completion (sample 1-based within its group).
RolloutRecord rollout_record(const std::string& task, int64_t sample, const eval::SampleResult& s, const judge::Reward& rw,
                             const GenerationOutput& g);

// The reward of a judged sample (judge::reward_of on its verdict).
judge::Reward sample_reward(const eval::SampleResult& s, const judge::RewardWeights& w);

// Samples, judges and scores `tasks` (all of them: the caller picks a step's tasks). The pad id
// fills the padding (masked out). Judge failures of the judge's own environment stop it
// (judge::JudgeEnvironmentError), a program's failure is its status.
Rollout grpo_rollout(const SampleFn& sample, const ChatFormatter& fmt, const std::vector<eval::Task>& tasks,
                     int32_t pad_id, const RolloutOptions& o);

}  // namespace cuset::rl
