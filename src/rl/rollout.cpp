// A GRPO rollout on the judge (rl/rollout.h).
#include "cuset/rl/rollout.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "cuset/core/error.h"
#include "cuset/generate/sampling.h"

namespace cuset::rl {

namespace {

// A rollout's groups, judged as they complete: the sampler's thread reports finished rows, and a
// task whose G rows are all in goes to a judging thread, which judges whatever groups are ready at
// once (eval::judge_results, its jobs and journal). Without the thread, every group is judged
// together once the sampler has returned, as one judge_results call.
class GroupJudge {
public:
    GroupJudge(const std::vector<eval::Task>& tasks, int64_t G, const eval::JudgeOptions& jo, bool background)
        : tasks_(tasks), G_(static_cast<size_t>(G)), jo_(jo), seen_(tasks.size() * G_, false),
          left_(tasks.size(), G_), judged_(tasks.size()) {
        for (const eval::Task& t : tasks) {
            eval::ResultRecord r;
            r.id = t.id;
            r.task_name = t.task_name;
            r.responses.resize(G_);
            r.codes.resize(G_);
            records_.push_back(std::move(r));
        }
        if (background) thread_ = std::thread([this] { loop(); });
    }
    ~GroupJudge() { stop(); }
    GroupJudge(const GroupJudge&) = delete;
    GroupJudge& operator=(const GroupJudge&) = delete;

    // Row `row` of the batch has finished (called from the sampler, rows in any order, once each).
    void finished(size_t row, const GenerationOutput& g) {
        std::lock_guard<std::mutex> lock(mu_);
        if (row >= seen_.size() || seen_[row]) return;
        seen_[row] = true;
        const size_t t = row / G_, k = row % G_;
        records_[t].responses[k] = g.text;
        records_[t].codes[k] = eval::extract_code(tasks_[t], g.text);
        if (--left_[t] == 0) {
            ready_.push_back(t);
            cv_.notify_one();
        }
    }

    // The sampler has returned `outs`: rows it did not report are taken from it, the remaining
    // groups judged, and the judging thread's failure (a signal, the judge's environment) rethrown.
    void sampling_done(const std::vector<GenerationOutput>& outs) {
        for (size_t row = 0; row < outs.size(); ++row) finished(row, outs[row]);
        if (thread_.joinable()) {
            stop();
        } else {
            std::vector<size_t> all;
            all.swap(ready_);
            judge(all, false);
        }
        if (error_) std::rethrow_exception(error_);
    }

    const eval::TaskResult& task(size_t t) const { return judged_[t]; }
    int64_t judged_while_sampling() const { return early_; }

private:
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            done_ = true;
        }
        cv_.notify_one();
        if (thread_.joinable()) thread_.join();
    }

    void loop() {
        for (;;) {
            std::vector<size_t> take;
            bool early = false;
            {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, [this] { return !ready_.empty() || done_; });
                if (ready_.empty()) return;
                take.swap(ready_);
                early = !done_;
            }
            judge(take, early);
        }
    }

    // Judges the complete groups `take` (their records are no longer written to).
    void judge(const std::vector<size_t>& take, bool early) {
        if (take.empty() || error_) return;
        try {
            std::vector<eval::ResultRecord> recs;
            for (size_t t : take) recs.push_back(records_[t]);
            eval::JudgeSummary s = eval::judge_results(tasks_, recs, jo_);
            for (size_t j = 0; j < take.size(); ++j) judged_[take[j]] = std::move(s.tasks[j]);
            if (early) early_ += static_cast<int64_t>(take.size());
        } catch (...) {
            error_ = std::current_exception();
        }
    }

    const std::vector<eval::Task>& tasks_;
    const size_t G_;
    const eval::JudgeOptions& jo_;
    std::vector<eval::ResultRecord> records_;  // one per task, its G responses and programs
    std::vector<bool> seen_;                   // [N] rows reported
    std::vector<size_t> left_;                 // per task: rows not yet finished
    std::vector<size_t> ready_;                // complete groups not yet judged
    std::vector<eval::TaskResult> judged_;     // per task, once judged
    std::exception_ptr error_;                 // the first judging failure (written by the judging side)
    int64_t early_ = 0;
    bool done_ = false;
    std::mutex mu_;
    std::condition_variable cv_;
    std::thread thread_;
};

}  // namespace

SampledRows sample_and_judge(const SampleFn& sample, const std::vector<GenerationInput>& inputs,
                             const std::vector<eval::Task>& group_tasks, int64_t group_size, const eval::JudgeOptions& jo,
                             bool while_sampling) {
    const size_t N = group_tasks.size() * static_cast<size_t>(group_size);
    if (inputs.size() != N) throw RuntimeFailure("sample_and_judge: the inputs are not whole groups");
    GroupJudge judge(group_tasks, group_size, jo, while_sampling);
    SampledRows r;
    r.outs = sample(inputs, [&judge](size_t row, const GenerationOutput& g) { judge.finished(row, g); });
    if (r.outs.size() != N)
        throw RuntimeFailure("grpo rollout: " + std::to_string(r.outs.size()) + " completions for " + std::to_string(N) +
                             " prompts");
    judge.sampling_done(r.outs);
    for (size_t t = 0; t < group_tasks.size(); ++t) r.groups.push_back(judge.task(t));
    r.groups_judged_while_sampling = judge.judged_while_sampling();
    return r;
}

