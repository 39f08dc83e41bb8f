// The order in which GRPO takes its tasks (rl/task_schedule.h): with nothing queued, the stateless
// order of grpo_step_tasks; retries worked by hand on the passes' permutations; the state's round
// trip through JSON, and a damaged state refused.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/rl/task_schedule.h"

using cuset::rl::grpo_pass_order;
using cuset::rl::grpo_step_tasks;
using cuset::rl::ScheduledTask;
using cuset::rl::TaskSchedule;

namespace {

ScheduledTask fresh(size_t t) { return {t, false}; }
ScheduledTask retry(size_t t) { return {t, true}; }

}  // namespace

TEST(TaskSchedule, EachPassIsAPermutationDrawnFromTheSeed) {
    for (int64_t pass = 0; pass < 3; ++pass) {
        const std::vector<size_t> p = grpo_pass_order(7, 9, pass);
        EXPECT_EQ(std::set<size_t>(p.begin(), p.end()).size(), 9u) << "pass " << pass;
        EXPECT_EQ(p, grpo_pass_order(7, 9, pass));
    }
    EXPECT_NE(grpo_pass_order(7, 9, 0), grpo_pass_order(7, 9, 1));
    EXPECT_NE(grpo_pass_order(7, 9, 0), grpo_pass_order(8, 9, 0));
}

TEST(TaskSchedule, NothingQueuedTakesTheStatelessOrder) {
    for (int64_t world : {1, 3}) {
        TaskSchedule s(11, 7);
        for (int64_t step = 0; step < 10; ++step) {  // 30 positions: 4 passes and a part
            const std::vector<ScheduledTask> all = s.take(3);
            for (int64_t rank = 0; rank < world; ++rank) {
                const std::vector<size_t> want = grpo_step_tasks(11, 7, 3, step, rank, world);
                const int64_t share = 3 / world;
                for (int64_t j = 0; j < share; ++j) {
                    EXPECT_EQ(all[static_cast<size_t>(rank * share + j)], fresh(want[static_cast<size_t>(j)]))
                        << "step " << step << " rank " << rank;
                }
            }
        }
        EXPECT_EQ(s.pass(), 4);
    }
}

TEST(TaskSchedule, RetriesComeAtTheEndOfThePassOncePerPass) {
    const std::vector<size_t> p0 = grpo_pass_order(5, 4, 0), p1 = grpo_pass_order(5, 4, 1);
    TaskSchedule s(5, 4);
    EXPECT_EQ(s.take(3), (std::vector<ScheduledTask>{fresh(p0[0]), fresh(p0[1]), fresh(p0[2])}));
    EXPECT_TRUE(s.queue_retry(p0[1]));
    EXPECT_FALSE(s.queue_retry(p0[1])) << "once per pass";
    EXPECT_EQ(s.queued(), 1u);
    // The rest of the permutation, then the retry.
    EXPECT_EQ(s.take(2), (std::vector<ScheduledTask>{fresh(p0[3]), retry(p0[1])}));
    EXPECT_EQ(s.queued(), 0u);
    EXPECT_TRUE(s.queue_retry(p0[3]));  // queued while the pass still runs: it extends the pass
    EXPECT_EQ(s.take(3), (std::vector<ScheduledTask>{retry(p0[3]), fresh(p1[0]), fresh(p1[1])}));
    EXPECT_EQ(s.pass(), 1);
    // A new pass: a task may be queued again; one queued after its pass ended joins the pass in progress.
    EXPECT_TRUE(s.queue_retry(p0[1]));
    EXPECT_EQ(s.take(3), (std::vector<ScheduledTask>{fresh(p1[2]), fresh(p1[3]), retry(p0[1])}));
    EXPECT_EQ(s.take(1), (std::vector<ScheduledTask>{fresh(grpo_pass_order(5, 4, 2)[0])}));
    EXPECT_THROW(s.queue_retry(4), cuset::RuntimeFailure);
}

TEST(TaskSchedule, TheStateRoundTripsThroughJson) {
    TaskSchedule a(3, 5);
    a.take(4);
    a.queue_retry(2);
    a.queue_retry(0);
    a.take(2);  // the last of the permutation and the first retry
    const nlohmann::json j = a.to_json();
    TaskSchedule b = TaskSchedule::from_json(j, 3, 5, "grpo-schedule.json");
    EXPECT_EQ(b.to_json(), j);
    EXPECT_FALSE(b.queue_retry(2)) << "the tasks queued in the pass are kept";
    EXPECT_FALSE(a.queue_retry(2));
    for (int k = 0; k < 4; ++k) EXPECT_EQ(a.take(3), b.take(3)) << "take " << k;

    auto refused = [&](nlohmann::json bad, const std::string& says) {
        try {
            TaskSchedule::from_json(bad, 3, 5, "ckpt/grpo-schedule.json");
            ADD_FAILURE() << "accepted " << bad.dump();
        } catch (const cuset::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("ckpt/grpo-schedule.json: "), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
    };
    nlohmann::json other = j;
    other["tasks"] = 6;
    refused(other, "the task file holds 5");
    nlohmann::json past = j;
    past["position"] = 9;
    refused(past, "past the pass");
    nlohmann::json index = j;
    index["retries"] = {7};
    refused(index, "task index below 5");
    nlohmann::json stray = j;
    stray["queued"] = nlohmann::json::array();
    refused(stray, "not among the tasks queued");
    refused(nlohmann::json::array(), "not a JSON object");
    nlohmann::json missing = j;
    missing.erase("pass");
    refused(missing, "\"pass\" must be a count");
}
