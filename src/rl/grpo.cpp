// GRPO's advantages and policy-gradient loss (rl/grpo.h).
#include "cuset/rl/grpo.h"

#include <ATen/ATen.h>

#include "cuset/core/error.h"
#include "cuset/model/lm_head.h"

namespace cuset {

const std::vector<std::string>& grpo_loss_type_names() {
    static const std::vector<std::string> names = {
#define CUSET_GRPO_LOSS_NAME(value, name) name,
        CUSET_GRPO_LOSS_TYPES(CUSET_GRPO_LOSS_NAME)
#undef CUSET_GRPO_LOSS_NAME
    };
    return names;
}

const char* grpo_loss_type_name(GrpoLossType t) { return grpo_loss_type_names().at(static_cast<size_t>(t)).c_str(); }

GrpoLossType grpo_loss_type_from(const std::string& name, const std::string& key) {
    const std::vector<std::string>& names = grpo_loss_type_names();
    std::string choices;
    for (size_t i = 0; i < names.size(); ++i) {
        if (name == names[i]) return static_cast<GrpoLossType>(i);
        choices += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    }
    throw UsageError("key '" + key + "' must be " + choices + ", got '" + quote_bounded(name) + "'");
}

RewardScaling reward_scaling_from(const std::string& name, const std::string& key) {
    if (name == "group") return RewardScaling::kGroup;
    if (name == "batch") return RewardScaling::kBatch;
    if (name == "none") return RewardScaling::kNone;
    throw UsageError("key '" + key + "' must be group, batch or none, got '" + quote_bounded(name) + "'");
}

ImportanceSampling importance_sampling_from(const std::string& name, const std::string& key) {
    if (name == "token") return ImportanceSampling::kToken;
    if (name == "sequence") return ImportanceSampling::kSequence;
    throw UsageError("key '" + key + "' must be token or sequence, got '" + quote_bounded(name) + "'");
}

namespace {

// Standard deviation ignoring NaNs, unbiased (n - 1), along `dim` (keepdim) or over all (dim < 0).
at::Tensor nan_std(const at::Tensor& x, int64_t dim) {
    const bool all = dim < 0;
    at::Tensor mean = all ? at::nanmean(x) : at::nanmean(x, {dim}, /*keepdim=*/true);
    at::Tensor sq = (x - mean).pow(2);
    at::Tensor var = all ? at::nanmean(sq) : at::nanmean(sq, {dim}, /*keepdim=*/true);
    at::Tensor count = all ? x.isnan().logical_not().sum().to(at::kFloat)
                           : x.isnan().logical_not().sum({dim}, /*keepdim=*/true).to(at::kFloat);
    return (var * count / (count - 1)).sqrt();
}

}  // namespace

GrpoAdvantages grpo_advantages(const at::Tensor& rewards, int64_t group_size, RewardScaling scale) {
    if (rewards.dim() != 1) throw UsageError("grpo_advantages: rewards must be [N], got " + std::to_string(rewards.dim()) + " dims");
    const int64_t n = rewards.size(0);
    if (group_size < 2) throw UsageError("GRPO needs at least 2 completions per prompt (objective.grpo.num_generations)");
    if (n % group_size != 0)
        throw UsageError("grpo_advantages: " + std::to_string(n) + " rewards do not make groups of " + std::to_string(group_size));
    at::Tensor r = rewards.to(at::kFloat);                // [N]
    at::Tensor grouped = r.view({n / group_size, group_size});  // [N/G, G]
    at::Tensor mean = at::nanmean(grouped, {1}, /*keepdim=*/true).expand_as(grouped).reshape({n});  // [N]
    at::Tensor std;                                                                                  // [N]
    if (scale == RewardScaling::kBatch)
        std = n > 1 ? nan_std(r, -1).expand({n}).contiguous() : at::zeros_like(r);
    else
        std = nan_std(grouped, 1).expand_as(grouped).reshape({n});
    at::Tensor adv = r - mean;
    if (scale != RewardScaling::kNone) adv = adv / (std + 1e-4);
    GrpoAdvantages out;
    out.advantages = at::nan_to_num(adv, 0.0);
    out.std = std;
    out.zero_std = (std.abs() <= 1e-8).sum().item<int64_t>();
    return out;
}

at::Tensor completion_logps(Decoder& model, const at::Tensor& prompt_ids, const at::Tensor& prompt_mask,
                            const at::Tensor& completion_ids, const at::Tensor& completion_mask, double temperature,
                            int64_t chunk_size) {
    if (prompt_ids.dim() != 2 || completion_ids.dim() != 2 || prompt_ids.size(0) != completion_ids.size(0))
        throw UsageError("completion_logps: prompt_ids [B, P] and completion_ids [B, T] must share B");
    if (!(temperature > 0)) throw UsageError("completion_logps: temperature must be > 0");
    const int64_t B = prompt_ids.size(0), P = prompt_ids.size(1), T = completion_ids.size(1);
    if (P < 1) throw UsageError("completion_logps: a completion needs a prompt of at least one token");
    at::Tensor ids = at::cat({prompt_ids, completion_ids}, 1);                                    // [B, P+T]
    at::Tensor mask = at::cat({prompt_mask.to(at::kBool), completion_mask.to(at::kBool)}, 1);  // [B, P+T]
    at::Tensor hidden = model->forward(ids, mask);                                              // [B, P+T, D]
    at::Tensor h = hidden.narrow(1, P - 1, T);  // [B, T, D]: position P-1+t predicts completion token t
    if (temperature != 1.0) h = h / temperature;  // softmax(h W^T / tau) = softmax((h / tau) W^T)
    at::Tensor labels = at::where(completion_mask.to(at::kBool), completion_ids,
                                  at::full({}, kIgnoreIndex, completion_ids.options()));  // [B, T]
    at::Tensor nll = token_nll(h.reshape({B * T, h.size(2)}), model->lm_head_weight(), labels.reshape({B * T}),
                               chunk_size);  // [B T] fp32, 0 at ignored
    return nll.neg().view({B, T});
}

void GrpoStats::merge(const GrpoStats& o) {
    tokens += o.tokens;
    clip_units += o.clip_units;
    kl += o.kl;
    clipped_low += o.clipped_low;
    clipped_high += o.clipped_high;
    clipped_region += o.clipped_region;
    policy_loss += o.policy_loss;
}

at::Tensor grpo_loss(const GrpoBatch& b, const GrpoOptions& opts, const GrpoNormalizer& norm, GrpoStats* stats) {
    const at::Tensor& logps = b.logps;  // [B, T]
    if (logps.dim() != 2) throw UsageError("grpo_loss: logps must be [B, T]");
    const int64_t B = logps.size(0);
    at::Tensor mask = b.mask.to(logps.scalar_type());                            // [B, T]
    at::Tensor old = b.old_logps.defined() ? b.old_logps : logps.detach();      // [B, T]
    at::Tensor adv = b.advantages.to(logps.scalar_type()).view({B, 1});          // [B, 1]
    const double eps_low = opts.epsilon, eps_high = opts.epsilon_high.value_or(opts.epsilon);

    at::Tensor log_ratio = logps - old;  // [B, T]
    at::Tensor log_w = opts.importance_sampling == ImportanceSampling::kToken
                           ? log_ratio
                           : ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp_min(1.0)).unsqueeze(-1);  // [B, 1]
    at::Tensor ratio = log_w.exp();  // [B, T] or [B, 1]
    at::Tensor per_token;            // [B, T] or [B, 1]
    if (opts.loss_type == GrpoLossType::kCispo) {
        per_token = -ratio.clamp_max(eps_high).detach() * adv * logps;  // [B, T]
    } else if (opts.loss_type == GrpoLossType::kSapo) {
        at::Tensor tau = at::where(adv > 0, at::scalar_tensor(opts.sapo_temperature_pos, adv.options()),
                                   at::scalar_tensor(opts.sapo_temperature_neg, adv.options()));  // [B, 1]
        per_token = -(at::sigmoid(tau * (ratio - 1)) * 4 / tau) * adv;
    } else {
        at::Tensor clipped = ratio.clamp(1 - eps_low, 1 + eps_high);
        at::Tensor unclipped = opts.delta ? ratio.clamp_max(*opts.delta) : ratio;
        per_token = -at::min(unclipped * adv, clipped * adv);
    }
    at::Tensor kl;  // [B, T]
    if (opts.beta != 0.0) {
        if (!b.ref_logps.defined()) throw UsageError("grpo_loss: beta != 0 needs the reference policy's log-probabilities");
        at::Tensor d = b.ref_logps - logps;
        kl = d.exp() - d - 1;
        per_token = per_token + opts.beta * kl;
    }
    at::Tensor masked_sum = (per_token * mask).sum();
    at::Tensor loss;
    double accum_divide = static_cast<double>(norm.grad_accum);
    switch (opts.loss_type) {
        case GrpoLossType::kGrpo:
        case GrpoLossType::kSapo:
            loss = ((per_token * mask).sum(-1) / mask.sum(-1).clamp_min(1.0)).mean();
            break;
        case GrpoLossType::kLuspo:  // each completion's token sum: its loss scaled by its length
            loss = (per_token * mask).sum(-1).mean();
            break;
        case GrpoLossType::kBnpo:
            loss = masked_sum / mask.sum().clamp_min(1.0);
            break;
        case GrpoLossType::kDrGrpo:
            loss = masked_sum / static_cast<double>(B * opts.max_completion_length);
            break;
        case GrpoLossType::kDapo:
        case GrpoLossType::kCispo: {
            double d = std::max(norm.num_items_in_batch, 1.0) / static_cast<double>(norm.processes);
            d = d * static_cast<double>(norm.grad_accum) / static_cast<double>(norm.steps_per_generation);
            loss = masked_sum / d;
            accum_divide = 1.0;  // already in the normaliser
            break;
        }
    }
    if (stats) {
        at::NoGradGuard no_grad;
        GrpoStats s;
        s.policy_loss = loss.item<double>();
        // Sums over the masked tokens; a sequence-level ratio counts once per sequence.
        const bool per_sequence = opts.importance_sampling == ImportanceSampling::kSequence;
        auto masked = [&](const at::Tensor& x) { return per_sequence ? x.sum().item<double>() : (x * mask).sum().item<double>(); };
        s.tokens = mask.sum().item<double>();
        s.clip_units = per_sequence ? static_cast<double>(B) : s.tokens;
        at::Tensor low = ((ratio < 1 - eps_low) & (adv < 0)).to(at::kFloat);
        at::Tensor high = ((ratio > 1 + eps_high) & (adv > 0)).to(at::kFloat);
        if (opts.loss_type == GrpoLossType::kCispo) {
            low = at::zeros_like(low);
            high = ((ratio > eps_high) & (adv > 0)).to(at::kFloat);
        } else if (opts.loss_type == GrpoLossType::kSapo) {
            low = at::zeros_like(low);
            high = at::zeros_like(high);
        }
        s.clipped_low = masked(low);
        s.clipped_high = masked(high);
        s.clipped_region = masked((low + high).clamp_max(1.0));
        if (kl.defined()) s.kl = (kl * mask).sum().item<double>();
        *stats = s;
    }
    return accum_divide == 1.0 ? loss : loss / accum_divide;
}

}  // namespace cuset
