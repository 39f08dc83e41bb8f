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
    constexpr size_t kFields = ObjectiveStats::kFields;
    std::vector<double> all = gather_over_ranks(comm, s.to_buffer());
    ObjectiveStats out;
    for (size_t b = 0; b + kFields <= all.size(); b += kFields) out.merge(ObjectiveStats::from_buffer(all.data() + b));
    return out;
}

namespace {

at::Tensor hidden_of(Decoder& model, const MicroBatch& mb) {
    return model->forward(mb.input_ids, mb.causal_mask(), mb.position_ids, mb.segment_ids);  // [B, T, D]
}

// Two-pass methods (batch_quantile, rho1): the threshold over the scores of every valid token of
// the step, all ranks (Objective::step_scores / step_threshold). A non-finite
// confidence pass marks the step (it is skipped on every rank) but still takes part in the gather.
std::optional<double> step_threshold(Decoder& model, const Objective& objective, const Comm& comm, Optimizer& optim,
                                     const std::vector<MicroBatch>& micro, const TrainStepOptions& o,
                                     bool* non_finite) {
    std::vector<double> local;
    const int64_t rounds = lockstep_rounds(comm, optim, static_cast<int64_t>(micro.size()));
    at::NoGradGuard no_grad;
    for (int64_t k = 0; k < rounds; ++k) {
        if (k >= static_cast<int64_t>(micro.size()) || *non_finite) {
            null_pass(model, optim, comm, false, false);
            continue;
        }
        const MicroBatch& mb = micro[static_cast<size_t>(k)];
        try {
            at::Tensor c = objective.step_scores(hidden_of(model, mb), model->lm_head_weight(), targets_of(mb))
                               .to(at::kDouble)
                               .cpu();  // [n_valid] fp64: the gather is on the host
            local.insert(local.end(), c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
        } catch (const NonFiniteError& e) {
            log_warn("step %lld: %s", (long long)o.step, e.what());
            *non_finite = true;
            local.clear();
        }
    }
    std::vector<double> all = gather_over_ranks(comm, local);
    if (all.empty()) return std::nullopt;
    return objective.step_threshold(at::tensor(all, at::kDouble));
}

}  // namespace

int64_t lockstep_rounds(const Comm& comm, const Optimizer& optim, int64_t n_local) {
    if (!optim.lockstep() || comm.world == 1) return n_local;
    int64_t most = 0;
    for (double n : gather_over_ranks(comm, {static_cast<double>(n_local)})) most = std::max(most, static_cast<int64_t>(n));
    return most;
}

void null_pass(Decoder& model, Optimizer& optim, const Comm& comm, bool backward, bool last) {
    at::Tensor ids = at::zeros({1, 1}, at::TensorOptions().dtype(at::kLong).device(model->embed_tokens.device()));  // [1, 1]
    if (!backward) {
        at::NoGradGuard no_grad;
        model->forward(ids);
        return;
    }
    at::Tensor hidden = model->forward(ids);  // [1, 1, D]
    optim.backward_begin(comm, last);
    (hidden.sum() * 0.0).backward();  // every weight's gradient += 0
}

TrainStepResult train_step(Decoder& model, const Objective& objective, Optimizer& optim, const Comm& comm,
                           const std::vector<MicroBatch>& micro, const TrainStepOptions& o) {
    TrainStepResult r;
    optim.zero_grad();
    std::optional<double> tau;
    if (objective.needs_two_passes()) tau = step_threshold(model, objective, comm, optim, micro, o, &r.non_finite);
    double numerator = 0.0, denominator = 0.0;
    int64_t tokens = 0, targets = 0;
    // ZeRO stages 2-3 communicate inside every pass: a rank with fewer micro-batches, or whose
    // step failed, runs passes without data so that every rank's collectives match.
    const int64_t rounds = lockstep_rounds(comm, optim, static_cast<int64_t>(micro.size()));
    for (int64_t k = 0; k < rounds; ++k) {
        const bool last = k + 1 == rounds;  // the sum overlaps the last backward
        if (k >= static_cast<int64_t>(micro.size()) || r.non_finite) {  // skipped when the confidence pass failed
            if (!optim.lockstep()) break;
            null_pass(model, optim, comm, true, last);
            continue;
        }
        const MicroBatch& mb = micro[static_cast<size_t>(k)];
        at::Tensor hidden;  // [B, T, D]
        try {
            std::optional<ReferenceForward> ref;  // asft: the frozen initial model, no gradients
            if (objective.needs_reference_model()) {
                if (!o.reference || !*o.reference)
                    throw RuntimeFailure("train_step: method asft needs the frozen reference model");
                at::NoGradGuard no_grad;
                ref = ReferenceForward{hidden_of(*o.reference, mb), (*o.reference)->lm_head_weight().detach()};
            }
            hidden = hidden_of(model, mb);
            ObjectiveOutput out = objective.compute(hidden, model->lm_head_weight(), targets_of(mb), tau,
                                                    ref ? &*ref : nullptr);
            optim.backward_begin(comm, last);
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
        } catch (const NonFiniteError& e) {
            log_warn("step %lld: %s", (long long)o.step, e.what());
            r.non_finite = true;
            if (optim.lockstep()) {  // this round's backward collectives (the step is skipped anyway)
                if (!hidden.defined()) hidden = hidden_of(model, mb);
                optim.backward_begin(comm, last);
                (hidden.sum() * 0.0).backward();
            }
        }
    }
    // Every rank takes part in the reductions, whatever happened locally; the gradient sum first
    // (its buckets may already be under way from the last backward).
    optim.sum_grads(comm);
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
        optim.scale_grads(1.0 / r.denominator);
        r.grad_norm = optim.clip_grads(comm, o.grad_clip);
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
