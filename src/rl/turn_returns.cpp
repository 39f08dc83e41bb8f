// Returns and advantages of multi-turn trajectories (rl/turn_returns.h).
#include "cuset/rl/turn_returns.h"

#include <string>

#include <ATen/ATen.h>

#include "cuset/core/error.h"

namespace cuset {

namespace {

// Leave-one-out advantages of `values` [N] against `baseline` [N] (NaN = absent), group by group:
// values_i - the mean of the group's baseline values other than i's own (the same turn's returns,
// or the first turn's with anchoring, where i's own first return is left out too); 0 where no
// other trajectory has a baseline value.
at::Tensor leave_one_out(const at::Tensor& values, const at::Tensor& baseline, int64_t group_size) {
    const int64_t n = values.size(0);
    const at::Tensor present = baseline.isnan().logical_not();                    // [N]
    const at::Tensor b = at::where(present, baseline, at::zeros_like(baseline));  // [N]
    const at::Tensor sum = b.view({n / group_size, group_size}).sum(1, true).expand({n / group_size, group_size}).reshape({n});
    const at::Tensor count =
        present.to(at::kFloat).view({n / group_size, group_size}).sum(1, true).expand({n / group_size, group_size}).reshape({n});
    const at::Tensor others = count - present.to(at::kFloat);  // [N]
    const at::Tensor mean_others = (sum - b) / others;         // [N]: inf/NaN where no other
    const at::Tensor adv = at::where(others > 0, values - mean_others, at::full_like(values, NAN));
    return at::nan_to_num(adv, 0.0, 0.0, 0.0);
}

}  // namespace

TurnAdvantage turn_advantage_parse(const std::string& name, const char* key) {
    if (name == "group") return TurnAdvantage::kGroup;
    if (name == "loo") return TurnAdvantage::kLeaveOneOut;
    throw UsageError(std::string("config error: '") + key + "' must be group or loo, got '" + name + "'");
}

TurnAdvantages turn_advantages(const at::Tensor& rewards, const at::Tensor& turns, int64_t group_size,
                               const TurnReturnOptions& o) {
    if (rewards.dim() != 2) throw UsageError("turn_advantages: rewards must be [N, T]");
    const int64_t n = rewards.size(0), T = rewards.size(1);
    if (turns.dim() != 1 || turns.size(0) != n) throw UsageError("turn_advantages: turns must be [N] for rewards [N, T]");
    if (T < 1) throw UsageError("turn_advantages: no turn");
    if (group_size < 2 || n % group_size != 0)
        throw UsageError("turn_advantages: " + std::to_string(n) + " trajectories do not make groups of " +
                         std::to_string(group_size) + " (at least 2)");
    const at::Tensor taken = turns.to(at::kLong);                                       // [N]
    if (taken.numel() > 0 && (taken.min().item<int64_t>() < 1 || taken.max().item<int64_t>() > T))
        throw UsageError("turn_advantages: a trajectory's turn count is outside 1.." + std::to_string(T));
    const at::Tensor r = rewards.to(at::kFloat);                                       // [N, T]
    const at::Tensor has = at::arange(T, taken.options()).unsqueeze(0) < taken.unsqueeze(1);  // [N, T]

    // R_t = r_t + gamma R_{t+1}, from the last turn back; a turn the trajectory lacks adds 0.
    at::Tensor returns = at::full({n, T}, NAN, r.options());  // [N, T]
    at::Tensor next = at::zeros({n}, r.options());            // [N]: R_{t+1}, 0 past the last turn
    for (int64_t t = T - 1; t >= 0; --t) {
        const at::Tensor col = r.select(1, t) + static_cast<float>(o.discount) * next;  // NaN spreads back
        const at::Tensor has_t = has.select(1, t);
        returns.select(1, t).copy_(at::where(has_t, col, at::full_like(col, NAN)));
        next = at::where(has_t, col, at::zeros_like(col));
    }

    at::Tensor adv = at::zeros({n, T}, r.options());  // [N, T]
    const at::Tensor first = returns.select(1, 0).contiguous();  // [N]
    for (int64_t t = 0; t < T; ++t) {
        const at::Tensor col = returns.select(1, t).contiguous();  // [N]
        at::Tensor a;
        if (o.advantage == TurnAdvantage::kLeaveOneOut) {
            a = leave_one_out(col, o.anchor_first_turn ? first : col, group_size);
        } else if (!o.anchor_first_turn || t == 0) {
            a = grpo_advantages(col, group_size, o.scale).advantages;
        } else {
            // The group's turn-0 mean and std (grpo_advantages' own, on the first turn's returns).
            const GrpoAdvantages base = grpo_advantages(first, group_size, o.scale);
            const at::Tensor mean =
                at::nanmean(first.view({n / group_size, group_size}), {1}, true).expand({n / group_size, group_size}).reshape({n});
            a = col - mean;
            if (o.scale != RewardScaling::kNone) a = a / (base.std + 1e-4);
            a = at::nan_to_num(a, 0.0);
        }
        adv.select(1, t).copy_(at::where(has.select(1, t), a, at::zeros_like(a)));
    }
    TurnAdvantages out;
    out.returns = returns;
    out.advantages = adv;
    return out;
}

}  // namespace cuset
