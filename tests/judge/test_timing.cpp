// The judge's speed-up measure (judge/timing.h) on hand-worked run times: warm-up runs are not
// timed, the median of the timed ones is taken (mean of the middle two for an even count), the
// first failing run ends the measure and is named, and the speed-up is the ratio of medians.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "cuset/judge/timing.h"

using cuset::judge::median_of_timed_runs;
using cuset::judge::SpeedupOptions;

namespace {

// A program whose run i takes times[i] seconds (nullopt: the run fails), recording the order of
// the runs asked for.
struct FakeProgram {
    std::vector<std::optional<double>> times;
    std::vector<int> asked;
    cuset::judge::TimedRun runner() {
        return [this](int i, std::string* why) -> std::optional<double> {
            asked.push_back(i);
            if (!times.at(static_cast<size_t>(i))) *why = "exit status 1";
            return times[static_cast<size_t>(i)];
        };
    }
};

}  // namespace

TEST(Timing, MedianOfTheTimedRunsAfterTheWarmUp) {
    // warmup 1 (9 s, not counted), repeats 4: 3, 1, 2, 5 -> sorted 1 2 3 5 -> (2 + 3) / 2 = 2.5.
    FakeProgram p{{9.0, 3.0, 1.0, 2.0, 5.0}, {}};
    SpeedupOptions o;
    o.warmup = 1;
    o.repeats = 4;
    std::string why;
    const std::optional<double> m = median_of_timed_runs(o, p.runner(), &why);
    ASSERT_TRUE(m.has_value()) << why;
    EXPECT_EQ(*m, 2.5);
    EXPECT_EQ(p.asked, (std::vector<int>{0, 1, 2, 3, 4}));
    // An odd count: warmup 2 (9, 3), repeats 3: 1, 2, 5 -> 2.
    FakeProgram q{{9.0, 3.0, 1.0, 2.0, 5.0}, {}};
    o.warmup = 2;
    o.repeats = 3;
    EXPECT_EQ(median_of_timed_runs(o, q.runner(), &why), std::optional<double>(2.0));
}

TEST(Timing, TheFirstFailingRunEndsTheMeasureAndIsNamed) {
    FakeProgram p{{1.0, 1.0, std::nullopt, 1.0, 1.0}, {}};
    SpeedupOptions o;
    o.warmup = 1;
    o.repeats = 4;
    std::string why;
    EXPECT_FALSE(median_of_timed_runs(o, p.runner(), &why).has_value());
    EXPECT_EQ(why, "timing run 3: exit status 1");
    EXPECT_EQ(p.asked, (std::vector<int>{0, 1, 2})) << "no run after the failing one";
    // A failing warm-up run fails the measure too.
    FakeProgram w{{std::nullopt, 1.0}, {}};
    o.repeats = 1;
    EXPECT_FALSE(median_of_timed_runs(o, w.runner(), &why).has_value());
    EXPECT_EQ(why, "timing run 1: exit status 1");
    // No timed run: no measure.
    FakeProgram z{{1.0}, {}};
    o.repeats = 0;
    EXPECT_FALSE(median_of_timed_runs(o, z.runner(), &why).has_value());
}

TEST(Timing, SpeedupIsTheRatioOfMediansWithTheProgramAtLeastAMicrosecond) {
    EXPECT_EQ(cuset::judge::speedup_of(2.0, 0.5), 4.0);
    EXPECT_EQ(cuset::judge::speedup_of(1.0, 2.0), 0.5);
    EXPECT_EQ(cuset::judge::speedup_of(1.0, 0.0), 1e6);
    EXPECT_TRUE(std::isnan(cuset::judge::median_seconds({})));
    EXPECT_EQ(cuset::judge::median_seconds({4.0}), 4.0);
}
