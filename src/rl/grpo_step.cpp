// One GRPO optimizer step (rl/grpo_step.h).
#include "cuset/rl/grpo_step.h"

#include <ATen/ATen.h>

#include <cmath>
#include <optional>
#include <vector>

#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/model/lora.h"
#include "cuset/train/train_step.h"  // lockstep_rounds, null_pass

namespace cuset {

at::Tensor rollout_old_logps(Decoder& model, const GrpoRollout& r, const GrpoStepOptions& o) {
    at::NoGradGuard no_grad;
    const int64_t n = r.completion_ids.size(0);
    const int64_t mb_size = std::max<int64_t>(1, o.micro_batch);
    const at::Device device = model->embed_tokens.device();
    std::vector<at::Tensor> parts;
    for (int64_t b0 = 0; b0 < n; b0 += mb_size) {
        const int64_t b = std::min(mb_size, n - b0);
        auto rows = [&](const at::Tensor& t) { return t.narrow(0, b0, b).to(device); };
        parts.push_back(completion_logps(model, rows(r.prompt_ids), rows(r.prompt_mask), rows(r.completion_ids),
                                         rows(r.completion_mask), o.temperature, o.chunk_size)
                            .to(at::kCPU, at::kFloat));  // [b, T]
    }
    return at::cat(parts, 0);  // [N, T]
}

void grpo_step_check(const GrpoStepOptions& o, int64_t world) {
    if (o.loss.scale_rewards == RewardScaling::kBatch && world > 1)
        throw UsageError("config error: 'objective.grpo.scale_rewards' batch is not supported on several ranks (the "
                         "batch's reward std would need every rank's rewards); use group or none");
}

GrpoStepResult grpo_step(Decoder& model, Optimizer& optim, const Comm& comm, const GrpoRollout& r,
                         const GrpoStepOptions& o) {
    grpo_step_check(o, comm.world);
    GrpoStepResult res;
    const int64_t n = r.completion_ids.defined() ? r.completion_ids.size(0) : 0;
    const bool given = r.advantages.defined();  // per-row advantages (multi-turn): no whole groups needed
    if (given && (r.advantages.dim() != 1 || r.advantages.size(0) != n))
        throw UsageError("grpo_step: advantages must be [N] like the completions");
    if (!given && n % o.num_generations != 0)
        throw UsageError("grpo_step: " + std::to_string(n) + " completions are not whole groups of " +
                         std::to_string(o.num_generations) + " (a rank brings whole groups)");
    if (o.loss.beta != 0.0 && !o.reference_is_base && (!o.reference || !*o.reference))
        throw UsageError("grpo_step: beta != 0 needs the frozen reference model");
    if (o.reference_is_base && lora_adapters(model).empty())
        throw UsageError("grpo_step: a reference taken as the base needs LoRA adapters on the model");
    if (r.old_logps.defined() && (r.old_logps.dim() != 2 || r.old_logps.size(0) != n ||
                                  r.old_logps.size(1) != r.completion_ids.size(1)))
        throw UsageError("grpo_step: old_logps must be [N, T] like completion_ids");
    const at::Device device = model->embed_tokens.device();
    GrpoAdvantages adv;
    double reward_sums[3] = {0, 0, 0};  // scored completions, sum r, sum r^2
    if (n > 0) {
        if (given) {
            adv.advantages = r.advantages.to(at::kFloat);  // [N]
            adv.zero_std = (adv.advantages == 0).sum().item<int64_t>();  // rows without signal
        } else {
            adv = grpo_advantages(r.rewards, o.num_generations, o.loss.scale_rewards);
        }
        at::Tensor rw = r.rewards.to(at::kDouble);
        at::Tensor ok = rw.isnan().logical_not();
        at::Tensor scored = rw.masked_select(ok);
        reward_sums[0] = static_cast<double>(scored.numel());
        reward_sums[1] = scored.sum().item<double>();
        reward_sums[2] = scored.pow(2).sum().item<double>();
    }
    // [N, T]: the tokens that count, with their weights when the rollout carries them
    const at::Tensor cmask = n == 0                      ? at::Tensor()
                             : r.token_weights.defined() ? r.token_weights.to(at::kFloat)
                                                         : r.completion_mask.to(at::kFloat);
    const double local_items = n > 0 ? cmask.sum().item<double>() : 0.0;
    std::vector<double> pre = comm.sum_vec({local_items, static_cast<double>(n), static_cast<double>(adv.zero_std),
                                            reward_sums[0], reward_sums[1], reward_sums[2]});
    res.completions = static_cast<int64_t>(pre[1]);
    res.zero_std = static_cast<int64_t>(pre[2]);
    if (pre[3] > 0) {
        res.reward_mean = pre[4] / pre[3];
        res.reward_std = pre[3] > 1 ? std::sqrt(std::max(0.0, (pre[5] - pre[3] * res.reward_mean * res.reward_mean) / (pre[3] - 1))) : 0;
    }

    const int64_t mb_size = std::max<int64_t>(1, o.micro_batch);
    const int64_t n_micro = (n + mb_size - 1) / mb_size;
    const int64_t rounds = lockstep_rounds(comm, optim, n_micro);
    GrpoNormalizer norm;
    norm.grad_accum = std::max<int64_t>(1, n_micro);
    norm.steps_per_generation = norm.grad_accum;  // one generation batch per optimizer step
    norm.processes = comm.world;
    norm.num_items_in_batch = pre[0];
    optim.zero_grad();
    double loss_sum = 0.0;
    for (int64_t k = 0; k < rounds; ++k) {
        const bool last = k + 1 == rounds;
        if (k >= n_micro || res.non_finite) {
            if (!optim.lockstep()) break;
            null_pass(model, optim, comm, true, last);
            continue;
        }
        const int64_t b0 = k * mb_size, b = std::min(mb_size, n - b0);
        auto rows = [&](const at::Tensor& t) { return t.narrow(0, b0, b).to(device); };
        try {
            GrpoBatch batch;
            batch.logps = completion_logps(model, rows(r.prompt_ids), rows(r.prompt_mask), rows(r.completion_ids),
                                           rows(r.completion_mask), o.temperature, o.chunk_size);  // [b, T]
            if (o.loss.beta != 0.0) {
                at::NoGradGuard no_grad;
                std::optional<LoraDisabled> base;
                if (o.reference_is_base) base.emplace(model);
                batch.ref_logps = completion_logps(o.reference_is_base ? model : *o.reference, rows(r.prompt_ids), rows(r.prompt_mask),
                                                   rows(r.completion_ids), rows(r.completion_mask), o.temperature,
                                                   o.chunk_size);
            }
            if (r.old_logps.defined()) batch.old_logps = rows(r.old_logps);  // [b, T]
            batch.advantages = rows(adv.advantages);  // [b]
            batch.mask = rows(cmask);                 // [b, T]
            GrpoStats s;
            at::Tensor loss = grpo_loss(batch, o.loss, norm, &s);
            optim.backward_begin(comm, last);
            loss.backward();
            loss_sum += loss.item<double>();
            res.stats.merge(s);
        } catch (const NonFiniteError& e) {
            log_warn("grpo step: %s", e.what());
            res.non_finite = true;
            if (optim.lockstep()) null_pass(model, optim, comm, true, last);
        }
    }
    optim.sum_grads(comm);
    const GrpoStats& s = res.stats;
    std::vector<double> sums = comm.sum_vec({loss_sum, res.non_finite ? 1.0 : 0.0, s.tokens, s.clip_units, s.kl,
                                             s.clipped_low, s.clipped_high, s.clipped_region, s.policy_loss});
    res.loss = sums[0] / static_cast<double>(comm.world);
    res.non_finite = sums[1] > 0 || !std::isfinite(res.loss);
    res.stats = GrpoStats{sums[2], sums[3], sums[4], sums[5], sums[6], sums[7], sums[8]};
    if (!res.non_finite) {
        if (comm.world > 1) optim.scale_grads(1.0 / static_cast<double>(comm.world));  // the data-parallel mean
        res.grad_norm = optim.clip_grads(comm, o.grad_clip);
        if (!std::isfinite(res.grad_norm)) res.non_finite = true;
    }
    if (res.non_finite) {
        optim.zero_grad();
        return res;
    }
    optim.step(o.lr);
    res.applied = true;
    return res;
}

}  // namespace cuset
