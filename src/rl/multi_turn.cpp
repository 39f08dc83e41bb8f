// Multi-turn GRPO rollouts (rl/multi_turn.h).
#include "cuset/rl/multi_turn.h"

#include <ATen/ATen.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "cuset/core/error.h"
#include "cuset/eval/repair.h"
#include "cuset/generate/sampling.h"

namespace cuset::rl {

TurnHistory turn_history_parse(const std::string& name, const char* key) {
    if (name == "full") return TurnHistory::kFull;
    if (name == "programs") return TurnHistory::kPrograms;
    throw UsageError(std::string("config error: '") + key + "' must be full or programs, got '" + name + "'");
}

const char* turn_history_name(TurnHistory h) { return h == TurnHistory::kFull ? "full" : "programs"; }

namespace {

// One trajectory: its conversation so far and, per turn taken, what the policy answered and what
// the judge found.
struct Trajectory {
    size_t task = 0;
    int64_t sample = 0;  // 0-based within its group
    Conversation conv;   // system, user, then (assistant, user) per earlier turn
    std::vector<std::string> programs;  // per earlier answer: its fenced program, or the answer when it has none
    struct Turn {
        std::vector<int32_t> prompt;
        GenerationOutput out;
        eval::SampleResult verdict;
        judge::Reward reward;
    };
    std::vector<Turn> turns;
    bool open = true;
};

// The conversation as the next prompt shows it: as it is, or with each earlier answer cut to its
// fenced program.
Conversation shown(const Trajectory& t, TurnHistory h) {
    if (h == TurnHistory::kFull) return t.conv;
    Conversation c = t.conv;
    size_t answer = 0;
    for (Message& m : c.messages)
        if (m.role == "assistant" && answer < t.programs.size()) m.content = t.programs[answer++];
    return c;
}

}  // namespace

Rollout multi_turn_rollout(const SampleFn& sample, const ChatFormatter& fmt, const std::vector<eval::Task>& tasks,
                           int32_t pad_id, const RolloutOptions& o, const MultiTurnOptions& mt) {
    if (o.group_size < 2) throw UsageError("a GRPO rollout needs at least 2 completions per task");
    if (tasks.empty()) throw UsageError("a GRPO rollout needs at least one task");
    if (mt.turns < 1) throw UsageError("objective.grpo.turns must be at least 1");
    const int64_t G = o.group_size;
    std::vector<Trajectory> traj;
    for (size_t i = 0; i < tasks.size(); ++i) {
        const eval::Task& t = tasks[i];
        for (int64_t k = 0; k < G; ++k) {
            Trajectory tr;
            tr.task = i;
            tr.sample = k;
            tr.conv.id = "task " + t.id_text;
            tr.conv.messages = {{"system", o.system_prompt.empty() ? eval::system_prompt(t) : o.system_prompt},
                                {"user", eval::build_user_prompt(t, o.level, o.gpu_name)}};
            traj.push_back(std::move(tr));
        }
    }
    int64_t judged_early = 0;  // answers judged before their turn's sampling ended
    for (int64_t turn = 1; turn <= mt.turns; ++turn) {
        std::vector<size_t> rows;  // the trajectories answering at this turn
        std::vector<GenerationInput> inputs;
        for (size_t j = 0; j < traj.size(); ++j) {
            Trajectory& tr = traj[j];
            if (!tr.open) continue;
            std::vector<int32_t> p = fmt.generation_prompt(shown(tr, mt.history), o.thinking);
            if (turn > 1 && mt.max_context > 0 && static_cast<int64_t>(p.size()) + mt.max_new_tokens > mt.max_context) {
                p = fmt.generation_prompt(shown(tr, TurnHistory::kPrograms), o.thinking);  // the prose goes first
                if (static_cast<int64_t>(p.size()) + mt.max_new_tokens > mt.max_context) {
                    tr.open = false;  // no room for another answer
                    continue;
                }
            }
            const eval::Task& t = tasks[tr.task];
            std::string stream = std::to_string(o.step) + ":" + t.id_text;
            if (turn > 1) stream.append(":t").append(std::to_string(turn));
            inputs.push_back({p, sample_seed(o.seed, stream, tr.sample)});
            tr.turns.push_back({std::move(p), {}, {}, {}});
            rows.push_back(j);
        }
        if (rows.empty()) break;
        // Each row its own group: judged as soon as it has finished, beside the decoding of the
        // others (judge_while_sampling).
        std::vector<eval::Task> row_tasks;
        for (size_t j : rows) row_tasks.push_back(tasks[traj[j].task]);
        SampledRows sampled = sample_and_judge(sample, inputs, row_tasks, 1, o.judge, o.judge_while_sampling);
        judged_early += sampled.groups_judged_while_sampling;
        std::vector<GenerationOutput>& outs = sampled.outs;
        for (size_t q = 0; q < rows.size(); ++q) {
            Trajectory& tr = traj[rows[q]];
            Trajectory::Turn& tt = tr.turns.back();
            tt.out = std::move(outs[q]);
            tt.verdict = sampled.groups.at(q).samples.at(0);
            tt.reward = sample_reward(tt.verdict, o.rewards);
            const eval::Task& task = tasks[tr.task];
            std::string feedback = eval::repair_turn(task, tt.verdict.status, tt.verdict.error);
            if (feedback.empty() && mt.continue_after_pass && tt.verdict.status == judge::Status::kPass &&
                tt.verdict.speedup)
                feedback = eval::speedup_turn(task, *tt.verdict.speedup);
            if (feedback.empty() || turn == mt.turns) {
                tr.open = false;
                continue;
            }
            const std::optional<std::string> code = eval::extract_code(task, tt.out.text);
            tr.programs.push_back(code ? std::string("```") + eval::answer_fence(task) + "\n" + *code + "\n```" : tt.out.text);
            tr.conv.messages.push_back({"assistant", tt.out.text});
            tr.conv.messages.push_back({"user", feedback});
        }
    }

    // Returns and advantages per turn, within each group at the same turn index.
    const int64_t M = static_cast<int64_t>(traj.size()), T = mt.turns;
    at::Tensor rewards = at::full({M, T}, NAN, at::kFloat);  // [M, T]: NaN past a trajectory's last turn
    at::Tensor taken = at::zeros({M}, at::kLong);              // [M]
    {
        auto ra = rewards.accessor<float, 2>();
        auto na = taken.accessor<int64_t, 1>();
        for (int64_t j = 0; j < M; ++j) {
            const Trajectory& tr = traj[static_cast<size_t>(j)];
            na[j] = static_cast<int64_t>(tr.turns.size());
            for (size_t t = 0; t < tr.turns.size(); ++t) ra[j][static_cast<int64_t>(t)] = static_cast<float>(tr.turns[t].reward.value);
        }
    }
    const TurnAdvantages ta = turn_advantages(rewards, taken, G, mt.returns);
    auto ret = ta.returns.accessor<float, 2>();
    auto adv = ta.advantages.accessor<float, 2>();

    Rollout out;
    out.groups_judged_while_sampling = judged_early;
    std::vector<std::vector<int32_t>> prompts;
    std::vector<GenerationOutput> outs;
    std::vector<float> row_rewards, row_adv;
    out.trajectories = M;
    for (int64_t j = 0; j < M; ++j) {
        const Trajectory& tr = traj[static_cast<size_t>(j)];
        out.turns_taken += static_cast<int64_t>(tr.turns.size());
        if (tr.turns.size() > 1 && !judge::status_passed(tr.turns.front().verdict.status) &&
            judge::status_passed(tr.turns.back().verdict.status)) ++out.fixed;
        for (size_t t = 0; t < tr.turns.size(); ++t) {
            const Trajectory::Turn& tt = tr.turns[t];
            prompts.push_back(tt.prompt);
            outs.push_back(tt.out);
            row_rewards.push_back(static_cast<float>(tt.reward.value));
            row_adv.push_back(adv[j][static_cast<int64_t>(t)]);
            RolloutRecord rec = rollout_record(tasks[tr.task].id_text, tr.sample + 1, tt.verdict, tt.reward, tt.out);
            rec.group = static_cast<int64_t>(tr.task);
            rec.turn = static_cast<int64_t>(t) + 1;
            rec.ret = ret[j][static_cast<int64_t>(t)];
            rec.advantage = adv[j][static_cast<int64_t>(t)];
            out.records.push_back(std::move(rec));
        }
    }
    fill_rollout_rows(out.batch, prompts, outs, pad_id, o.mask_truncated);
    out.batch.rewards = at::tensor(row_rewards, at::kFloat);  // [N]
    out.batch.advantages = at::tensor(row_adv, at::kFloat);   // [N]
    return out;
}

}  // namespace cuset::rl
