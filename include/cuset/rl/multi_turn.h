// Multi-turn GRPO rollouts (objective.grpo.turns T > 1): each of a task's G trajectories answers
// the task's prompt, CUDABench's or KernelBench's (turn 1: the single-turn rollout's prompt and
// sampling stream), its program
// is judged, and while it has not passed, its failure is the program's own (eval/repair.h) and
// turns remain, the judge's finding is its next user turn and the policy answers again. Each turn
// is one row of the GRPO batch: its prompt is the conversation so far, rendered by the model's
// chat format with the generation prompt (the feedback is context), its completion the policy's
// answer (the only tokens trained), its reward the judge's, and its advantage the turn's
// (rl/turn_returns.h: discounted returns, group or leave-one-out advantages at the same turn,
// optional first-turn anchoring), given to the step as GrpoRollout::advantages. Within a turn, each
// answer is judged as soon as it has finished, beside the decoding of the others
// (RolloutOptions::judge_while_sampling).
//
// History (objective.grpo.history): `full` keeps every earlier answer as it was; `programs` keeps
// only its fenced program (an answer without one is kept as it was), so that long prose does not
// fill the context. A trajectory whose next prompt plus max_new_tokens would pass the context
// limit is rendered with `programs` history, and if that is still too long it ends there.
//
// continue_after_pass (objective.grpo.continue_after_pass): a passing answer whose verdict has a
// speed-up over the task's reference gets that figure as its next user turn, asking for a faster
// program; a pass without a speed-up still ends the trajectory.
#pragma once

#include <cstdint>
#include <string>

#include "cuset/rl/rollout.h"
#include "cuset/rl/turn_returns.h"

namespace cuset::rl {

enum class TurnHistory { kFull, kPrograms };
// "full" | "programs"; UsageError naming `key` otherwise.
TurnHistory turn_history_parse(const std::string& name, const char* key);
const char* turn_history_name(TurnHistory h);

struct MultiTurnOptions {
    int64_t turns = 1;                 // T: answers per trajectory at most
    TurnReturnOptions returns;         // discount, group | loo, scaling, first-turn anchoring
    TurnHistory history = TurnHistory::kFull;
    int64_t max_context = 0;           // prompt + new tokens at most (the model's positions); 0 = no limit
    int64_t max_new_tokens = 0;        // per answer (for the context check)
    // A passing answer with a speed-up (a GPU judge with the speed-up reward) does not end its
    // trajectory: the figure goes back (eval::speedup_turn) and the policy answers again, up to T.
    bool continue_after_pass = false;
};

// The rollout of `tasks` in up to mt.turns turns. Rows are trajectory by trajectory, turn by turn;
// records one per row with its turn, return and advantage; batch.rewards the turn's reward and
// batch.advantages [N] the turn's advantage. The turn-1 prompts and seeds are grpo_rollout's;
// turn t > 1 of sample k draws from sample_seed(seed, "<step>:<task id>:t<t>", k).
Rollout multi_turn_rollout(const SampleFn& sample, const ChatFormatter& fmt, const std::vector<eval::Task>& tasks,
                           int32_t pad_id, const RolloutOptions& o, const MultiTurnOptions& mt);

}  // namespace cuset::rl
