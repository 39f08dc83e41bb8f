// GRPO (group relative policy optimisation) on verifiable rewards, its arithmetic: group-relative
// advantages from the rewards of G completions per prompt, and the clipped policy-gradient loss
// with an optional KL penalty to a reference policy. Semantics and names follow TRL's
// GRPOTrainer (loss_type grpo | bnpo | dr_grpo | dapo | cispo | sapo | luspo, epsilon /
// epsilon_high, delta, beta, scale_rewards, importance_sampling_level, sapo_temperature_pos/neg); docs/method.md ("GRPO") writes the formulas out.
// It does not sample, judge or run the model: callers pass rewards and per-token
// log-probabilities in, as objective.h's callers pass hidden states.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "cuset/model/model.h"

namespace cuset {

// The loss types, declared once: the enum's value and TRL's name (objective.grpo.loss_type). The
// name maps, the error's list and the configuration's choices derive from it; a new type is a
// row here and its branch of grpo_loss (docs/method.md writes each out).
#define CUSET_GRPO_LOSS_TYPES(X) \
    X(kGrpo, "grpo")             \
    X(kBnpo, "bnpo")             \
    X(kDrGrpo, "dr_grpo")        \
    X(kDapo, "dapo")             \
    X(kCispo, "cispo")           \
    X(kSapo, "sapo")             \
    X(kLuspo, "luspo")

enum class GrpoLossType {
#define CUSET_GRPO_LOSS_ENUM(value, name) value,
    CUSET_GRPO_LOSS_TYPES(CUSET_GRPO_LOSS_ENUM)
#undef CUSET_GRPO_LOSS_ENUM
};
enum class RewardScaling { kGroup, kBatch, kNone };
enum class ImportanceSampling { kToken, kSequence };

const char* grpo_loss_type_name(GrpoLossType t);  // TRL's name of the type
const std::vector<std::string>& grpo_loss_type_names();  // in the enum's order
// The enum of a name; UsageError naming `key` and the choices otherwise.
GrpoLossType grpo_loss_type_from(const std::string& name, const std::string& key);
RewardScaling reward_scaling_from(const std::string& name, const std::string& key);  // group | batch | none
ImportanceSampling importance_sampling_from(const std::string& name, const std::string& key);  // token | sequence

struct GrpoOptions {
    GrpoLossType loss_type = GrpoLossType::kDapo;  // TRL's default
    double epsilon = 0.2;                          // lower clip: ratio >= 1 - epsilon
    std::optional<double> epsilon_high;            // upper clip: ratio <= 1 + epsilon_high (unset = epsilon); cispo: ratio <= epsilon_high
    std::optional<double> delta;                   // two-sided clipping: ratio <= delta in the unclipped term
    double beta = 0.0;                             // KL(pi_theta || pi_ref) coefficient, k3 estimator
    RewardScaling scale_rewards = RewardScaling::kGroup;
    ImportanceSampling importance_sampling = ImportanceSampling::kToken;
    int64_t max_completion_length = 512;  // dr_grpo's constant normaliser
    double sapo_temperature_pos = 1.0;    // sapo: the gate's temperature where A > 0
    double sapo_temperature_neg = 1.05;   // sapo: ... where A <= 0
};

// Advantages of N = groups x G rewards, laid out group by group (the G completions of a prompt
// are adjacent). A NaN reward marks an unscorable completion: it is left out of its group's mean
// and standard deviation (unbiased, n - 1) and gets advantage 0. A = r - mean_group; divided by
// (std + 1e-4) with std the group's (kGroup) or the batch's (kBatch), not divided (kNone).
struct GrpoAdvantages {
    at::Tensor advantages;  // [N] fp32
    at::Tensor std;         // [N] fp32: the standard deviation each advantage was scaled by (group or batch)
    int64_t zero_std = 0;   // completions whose std is 0 (to 1e-8 relative; TRL's isclose): no signal
};
GrpoAdvantages grpo_advantages(const at::Tensor& rewards, int64_t group_size, RewardScaling scale);

// log pi_theta(y_t | prompt, y_<t) of every completion token, the policy's distribution at the
// sampling `temperature` (logits / temperature, as TRL scores them), through the chunked LM head
// (model/lm_head.h: no [B T, V] logits at once). prompt_ids [B, P] int64 left-padded with
// prompt_mask [B, P] (1 = real), completion_ids [B, T] int64 right-padded with completion_mask
// [B, T]; positions 0..P+T-1 per row, as transformers' default. Returns [B, T] fp32, 0 at padding;
// gradients flow into the model.
at::Tensor completion_logps(Decoder& model, const at::Tensor& prompt_ids, const at::Tensor& prompt_mask,
                            const at::Tensor& completion_ids, const at::Tensor& completion_mask, double temperature,
                            int64_t chunk_size);

// One micro-batch of B completions of length T (right-padded).
struct GrpoBatch {
    at::Tensor logps;       // [B, T] fp32 log pi_theta of each completion token (carries the gradient)
    at::Tensor old_logps;   // [B, T] fp32 of the policy that sampled; undefined = logps.detach()
    at::Tensor ref_logps;   // [B, T] fp32 of the reference policy; required when beta != 0
    at::Tensor advantages;  // [B] fp32
    at::Tensor mask;        // [B, T] fp32 1/0: the tokens that count
};

// The loss's normalisation across micro-batches and ranks, as TRL applies it: grpo, bnpo and
// dr_grpo divide by the gradient-accumulation steps; dapo divides the token sum by the
// generation batch's masked tokens over all ranks (num_items_in_batch), scaled to one
// accumulation window: num_items / processes * grad_accum / steps_per_generation.
struct GrpoNormalizer {
    int64_t grad_accum = 1;
    int64_t processes = 1;
    int64_t steps_per_generation = 1;  // TRL's default: grad_accum
    double num_items_in_batch = 0;     // dapo only
};

// Masked sums of one micro-batch for the log; merge() adds micro-batches and ranks, and the means
// are kl / tokens and clipped_* / clip_units (TRL's global masked means).
struct GrpoStats {
    double tokens = 0;      // mask sum
    double clip_units = 0;  // what a clip fraction counts: tokens, or sequences for kSequence
    double kl = 0;          // sum over the masked tokens of the per-token k3 KL (beta != 0)
    // ratio clipped below (A < 0) / above (A > 0) / either; cispo: above epsilon_high (A > 0), TRL's
    // cispo_clip_ratio, in clipped_high and clipped_region; sapo clips nothing (its gate is smooth)
    double clipped_low = 0, clipped_high = 0, clipped_region = 0;
    double policy_loss = 0;                                // the loss before the accumulation divide
    void merge(const GrpoStats& o);
};

// The loss of one micro-batch (a scalar whose gradient flows into batch.logps), per TRL:
// ratio = exp(logps - old_logps) (per token, or per sequence as the exp of the masked mean log
// ratio), per-token loss -min(ratio A, clip(ratio, 1 - eps, 1 + eps_high) A) (grpo, bnpo, dr_grpo,
// dapo, luspo), -min(ratio, eps_high) A logps with the clamped ratio held constant (cispo), or
// -sigmoid(tau (ratio - 1)) 4 / tau A with tau by the sign of A (sapo); plus beta k3, k3 =
// exp(ref - logps) - (ref - logps) - 1; aggregated by loss_type. `stats` may be null.
at::Tensor grpo_loss(const GrpoBatch& batch, const GrpoOptions& opts, const GrpoNormalizer& norm, GrpoStats* stats);

}  // namespace cuset
