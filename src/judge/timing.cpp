// The judge's speed-up measure (judge/timing.h).
#include "cuset/judge/timing.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cuset::judge {

double median_seconds(std::vector<double> seconds) {
    if (seconds.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(seconds.begin(), seconds.end());
    const size_t n = seconds.size();
    return n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
}

std::optional<double> median_of_timed_runs(const SpeedupOptions& o, const TimedRun& run, std::string* why) {
    std::vector<double> times;
    for (int i = 0; i < o.warmup + o.repeats; ++i) {
        std::string how;
        const std::optional<double> s = run(i, &how);
        if (!s) {
            if (why) *why = "timing run " + std::to_string(i + 1) + ": " + how;
            return std::nullopt;
        }
        if (i >= o.warmup) times.push_back(*s);
    }
    if (times.empty()) {
        if (why) *why = "no timed run (objective.grpo.speedup.repeats is 0)";
        return std::nullopt;
    }
    return median_seconds(std::move(times));
}

double speedup_of(double reference_s, double program_s) { return reference_s / std::max(program_s, 1e-6); }

}  // namespace cuset::judge
