// The reward of a judged program, for reinforcement learning on the judge (rl/grpo.h): a
// weighted sum of what the judge established, stage by stage, each counted only where the judge
// ran that stage. What is the task's fault (gen-failed, task-error: the same for every completion
// of the task) gives no reward at all (NaN: the completion is left out of its group's baseline).
// A program the emulator could not judge (unjudged: it could not rewrite or build it, or its run
// did not finish in time) depends on the program, so a policy could learn to escape a low reward
// by not ending or by using what the emulator lacks: by default it scores as a run that failed
// (format and compiles only); UnjudgedReward::kSkip leaves it out (NaN) instead, for task sets
// where the emulator's limits cut honest programs.
#pragma once

#include <string>

#include "cuset/judge/runner.h"

namespace cuset::judge {

enum class UnjudgedReward {
    kFail,  // scored as a failed run: format + compiles (what the judge did establish)
    kSkip,  // NaN: left out of its group's baseline, no gradient
};

struct RewardWeights {
    double format = 0.1;      // the answer holds a fenced program (status is not no-code)
    double compiles = 0.2;    // nvcc (or the emulator's build) accepted it
    double runs = 0.2;        // it exited 0 (gpu or emulate judges only)
    double functional = 1.0;  // the checker printed its success verdict (gpu or emulate judges only)
    // A passing program's speed-up over the task's reference solution (Verdict::speedup), capped:
    // + speedup * min(Verdict::speedup, speedup_cap). 0 = no speed-up term (no timing runs).
    double speedup = 0.0;
    double speedup_cap = 3.0;
    UnjudgedReward unjudged = UnjudgedReward::kFail;  // a verdict of status unjudged
};

struct Reward {
    double value = 0;    // NaN when the verdict says nothing about the program
    std::string reason;  // one word for the log: the status, or "unscorable"
};

// The reward of `v` under `w`. Weights must be finite and >= 0 (UsageError naming `key_prefix`).
Reward reward_of(const Verdict& v, const RewardWeights& w);
void check_reward_weights(const RewardWeights& w, const std::string& key_prefix);

}  // namespace cuset::judge
