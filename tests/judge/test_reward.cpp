// judge/reward: the reward of each kind of verdict, worked by hand with the default weights
// (format 0.1, compiles 0.2, runs 0.2, functional 1.0), and the verdicts that give no reward.
#include <cmath>

#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/judge/reward.h"

using namespace cuset::judge;

namespace {

Verdict verdict(Status s, bool compiled, std::optional<bool> ran, std::optional<bool> functional) {
    Verdict v;
    v.status = s;
    v.compiled = compiled;
    v.ran = ran;
    v.functional = functional;
    return v;
}

}  // namespace

TEST(Reward, EachStageAddsItsWeight) {
    const RewardWeights w;
    // Sums of at most four decimal weights: exact to a few ulp of 1.5.
    EXPECT_EQ(reward_of(verdict(Status::kNoCode, false, {}, {}), w).value, 0.0);
    EXPECT_DOUBLE_EQ(reward_of(verdict(Status::kCompileError, false, {}, {}), w).value, 0.1);
    EXPECT_DOUBLE_EQ(reward_of(verdict(Status::kCompileTimeout, false, {}, {}), w).value, 0.1);
    EXPECT_DOUBLE_EQ(reward_of(verdict(Status::kCompiled, true, {}, {}), w).value, 0.1 + 0.2);  // compile-only judge
    EXPECT_DOUBLE_EQ(reward_of(verdict(Status::kRunFailed, true, false, {}), w).value, 0.1 + 0.2);
    EXPECT_DOUBLE_EQ(reward_of(verdict(Status::kMismatch, true, true, false), w).value, 0.1 + 0.2 + 0.2);
    EXPECT_DOUBLE_EQ(reward_of(verdict(Status::kNoVerdict, true, true, false), w).value, 0.1 + 0.2 + 0.2);
    Reward pass = reward_of(verdict(Status::kPass, true, true, true), w);
    EXPECT_DOUBLE_EQ(pass.value, 0.1 + 0.2 + 0.2 + 1.0);
    EXPECT_EQ(pass.reason, "pass");
    RewardWeights only = {0, 0, 0, 1};  // functional only: the usual verifiable reward
    EXPECT_EQ(reward_of(verdict(Status::kPass, true, true, true), only).value, 1.0);
    EXPECT_EQ(reward_of(verdict(Status::kMismatch, true, true, false), only).value, 0.0);
}

// The speed-up term, by hand: a pass at 2.5x with weight 0.5 and cap 2 adds 0.5 x 2; at 0.4x it
// adds 0.2; without a measured speed-up it adds nothing and says so; a failing program never has one.
TEST(Reward, ASpeedUpAddsItsCappedWeightToAPass) {
    RewardWeights w;
    w.speedup = 0.5;
    w.speedup_cap = 2.0;
    Verdict fast = verdict(Status::kPass, true, true, true);
    fast.speedup = 2.5;
    EXPECT_DOUBLE_EQ(reward_of(fast, w).value, 0.1 + 0.2 + 0.2 + 1.0 + 0.5 * 2.0);
    Verdict slow = fast;
    slow.speedup = 0.4;
    EXPECT_DOUBLE_EQ(reward_of(slow, w).value, 0.1 + 0.2 + 0.2 + 1.0 + 0.5 * 0.4);
    Verdict untimed = verdict(Status::kPass, true, true, true);
    Reward u = reward_of(untimed, w);
    EXPECT_DOUBLE_EQ(u.value, 0.1 + 0.2 + 0.2 + 1.0);
    EXPECT_EQ(u.reason, "pass (speed-up not measured)");
    EXPECT_EQ(reward_of(fast, RewardWeights{}).value, reward_of(untimed, RewardWeights{}).value) << "weight 0: no term";
    EXPECT_EQ(reward_of(fast, RewardWeights{}).reason, "pass");
    w.speedup_cap = -1;
    EXPECT_THROW(check_reward_weights(w, "r."), cuset::UsageError);
}

// The task's own failures (its gen.py, its record) are the same for every completion of the task:
// no reward under either policy. An unjudged program scores as a failed run by default, what the
// judge established (format 0.1 + compiles 0.2, by hand), never what it did not (runs, functional),
// so not ending is no escape from a low reward; `skip` leaves it out (NaN) instead.
TEST(Reward, WhatSaysNothingAboutTheProgramIsUnscorable) {
    RewardWeights skip;
    skip.unjudged = UnjudgedReward::kSkip;
    for (const RewardWeights& w : {RewardWeights{}, skip})
        for (Status s : {Status::kGenFailed, Status::kTaskError}) {
            Reward r = reward_of(verdict(s, true, {}, {}), w);
            EXPECT_TRUE(std::isnan(r.value)) << status_name(s);
            EXPECT_EQ(r.reason, std::string("unscorable (") + status_name(s) + ")");
        }
    Reward skipped = reward_of(verdict(Status::kUnjudged, true, {}, {}), skip);
    EXPECT_TRUE(std::isnan(skipped.value));
    EXPECT_EQ(skipped.reason, "unscorable (unjudged)");
}

TEST(Reward, AnUnjudgedProgramScoresAsAFailedRunByDefault) {
    const RewardWeights w;
    EXPECT_EQ(w.unjudged, UnjudgedReward::kFail);
    Reward timed_out = reward_of(verdict(Status::kUnjudged, true, {}, {}), w);  // compiled, run not finished
    EXPECT_DOUBLE_EQ(timed_out.value, 0.1 + 0.2);
    EXPECT_EQ(timed_out.reason, "unjudged (scored as a failed run)");
    EXPECT_DOUBLE_EQ(timed_out.value, reward_of(verdict(Status::kRunFailed, true, false, {}), w).value);
    // Below every program that ran and below a pass: never a way around a low reward.
    EXPECT_LT(timed_out.value, reward_of(verdict(Status::kMismatch, true, true, false), w).value);
    EXPECT_DOUBLE_EQ(reward_of(verdict(Status::kUnjudged, false, {}, {}), w).value, 0.1) << "not compiled: format only";
}

TEST(Reward, WeightsAreCheckedByKey) {
    RewardWeights w;
    w.runs = -1;
    try {
        check_reward_weights(w, "objective.grpo.reward.");
        FAIL();
    } catch (const cuset::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("key 'objective.grpo.reward.runs' must be a finite number >= 0"),
                  std::string::npos) << e.what();
    }
    w.runs = std::nan("");
    EXPECT_THROW(check_reward_weights(w, "r."), cuset::UsageError);
    EXPECT_NO_THROW(check_reward_weights(RewardWeights{}, "r."));
}
