// The trainer's evaluation of a data split (docs/training.md, Evaluation): the objective's
// evaluation loss, with confidences from the same forward pass, and the plain cross-entropy of the
// response tokens, summed over ranks. It neither logs nor records: the trainer does.
#pragma once

#include <cstdint>
#include <limits>

#include <c10/core/Device.h>

#include "cuset/data/batching.h"
#include "cuset/model/model.h"
#include "cuset/train/comm.h"
#include "cuset/train/objective.h"
#include "cuset/train/optim.h"

namespace cuset {

struct EvalResult {
    double loss = std::numeric_limits<double>::quiet_NaN();  // the objective's loss
    double ce = std::numeric_limits<double>::quiet_NaN();    // plain token-mean cross-entropy
    int64_t n_targets = 0;
};

// The objective evaluation computes its loss with, for a run trained with `training`: the
// method's evaluation method (train/method.h: evaluation has no reference model nor score file),
// confidences from its own forward pass.
ObjectiveOptions eval_objective_options(const ObjectiveOptions& training);

// How the rows of a split are batched for evaluation.
struct EvalBatching {
    int64_t micro_batch_size = 1;
    int64_t group_window = 256;  // rows sorted by length within windows of this many (less padding)
    int32_t pad_id = 0;
    c10::Device device = c10::kCPU;
};

// `objective`'s loss and the plain cross-entropy of `data`, without gradients and with the model in
// eval mode (no LoRA dropout). Every rank calls it and evaluates its share of the rows; the result
// is the sum over ranks, the same on every rank. `optim`: the passes every rank runs in lockstep
// under ZeRO stages 2-3 (train/train_step.h). Throws NonFiniteError on a non-finite logit.
EvalResult evaluate(Decoder& model, const Objective& objective, Optimizer& optim, const Comm& comm,
                    const PreparedData& data, const EvalBatching& b);

}  // namespace cuset
