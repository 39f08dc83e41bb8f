// Returns and advantages of multi-turn trajectories (docs/method.md, "Multi-turn returns and
// advantages"). A trajectory answers a task, is judged, and while it does not pass and turns
// remain, answers again with the judge's finding; each turn t (0-based) gets the judge's reward
// r_t. The return of turn t is the discounted sum of the rewards from t to the trajectory's last
// turn, R_t = r_t + gamma R_{t+1}; the advantage of a turn is computed within its group (the G
// trajectories of one task) among the trajectories that reached the same turn:
//   group: (R_t - mean) / (std + 1e-4), the group's mean and unbiased std at turn t (GRPO's, with
//          its scaling: the batch's std at turn t with kBatch, none with kNone);
//   loo:   R_t - the mean of the other trajectories' R_t (leave-one-out; 0 when none other).
// With anchoring, every turn's baseline is taken at the first turn instead (the group's turn-0
// returns: mean and std, or the others' mean), so a later turn is credited for what it gained
// over the group's first answers. A NaN reward (unscorable: the task's fault) makes that turn's
// return and every earlier one NaN: left out of the baselines, advantage 0. With one turn and
// group advantages this is grpo_advantages, bit for bit.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "cuset/rl/grpo.h"

namespace cuset {

enum class TurnAdvantage { kGroup, kLeaveOneOut };

struct TurnReturnOptions {
    double discount = 1.0;                              // gamma (objective.grpo.turn_discount)
    TurnAdvantage advantage = TurnAdvantage::kGroup;    // objective.grpo.turn_advantage
    RewardScaling scale = RewardScaling::kGroup;        // group advantages' scaling (objective.grpo.scale_rewards)
    bool anchor_first_turn = false;                     // baselines from the first turn
};

struct TurnAdvantages {
    at::Tensor returns;     // [N, T] fp32; NaN where the trajectory has no such turn (or is unscorable)
    at::Tensor advantages;  // [N, T] fp32; 0 where the trajectory has no such turn
};

// `rewards` [N, T]: row i is trajectory i's rewards by turn (values past its last turn are
// ignored), N = groups x group_size laid out group by group; `turns` [N] int64: how many turns
// trajectory i took (1..T). UsageError for shapes that do not fit.
TurnAdvantages turn_advantages(const at::Tensor& rewards, const at::Tensor& turns, int64_t group_size,
                               const TurnReturnOptions& opts);

// "group" | "loo"; UsageError naming `key` otherwise.
TurnAdvantage turn_advantage_parse(const std::string& name, const char* key);

}  // namespace cuset
