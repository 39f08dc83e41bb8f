// The reward of a judged program (judge/reward.h).
#include "cuset/judge/reward.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cuset/core/error.h"

namespace cuset::judge {

void check_reward_weights(const RewardWeights& w, const std::string& key_prefix) {
    const std::pair<const char*, double> all[] = {
        {"format", w.format}, {"compiles", w.compiles}, {"runs", w.runs}, {"functional", w.functional},
        {"speedup", w.speedup}, {"speedup_cap", w.speedup_cap}};
    for (const auto& [name, value] : all)
        if (!std::isfinite(value) || value < 0)
            throw UsageError("key '" + key_prefix + name + "' must be a finite number >= 0, got " + std::to_string(value));
}

Reward reward_of(const Verdict& v, const RewardWeights& w) {
    Reward r;
    r.reason = status_name(v.status);
    const bool failed_as_unjudged = v.status == Status::kUnjudged && w.unjudged == UnjudgedReward::kFail;
    if (status_unjudged(v.status) && !failed_as_unjudged) {  // gen-failed, task-error; unjudged when skipped
        r.value = std::numeric_limits<double>::quiet_NaN();
        r.reason = std::string("unscorable (") + status_name(v.status) + ")";
        return r;
    }
    if (v.status == Status::kNoCode) return r;  // 0
    r.value = w.format;
    if (v.compiled) r.value += w.compiles;
    if (failed_as_unjudged) {
        r.reason = "unjudged (scored as a failed run)";
        return r;
    }
    if (v.ran.value_or(false)) r.value += w.runs;
    if (v.functional.value_or(false)) {
        r.value += w.functional;
        if (w.speedup > 0) {
            if (v.speedup) r.value += w.speedup * std::min(*v.speedup, w.speedup_cap);
            else r.reason += " (speed-up not measured)";
        }
    }
    return r;
}

}  // namespace cuset::judge
