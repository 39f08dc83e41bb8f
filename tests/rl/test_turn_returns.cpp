// Multi-turn returns and advantages (rl/turn_returns.h) on the hand-worked example of
// docs/method.md ("Multi-turn returns and advantages"): 2 tasks, G = 2 trajectories each, up to
// T = 3 turns, discount 0.5. Every value is a dyadic fraction, so fp32 holds it exactly and the
// checks are exact; group advantages, which divide by a square root, are checked against the
// closed form 1/sqrt(2) for a group of two (see the bound below). With one turn the group
// advantages are grpo_advantages' own, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <ATen/ATen.h>

#include "cuset/rl/turn_returns.h"

using cuset::TurnAdvantage;
using cuset::TurnReturnOptions;

namespace {

const float N = NAN;

// Task A: a1 fails twice then passes (0.25, 0.25, 1), a2 passes at once (1).
// Task B: b1 is fixed by its second turn (0, 1), b2 never passes (0, 0.25, 0.25).
at::Tensor rewards() {
    return at::tensor(std::vector<float>{0.25f, 0.25f, 1.0f, 1.0f, N, N, 0.0f, 1.0f, N, 0.0f, 0.25f, 0.25f}).view({4, 3});
}
at::Tensor turns() { return at::tensor(std::vector<int64_t>{3, 1, 2, 3}); }

std::vector<float> row(const at::Tensor& t, int64_t i) {
    const at::Tensor r = t.select(0, i).contiguous();
    return std::vector<float>(r.data_ptr<float>(), r.data_ptr<float>() + r.numel());
}

void expect_rows(const at::Tensor& got, const std::vector<std::vector<float>>& want) {
    ASSERT_EQ(got.size(0), static_cast<int64_t>(want.size()));
    for (size_t i = 0; i < want.size(); ++i) {
        const std::vector<float> g = row(got, static_cast<int64_t>(i));
        for (size_t t = 0; t < want[i].size(); ++t) {
            if (std::isnan(want[i][t])) EXPECT_TRUE(std::isnan(g[t])) << "trajectory " << i << " turn " << t;
            else EXPECT_EQ(g[t], want[i][t]) << "trajectory " << i << " turn " << t;
        }
    }
}

}  // namespace

TEST(TurnReturns, DiscountedReturnsOfTheHandWorkedExample) {
    TurnReturnOptions o;
    o.discount = 0.5;
    o.advantage = TurnAdvantage::kLeaveOneOut;
    const cuset::TurnAdvantages a = cuset::turn_advantages(rewards(), turns(), 2, o);
    // a1: R3 = 1, R2 = 0.25 + 0.5 * 1 = 0.75, R1 = 0.25 + 0.5 * 0.75 = 0.625; a2: R1 = 1.
    // b1: R2 = 1, R1 = 0 + 0.5 * 1 = 0.5; b2: R3 = 0.25, R2 = 0.375, R1 = 0.1875.
    expect_rows(a.returns, {{0.625f, 0.75f, 1.0f}, {1.0f, N, N}, {0.5f, 1.0f, N}, {0.1875f, 0.375f, 0.25f}});
}

TEST(TurnReturns, LeaveOneOutAdvantagesAtTheSameTurn) {
    TurnReturnOptions o;
    o.discount = 0.5;
    o.advantage = TurnAdvantage::kLeaveOneOut;
    const cuset::TurnAdvantages a = cuset::turn_advantages(rewards(), turns(), 2, o);
    // Turn 1: a1 0.625 - 1 = -0.375, a2 +0.375; b1 0.5 - 0.1875 = 0.3125, b2 -0.3125.
    // Turn 2: a1 alone in its group (a2 stopped): 0; b1 1 - 0.375 = 0.625, b2 -0.625.
    // Turn 3: a1 and b2 alone: 0. A turn a trajectory did not take: 0.
    expect_rows(a.advantages, {{-0.375f, 0.0f, 0.0f}, {0.375f, 0.0f, 0.0f}, {0.3125f, 0.625f, 0.0f}, {-0.3125f, -0.625f, 0.0f}});
}

