// One GRPO optimizer step from scored completions (rl/grpo.h's arithmetic on the model): the
// group advantages of the step's rewards, then for each micro-batch the completions'
// log-probabilities under the policy (and the reference model for the KL term), the loss,
// backward; the gradient averaged over ranks (as data-parallel training averages it), clipped by
// its global norm, and the optimizer's update. It does not sample or judge: the caller brings
// completions and rewards. Groups never split across ranks: each rank brings whole groups.
#pragma once

#include <cstdint>
#include <limits>

#include <ATen/core/Tensor.h>

#include "cuset/model/model.h"
#include "cuset/train/comm.h"
#include "cuset/rl/grpo.h"
#include "cuset/train/optim.h"

namespace cuset {

// This rank's completions of one step: N = groups x G rows, a prompt's G completions adjacent.
struct GrpoRollout {
    at::Tensor prompt_ids, prompt_mask;          // [N, P] int64, left-padded (1 = real token)
    at::Tensor completion_ids, completion_mask;  // [N, T] int64, right-padded
    at::Tensor rewards;                          // [N] fp32; NaN = unscorable
    // [N, T] fp32 log-probabilities of the completions under the policy that sampled them, for a
    // generation batch used for several steps (TRL's num_iterations > 1): the importance ratio is
    // taken against them. Undefined = the batch is used once, pi_old = pi_theta (detached).
    at::Tensor old_logps;
    // [N, T] fp32 per-token coefficients that take the completion mask's place in the loss and its
    // normaliser (objective.grpo.token_weights: cuset, rl/token_weights.h); undefined = the mask.
    at::Tensor token_weights;
    // [N] fp32 advantages given per row (multi-turn rollouts: each turn's, rl/turn_returns.h); the
    // rows need not be whole groups then. Undefined = the group advantages of `rewards`.
    at::Tensor advantages;
};

struct GrpoStepOptions {
    GrpoOptions loss;
    int64_t num_generations = 8;   // G
    double temperature = 1.0;      // the sampling temperature (log-probabilities are scored at it)
    int64_t micro_batch = 8;       // completions per forward/backward
    int64_t chunk_size = 1024;     // LM head chunk (model/lm_head.h)
    double lr = 0.0;
    double grad_clip = 1.0;        // 0 = none
    Decoder* reference = nullptr;  // the frozen reference policy; required when loss.beta != 0
    // LoRA: the reference is the model itself with its adapters off (model/lora.h's
    // LoraDisabled), the base it started from; `reference` is then left null.
    bool reference_is_base = false;
};

struct GrpoStepResult {
    bool applied = false;
    bool non_finite = false;
    double loss = std::numeric_limits<double>::quiet_NaN();       // summed over micro-batches, mean over ranks
    double grad_norm = std::numeric_limits<double>::quiet_NaN();  // before clipping
    double reward_mean = std::numeric_limits<double>::quiet_NaN(), reward_std = 0;  // over scored completions, all ranks
    int64_t completions = 0, zero_std = 0;  // over all ranks
    GrpoStats stats;                        // merged over micro-batches and ranks
};

// Throws UsageError when `o` cannot run on `world` ranks (batch reward scaling needs one rank).
void grpo_step_check(const GrpoStepOptions& o, int64_t world);

// The log-probabilities of `rollout`'s completions under `model` as it is now, without gradient,
// in micro-batches of o.micro_batch on the model's device: the old_logps of a generation batch
// about to be used for several steps, taken before its first update. [N, T] fp32 on the CPU.
at::Tensor rollout_old_logps(Decoder& model, const GrpoRollout& rollout, const GrpoStepOptions& o);

// Every rank must call it (with its own whole groups); the collectives match on every rank.
GrpoStepResult grpo_step(Decoder& model, Optimizer& optim, const Comm& comm, const GrpoRollout& rollout,
                         const GrpoStepOptions& o);

}  // namespace cuset
