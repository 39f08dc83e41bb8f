// GRPO as the trainer's steps (train/step_source.h, objective.method: grpo): each optimizer step
// takes the next tasks_per_step tasks of a seeded order of the task file, splits them over the
// ranks (a task's group never splits), samples G completions per task from the current policy
// (generate/generator.h, all of a rank's completions decoded as one batch), judges and scores them
// (rl/rollout.h: the contained judge, judge/reward.h) and takes the GRPO step (rl/grpo_step.h).
// Every completion's verdict and reward goes to rewards.jsonl in the run folder (rank 0; rank r >
// 0 writes rewards-rank<r>.jsonl), so that a run can be audited for reward hacking.
//
// Reproducible and resumable: the task order is drawn from (seed, pass over the task file) and,
// with retries, kept in each checkpoint (rl/task_schedule.h); each
// completion's sampling stream from (seed, step, task, sample), so a resumed run samples what the
// stopped run would have sampled next; records a stopped run wrote past its checkpoint are cut.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cuset/eval/cudabench.h"
#include "cuset/generate/generator.h"
#include "cuset/rl/multi_turn.h"
#include "cuset/rl/rollout.h"
#include "cuset/rl/token_weights.h"
#include "cuset/rl/grpo_step.h"
#include "cuset/rl/task_schedule.h"
#include "cuset/train/step_source.h"

namespace cuset::rl {

struct GrpoStepsOptions {
    std::string tasks_file;       // CUDABench-format tasks whose prompts are sampled
    int64_t tasks_per_step = 2;   // over all ranks; a multiple of the number of ranks
    uint64_t seed = 0;            // the run's seed
    // Sampling: max_new_tokens and the sampling settings; the EOS ids are the tokenizer's, the
    // model's (model_dir's config and generation_config.json) and the chat format's end of turn,
    // and the context length the model's positions, added by begin().
    GenerateOptions generate;
    std::string model_dir;
    RolloutOptions rollout;       // level, gpu_name, thinking, system prompt, the judge, reward weights
                                  // (group_size is step.num_generations)
    GrpoStepOptions step;         // loss, G, temperature, micro-batch, LM-head chunk
    // Optimizer steps taken on one generation batch (TRL's num_iterations): steps k*mu .. k*mu +
    // mu - 1 train on generation k, whose tasks are those of step k of the task order; with mu > 1
    // the log-probabilities of the policy that sampled are kept for the importance ratio, and a
    // checkpoint in the middle of a generation holds the batch (grpo-rollout-rank<r>.safetensors).
    int64_t num_iterations = 1;
    // CuSeT's token weights on the loss (objective.grpo.token_weights: cuset): computed once per
    // generation, kept with its batch.
    TokenWeightOptions token_weights;
    // Multi-turn rollouts (objective.grpo.turns > 1, rl/multi_turn.h): a task's trajectories answer
    // the judge's findings; each turn a row with its own advantage. turns 1 = single-turn GRPO.
    MultiTurnOptions multi_turn;
    // objective.grpo.retry_all_failed: a task whose G trajectories all failed with the same return
    // (a group without signal) is taken again at the end of the pass (rl/task_schedule.h); the
    // schedule is kept in each checkpoint (grpo-schedule.json).
    bool retry_all_failed = false;
};

class GrpoSteps : public StepSource {
public:
    // Reads the task file (InputError naming its line on a bad record).
    explicit GrpoSteps(GrpoStepsOptions o);
    ~GrpoSteps() override;

    std::string name() const override;
    std::string data_hash() const override { return data_hash_; }
    bool needs_reference() const override { return o_.step.loss.beta != 0.0; }
    void begin(const StepContext& ctx, int64_t resumed_step, const std::string& resumed_from) override;
    void save_state(const std::string& dir, int64_t steps_taken, const Comm& comm) const override;
    SourceStepResult step(const StepContext& ctx) override;
    std::string summary() const override;

private:
    // The parts of a step, in the order step() takes them: draw the tasks, roll out and judge
    // their completions, queue the groups without signal for a retry, prepare the batch (the
    // sampling policy's log-probabilities and token weights), update, record the verdicts,
    // count them over the ranks, and the step's metrics.
    struct Draw;
    struct Times;
    struct Counts;
    Draw draw(const StepContext& ctx, int64_t generation);
    Rollout roll_out(const StepContext& ctx, const Draw& d, int64_t generation, Times& t);
    int64_t queue_retries(const StepContext& ctx, const Rollout& rollout, const Draw& d);
    void prepare_batch(const StepContext& ctx, Rollout& rollout, int64_t generation);
    GrpoStepResult update(const StepContext& ctx);
    void record(const StepContext& ctx, const Rollout& rollout, const Draw& d);
    Counts count(const StepContext& ctx, const Rollout& rollout) const;
    nlohmann::json metrics(const GrpoStepResult& r, const Counts& c, const nlohmann::json& statuses, const Draw& d,
                           int64_t queued, const Times& t, bool fresh, int64_t generation) const;

    GrpoStepsOptions o_;
    std::vector<eval::Task> tasks_;
    std::string data_hash_;
    std::string rewards_path_, work_dir_;
    std::ofstream rewards_;
    GrpoRollout held_;               // the generation batch being trained on (num_iterations > 1)
    int64_t held_generation_ = -1;   // its generation index (-1 = none)
    std::optional<TaskSchedule> schedule_;  // retry_all_failed: the order with its retries, after
    int64_t scheduled_generation_ = -1;     // this generation (-1 = none taken yet)
    std::vector<double> weight_sums_;  // token_weights: tokens, kept, sensitive, sum w_i, completions of the generation
    double first_reward_ = -1, last_reward_ = -1;  // mean rewards of the session's first and last steps (-1 = none)
    int64_t completions_ = 0;
};

}  // namespace cuset::rl
