// A GRPO rollout on the judge (rl/rollout.h).
#include "cuset/rl/rollout.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "cuset/core/error.h"
#include "cuset/generate/sampling.h"

namespace cuset::rl {

Rollout grpo_rollout(const SampleFn& sample, const ChatFormatter& fmt, const std::vector<eval::Task>& tasks,
                     int32_t pad_id, const RolloutOptions& o) {
    if (o.group_size < 2) throw UsageError("a GRPO rollout needs at least 2 completions per task");
    if (tasks.empty()) throw UsageError("a GRPO rollout needs at least one task");
    const int64_t G = o.group_size, N = static_cast<int64_t>(tasks.size()) * G;
    std::vector<std::vector<int32_t>> prompts;
    std::vector<GenerationInput> inputs;
    for (const eval::Task& t : tasks) {
        Conversation c;
        c.id = "task " + t.id_text;
        c.messages = {{"system", o.system_prompt.empty() ? eval::system_prompt() : o.system_prompt},
                      {"user", eval::build_user_prompt(t, o.level, o.gpu_name)}};
        std::vector<int32_t> p = fmt.generation_prompt(c, o.thinking);
        for (int64_t k = 0; k < G; ++k) {
            prompts.push_back(p);
            inputs.push_back({p, sample_seed(o.seed, std::to_string(o.step) + ":" + t.id_text, k)});
        }
    }
    std::vector<GenerationOutput> outs = sample(inputs);
    if (static_cast<int64_t>(outs.size()) != N)
        throw RuntimeFailure("grpo rollout: " + std::to_string(outs.size()) + " completions for " + std::to_string(N) +
                             " prompts");

    std::vector<eval::ResultRecord> results;
    for (size_t i = 0; i < tasks.size(); ++i) {
        eval::ResultRecord r;
        r.id = tasks[i].id;
        r.task_name = tasks[i].task_name;
        for (int64_t k = 0; k < G; ++k) {
            const std::string& text = outs[i * static_cast<size_t>(G) + static_cast<size_t>(k)].text;
            r.responses.push_back(text);
            r.codes.push_back(eval::extract_code(text));
        }
        results.push_back(std::move(r));
    }
    eval::JudgeSummary judged = eval::judge_results(tasks, results, o.judge);

    Rollout out;
    int64_t P = 1, T = 1;
    for (const auto& p : prompts) P = std::max<int64_t>(P, static_cast<int64_t>(p.size()));
    for (const auto& g : outs) T = std::max<int64_t>(T, static_cast<int64_t>(g.tokens.size()));
    at::Tensor pid = at::full({N, P}, pad_id, at::kLong), pmask = at::zeros({N, P}, at::kLong);  // [N, P] left-padded
    at::Tensor cid = at::full({N, T}, pad_id, at::kLong), cmask = at::zeros({N, T}, at::kLong);  // [N, T] right-padded
    at::Tensor rewards = at::empty({N}, at::kFloat);                                              // [N]
    auto pa = pid.accessor<int64_t, 2>(), pm = pmask.accessor<int64_t, 2>();
    auto ca = cid.accessor<int64_t, 2>(), cm = cmask.accessor<int64_t, 2>();
    auto ra = rewards.accessor<float, 1>();
    for (int64_t row = 0; row < N; ++row) {
        const std::vector<int32_t>& p = prompts[static_cast<size_t>(row)];
        const int64_t off = P - static_cast<int64_t>(p.size());
        for (size_t j = 0; j < p.size(); ++j) {
            pa[row][off + static_cast<int64_t>(j)] = p[j];
            pm[row][off + static_cast<int64_t>(j)] = 1;
        }
        const GenerationOutput& g = outs[static_cast<size_t>(row)];
        const bool masked = o.mask_truncated && g.finish == FinishReason::kLength;
        for (size_t j = 0; j < g.tokens.size(); ++j) {
            ca[row][static_cast<int64_t>(j)] = g.tokens[j];
            cm[row][static_cast<int64_t>(j)] = masked ? 0 : 1;
        }
        const eval::TaskResult& tr = judged.tasks[static_cast<size_t>(row / G)];
        const eval::SampleResult& s = tr.samples[static_cast<size_t>(row % G)];
        judge::Verdict v;
        v.status = s.status;
        v.compiled = s.compiled;
        v.ran = s.ran;
        v.functional = s.functional;
        judge::Reward rw = judge::reward_of(v, o.rewards);
        ra[row] = static_cast<float>(rw.value);
        out.records.push_back({tr.id_text, row % G + 1, judge::status_name(s.status), rw.reason, rw.value,
                               static_cast<int64_t>(g.tokens.size()), finish_reason_name(g.finish), s.error});
    }
    out.batch.prompt_ids = pid;
    out.batch.prompt_mask = pmask;
    out.batch.completion_ids = cid;
    out.batch.completion_mask = cmask;
    out.batch.rewards = rewards;
    return out;
}

}  // namespace cuset::rl
