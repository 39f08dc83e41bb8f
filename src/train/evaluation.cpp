// The trainer's evaluation of a data split (train/evaluation.h).
#include "cuset/train/evaluation.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <ATen/ATen.h>

#include "cuset/model/lora.h"
#include "cuset/train/train_step.h"

namespace cuset {

ObjectiveOptions eval_objective_options(const ObjectiveOptions& training) {
    ObjectiveOptions o = training;
    o.cached_confidence = false;
    o.method = method_row(training.method).eval;
    return o;
}

EvalResult evaluate(Decoder& model, const Objective& objective, Optimizer& optim, const Comm& comm,
                    const PreparedData& data, const EvalBatching& b) {
    at::NoGradGuard no_grad;
    EvalModeScope eval_mode(model);  // no LoRA dropout while evaluating
    OrderOptions o;
    o.shuffle = false;
    o.packing = false;
    o.group_by_length = true;  // less padding; the result does not depend on the order
    o.group_window = b.group_window;
    std::vector<Row> rows = epoch_rows(data, o, 0);
    std::vector<Row> mine = step_rows_for_rank(rows, static_cast<int64_t>(rows.size()), 0, comm.rank, comm.world);
    double numerator = 0.0, denominator = 0.0, nll = 0.0, n_valid = 0.0;
    const int64_t mbs = b.micro_batch_size;
    // ZeRO stages 2-3: as many passes on every rank (train_step.h).
    const int64_t n_local = (static_cast<int64_t>(mine.size()) + mbs - 1) / mbs;
    for (int64_t k = n_local, rounds = lockstep_rounds(comm, optim, n_local); k < rounds; ++k)
        null_pass(model, optim, comm, false, false);
    for (size_t i = 0; i < mine.size(); i += mbs) {
        std::vector<Row> part(mine.begin() + i, mine.begin() + std::min(mine.size(), i + mbs));
        MicroBatch mb = make_micro_batch(data, part, b.pad_id, b.device);
        at::Tensor hidden = model->forward(mb.input_ids, mb.causal_mask(), mb.position_ids, mb.segment_ids);
        MicroBatchTargets t = targets_of(mb);
        std::optional<double> tau;
        if (objective.needs_two_passes()) {
            at::Tensor c = objective.confidences(hidden, model->lm_head_weight(), t);
            if (c.numel() > 0) tau = quantile_linear(c, objective.options().q);
        }
        ObjectiveOutput out = objective.compute(hidden, model->lm_head_weight(), t, tau);
        numerator += out.numerator.item<double>();
        denominator += out.denominator;
        nll += out.stats.nll_sum_valid;
        n_valid += static_cast<double>(out.stats.n_valid);
    }
    std::vector<double> s = comm.sum_vec({numerator, denominator, nll, n_valid});
    EvalResult res;
    res.loss = s[1] > 0 ? s[0] / s[1] : std::numeric_limits<double>::quiet_NaN();
    res.ce = s[3] > 0 ? s[2] / s[3] : std::numeric_limits<double>::quiet_NaN();
    res.n_targets = static_cast<int64_t>(s[3]);
    return res;
}

}  // namespace cuset
