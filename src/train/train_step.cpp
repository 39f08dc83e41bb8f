// One optimizer step: objective, backward, gradient sum, normalisation, clipping, AdamW.
#include "cuset/train/train_step.h"

#include <cmath>
#include <optional>

#include <ATen/ATen.h>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

MicroBatchTargets targets_of(const MicroBatch& mb) {
    MicroBatchTargets t;
    t.labels = mb.labels;
    t.sensitive = mb.sensitive;
    t.sample_index = mb.sample_index;
    t.sample_ids = mb.sample_ids;
    t.confidence = mb.confidence;
    t.reference_prob = mb.reference_prob;
    return t;
}

ObjectiveStats stats_over_ranks(const Comm& comm, const ObjectiveStats& s) {
    if (comm.world == 1) return s;
    constexpr size_t kFields = 15;
    std::vector<double> all = gather_over_ranks(
        comm, {double(s.n_valid), double(s.n_kept), double(s.n_sensitive), double(s.n_kept_only_sensitive), s.sum_tau,
               double(s.n_tau), double(s.n_samples), s.w_min, s.w_max, s.w_sum, s.conf_sum_sensitive, s.conf_sum_plain,
               s.nll_sum_valid, s.tok_w_sum, s.kl_sum});
    ObjectiveStats out;
    for (size_t b = 0; b + kFields <= all.size(); b += kFields) {
        const double* v = all.data() + b;
        ObjectiveStats one;
        one.n_valid = static_cast<int64_t>(v[0]);
        one.n_kept = static_cast<int64_t>(v[1]);
        one.n_sensitive = static_cast<int64_t>(v[2]);
        one.n_kept_only_sensitive = static_cast<int64_t>(v[3]);
        one.sum_tau = v[4];
        one.n_tau = static_cast<int64_t>(v[5]);
        one.n_samples = static_cast<int64_t>(v[6]);
        one.w_min = v[7];
        one.w_max = v[8];
        one.w_sum = v[9];
        one.conf_sum_sensitive = v[10];
        one.conf_sum_plain = v[11];
        one.nll_sum_valid = v[12];
        one.tok_w_sum = v[13];
        one.kl_sum = v[14];
        out.merge(one);
    }
    return out;
}

namespace {

at::Tensor hidden_of(Decoder& model, const MicroBatch& mb) {
    return model->forward(mb.input_ids, mb.causal_mask(), mb.position_ids, mb.segment_ids);  // [B, T, D]
}

// Two-pass methods (batch_quantile, rho1): the threshold over the scores of every valid token of
// the step, all ranks (Objective::step_scores / step_threshold). A non-finite
// confidence pass marks the step (it is skipped on every rank) but still takes part in the gather.
std::optional<double> step_threshold(Decoder& model, const Objective& objective, const Comm& comm,
                                     const std::vector<MicroBatch>& micro, const TrainStepOptions& o,
                                     bool* non_finite) {
    std::vector<double> local;
    try {
        at::NoGradGuard no_grad;
        for (const MicroBatch& mb : micro) {
            at::Tensor c = objective.step_scores(hidden_of(model, mb), model->lm_head_weight(), targets_of(mb))
                               .to(at::kDouble)
                               .cpu();  // [n_valid] fp64: the gather is on the host
            local.insert(local.end(), c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
        }
    } catch (const NonFiniteError& e) {
        log_warn("step %lld: %s", (long long)o.step, e.what());
        *non_finite = true;
        local.clear();
    }
    std::vector<double> all = gather_over_ranks(comm, local);
    if (all.empty()) return std::nullopt;
    return objective.step_threshold(at::tensor(all, at::kDouble));
}

}  // namespace

TrainStepResult train_step(Decoder& model, const Objective& objective, AdamW& optim, const Comm& comm,
                           const std::vector<MicroBatch>& micro, const TrainStepOptions& o) {
    TrainStepResult r;
    optim.zero_grad();
    std::vector<at::Tensor> params;
    for (const OptimParam& p : optim.params()) params.push_back(p.param);
    std::optional<double> tau;
    if (objective.needs_two_passes()) tau = step_threshold(model, objective, comm, micro, o, &r.non_finite);
    double numerator = 0.0, denominator = 0.0;
    int64_t tokens = 0, targets = 0;
    try {
        if (!r.non_finite) {  // skipped when the confidence pass failed
            for (const MicroBatch& mb : micro) {
                std::optional<ReferenceForward> ref;  // asft: the frozen initial model, no gradients
                if (objective.needs_reference_model()) {
                    if (!o.reference || !*o.reference)
                        throw RuntimeFailure("train_step: method asft needs the frozen reference model");
                    at::NoGradGuard no_grad;
                    ref = ReferenceForward{hidden_of(*o.reference, mb), (*o.reference)->lm_head_weight().detach()};
                }
                ObjectiveOutput out = objective.compute(hidden_of(model, mb), model->lm_head_weight(), targets_of(mb), tau,
                                                        ref ? &*ref : nullptr);
                if (&mb == &micro.back()) comm.grads_will_be_final(params);  // the sum overlaps this backward
                out.numerator.backward();
                numerator += out.numerator.item<double>();
                denominator += out.denominator;
                r.stats.merge(out.stats);
                tokens += mb.n_tokens;
                targets += mb.n_targets;
                if (o.log_sample_weights && log_enabled(LogLevel::kDebug))
                    for (const SampleWeight& w : out.samples)
                        log_debug("step %lld sample %s: weight %.4f tau %.4f hardest window [%lld, %lld) mean %.4f of %lld targets",
                                  (long long)o.step, w.id.c_str(), w.weight, w.tau, (long long)w.win_begin,
                                  (long long)w.win_end, w.win_mean, (long long)w.n_valid);
            }
        }
    } catch (const NonFiniteError& e) {
        log_warn("step %lld: %s", (long long)o.step, e.what());
        r.non_finite = true;
    }
    // Every rank takes part in the reductions, whatever happened locally; the gradient sum first
    // (its buckets may already be under way from the last backward).
    comm.sum_grads(params);
    std::vector<double> sums =
        comm.sum_vec({numerator, denominator, double(tokens), double(targets), r.non_finite ? 1.0 : 0.0});
    r.stats = stats_over_ranks(comm, r.stats);
    r.denominator = sums[1];
    r.tokens = static_cast<int64_t>(sums[2]);
    r.targets = static_cast<int64_t>(sums[3]);
    r.non_finite = sums[4] > 0;
    if (!r.non_finite && r.denominator > 0) {
        r.loss = sums[0] / r.denominator;
        if (!std::isfinite(r.loss)) r.non_finite = true;
    }
    if (!r.non_finite && r.denominator > 0) {
        gradients_scale(params, 1.0 / r.denominator);
        r.grad_norm = gradients_clip(params, o.grad_clip);
        if (!std::isfinite(r.grad_norm)) r.non_finite = true;
    }
    if (r.non_finite || r.denominator <= 0) {
        r.nothing_kept = !r.non_finite;
        optim.zero_grad();
        return r;
    }
    optim.step(o.lr);
    r.applied = true;
    return r;
}

}  // namespace cuset