TEST(TurnReturns, AnchoredLeaveOneOutTakesTheOthersFirstTurn) {
    TurnReturnOptions o;
    o.discount = 0.5;
    o.advantage = TurnAdvantage::kLeaveOneOut;
    o.anchor_first_turn = true;
    const cuset::TurnAdvantages a = cuset::turn_advantages(rewards(), turns(), 2, o);
    // Baseline of a1 at every turn: a2's R1 = 1 -> -0.375, 0.75 - 1 = -0.25, 1 - 1 = 0.
    // b1: b2's R1 = 0.1875 -> 0.3125, 1 - 0.1875 = 0.8125. b2: b1's R1 = 0.5 -> -0.3125,
    // 0.375 - 0.5 = -0.125, 0.25 - 0.5 = -0.25.
    expect_rows(a.advantages, {{-0.375f, -0.25f, 0.0f}, {0.375f, 0.0f, 0.0f}, {0.3125f, 0.8125f, 0.0f}, {-0.3125f, -0.125f, -0.25f}});
}

TEST(TurnReturns, GroupAdvantagesAreGrposAtEachTurn) {
    TurnReturnOptions o;
    o.discount = 0.5;
    const cuset::TurnAdvantages a = cuset::turn_advantages(rewards(), turns(), 2, o);
    // A group of two with returns x != y: mean (x + y) / 2, unbiased std |x - y| / sqrt(2), so
    // A = +-(|x - y| / 2) / (|x - y| / sqrt(2) + 1e-4) = +-1/sqrt(2) up to the 1e-4 in the
    // divisor, a relative change of at most 1e-4 / (|x - y| / sqrt(2)) <= 1e-4 / 0.22 here (the
    // smallest gap, 0.3125), plus fp32 rounding of a few operations (~1e-7): bound 5e-4.
    const double h = 1.0 / std::sqrt(2.0);
    const std::vector<std::vector<double>> want = {{-h, 0, 0}, {h, 0, 0}, {h, h, 0}, {-h, -h, 0}};
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t t = 0; t < 3; ++t)
            EXPECT_NEAR(a.advantages[i][t].item<float>(), want[static_cast<size_t>(i)][static_cast<size_t>(t)], 5e-4)
                << i << " " << t;
    // The turn-2 column is grpo_advantages of the turn-2 returns, bit for bit.
    const at::Tensor col = a.returns.select(1, 1).contiguous();
    EXPECT_TRUE(at::equal(a.advantages.select(1, 1).contiguous(),
                          cuset::grpo_advantages(col, 2, cuset::RewardScaling::kGroup).advantages));
}

TEST(TurnReturns, OneTurnIsGrpoBitForBit) {
    const at::Tensor r = at::tensor(std::vector<float>{0.1f, 0.7f, 0.3f, N, 1.0f, 1.0f, 0.2f, 0.9f}).view({8, 1});
    const at::Tensor one = at::ones({8}, at::kLong);
    for (cuset::RewardScaling s : {cuset::RewardScaling::kGroup, cuset::RewardScaling::kBatch, cuset::RewardScaling::kNone}) {
        TurnReturnOptions o;
        o.discount = 0.4;
        o.scale = s;
        const cuset::TurnAdvantages a = cuset::turn_advantages(r, one, 4, o);
        EXPECT_TRUE(at::equal(a.advantages.view({8}), cuset::grpo_advantages(r.view({8}), 4, s).advantages));
    }
}

TEST(TurnReturns, AnUnscorableTurnTakesItsEarlierReturnsOut) {
    // b2's second reward is NaN: its returns at turns 1 and 2 are NaN, its turn 3 is still 0.25.
    at::Tensor r = rewards().clone();
    r[3][1] = N;
    TurnReturnOptions o;
    o.discount = 0.5;
    o.advantage = TurnAdvantage::kLeaveOneOut;
    const cuset::TurnAdvantages a = cuset::turn_advantages(r, turns(), 2, o);
    expect_rows(a.returns.narrow(0, 3, 1), {{N, N, 0.25f}});
    // b1 has no other trajectory to compare with at turns 1 and 2 now: 0.
    expect_rows(a.advantages.narrow(0, 2, 2), {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}});
}
