// The order in which GRPO takes its tasks. Positions of an endless sequence of passes over the task
// file, pass e a permutation of the tasks drawn from (seed, e); step s takes positions
// s * per_step .. s * per_step + per_step - 1 and rank r of `world` its contiguous share (a task's
// group never splits over ranks).
//
// With objective.grpo.retry_all_failed, a task whose group gave no signal and no pass (rl/grpo_steps.h
// decides) is queued to be taken again at the end of the pass in progress, after the rest of the
// pass's permutation: the sequence of pass e is its permutation followed by the tasks queued during
// it, and a pass ends when both are used up. A task is queued at most once per pass, so a task that
// fails again on its retry is not queued again until the next pass. That order depends on what was
// judged, so it is state: TaskSchedule holds it, and a checkpoint keeps it (to_json / from_json).
// With nothing queued, TaskSchedule takes exactly grpo_step_tasks' tasks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuset::rl {

// The permutation of pass `pass` over n tasks, drawn from (seed, pass); portable (splitmix64 and
// Fisher-Yates, not std::shuffle, whose draws differ between standard libraries).
std::vector<size_t> grpo_pass_order(uint64_t seed, size_t n, int64_t pass);

// The tasks of step `step` on rank `rank` of `world`, as indices into a task list of n tasks,
// without retries (stateless). UsageError when per_step is not a positive multiple of world.
std::vector<size_t> grpo_step_tasks(uint64_t seed, size_t n, int64_t per_step, int64_t step, int64_t rank,
                                    int64_t world);

struct ScheduledTask {
    size_t task = 0;     // index into the task list
    bool retry = false;  // taken again after a group without signal
    bool operator==(const ScheduledTask& o) const { return task == o.task && retry == o.retry; }
};

class TaskSchedule {
public:
    TaskSchedule(uint64_t seed, size_t n);

    // The next `count` tasks of the sequence (all ranks' share of a step, in order).
    std::vector<ScheduledTask> take(int64_t count);
    // Queues `task` to be taken again at the end of the pass in progress; false (nothing queued)
    // when it was queued in this pass already.
    bool queue_retry(size_t task);

    int64_t pass() const { return pass_; }
    size_t queued() const { return retries_.size() - (pos_ > n_ ? pos_ - n_ : 0); }  // not yet taken

    // The state as JSON, and back: InputError naming `where` on a state that is not one of n tasks.
    nlohmann::json to_json() const;
    static TaskSchedule from_json(const nlohmann::json& j, uint64_t seed, size_t n, const std::string& where);

private:
    uint64_t seed_;
    size_t n_;
    int64_t pass_ = 0;
    size_t pos_ = 0;                // in the pass's sequence: the permutation, then retries_
    std::vector<size_t> order_;     // the pass's permutation
    std::vector<size_t> retries_;   // queued during this pass, in order
    std::set<size_t> queued_once_;  // every task queued during this pass
};

}  // namespace cuset::rl