void fill_rollout_rows(GrpoRollout& batch, const std::vector<std::vector<int32_t>>& prompts,
                       const std::vector<GenerationOutput>& outs, int32_t pad_id, bool mask_truncated) {
    const int64_t N = static_cast<int64_t>(prompts.size());
    int64_t P = 1, T = 1;
    for (const auto& p : prompts) P = std::max<int64_t>(P, static_cast<int64_t>(p.size()));
    for (const auto& g : outs) T = std::max<int64_t>(T, static_cast<int64_t>(g.tokens.size()));
    at::Tensor pid = at::full({N, P}, pad_id, at::kLong), pmask = at::zeros({N, P}, at::kLong);  // [N, P] left-padded
    at::Tensor cid = at::full({N, T}, pad_id, at::kLong), cmask = at::zeros({N, T}, at::kLong);  // [N, T] right-padded
    auto pa = pid.accessor<int64_t, 2>(), pm = pmask.accessor<int64_t, 2>();
    auto ca = cid.accessor<int64_t, 2>(), cm = cmask.accessor<int64_t, 2>();
    for (int64_t row = 0; row < N; ++row) {
        const std::vector<int32_t>& p = prompts[static_cast<size_t>(row)];
        const int64_t off = P - static_cast<int64_t>(p.size());
        for (size_t j = 0; j < p.size(); ++j) {
            pa[row][off + static_cast<int64_t>(j)] = p[j];
            pm[row][off + static_cast<int64_t>(j)] = 1;
        }
        const GenerationOutput& g = outs[static_cast<size_t>(row)];
        const bool masked = mask_truncated && g.finish == FinishReason::kLength;
        for (size_t j = 0; j < g.tokens.size(); ++j) {
            ca[row][static_cast<int64_t>(j)] = g.tokens[j];
            cm[row][static_cast<int64_t>(j)] = masked ? 0 : 1;
        }
    }
    batch.prompt_ids = pid;
    batch.prompt_mask = pmask;
    batch.completion_ids = cid;
    batch.completion_mask = cmask;
}

RolloutRecord rollout_record(const std::string& task, int64_t sample, const eval::SampleResult& s, const judge::Reward& rw,
                             const GenerationOutput& g) {
    RolloutRecord r;
    r.task = task;
    r.sample = sample;
    r.status = s.status;
    r.reason = rw.reason;
    r.reward = rw.value;
    r.tokens = static_cast<int64_t>(g.tokens.size());
    r.finish = finish_reason_name(g.finish);
    r.error = s.error;
    r.speedup = s.speedup;
    r.speedup_note = s.speedup_note;
    return r;
}

judge::Reward sample_reward(const eval::SampleResult& s, const judge::RewardWeights& w) {
    judge::Verdict v;
    v.status = s.status;
    v.compiled = s.compiled;
    v.ran = s.ran;
    v.functional = s.functional;
    v.speedup = s.speedup;
    return judge::reward_of(v, w);
}

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
        c.messages = {{"system", o.system_prompt.empty() ? eval::system_prompt(t) : o.system_prompt},
                      {"user", eval::build_user_prompt(t, o.level, o.gpu_name)}};
        std::vector<int32_t> p = fmt.generation_prompt(c, o.thinking);
        for (int64_t k = 0; k < G; ++k) {
            prompts.push_back(p);
            inputs.push_back({p, sample_seed(o.seed, std::to_string(o.step) + ":" + t.id_text, k)});
        }
    }
    SampledRows sampled = sample_and_judge(sample, inputs, tasks, G, o.judge, o.judge_while_sampling);
    std::vector<GenerationOutput>& outs = sampled.outs;

    Rollout out;
    fill_rollout_rows(out.batch, prompts, outs, pad_id, o.mask_truncated);
    at::Tensor rewards = at::empty({N}, at::kFloat);  // [N]
    auto ra = rewards.accessor<float, 1>();
    for (int64_t row = 0; row < N; ++row) {
        const GenerationOutput& g = outs[static_cast<size_t>(row)];
        const eval::TaskResult& tr = sampled.groups[static_cast<size_t>(row / G)];
        const eval::SampleResult& s = tr.samples[static_cast<size_t>(row % G)];
        const judge::Reward rw = sample_reward(s, o.rewards);
        ra[row] = static_cast<float>(rw.value);
        out.records.push_back(rollout_record(tr.id_text, row % G + 1, s, rw, g));
        out.records.back().group = row / G;
    }
    out.batch.rewards = rewards;
    out.groups_judged_while_sampling = sampled.groups_judged_while_sampling;
    return out;
}

}  // namespace cuset::rl
