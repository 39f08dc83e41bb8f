// One optimizer step, the seam every training path goes through (the trainer, the step
// benchmarks, the in-process training tests): micro-batches -> objective (with the step-level
// confidence threshold when the method needs two passes) -> backward -> gradient sum over ranks
// -> scale by the step's global denominator -> clip by the global norm -> AdamW update, or a
// skipped step when anything is non-finite or no token was kept. It does not build micro-batches,
// count skipped steps, log or save: that is the trainer's.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "cuset/data/batching.h"
#include "cuset/model/model.h"
#include "cuset/train/comm.h"
#include "cuset/train/objective.h"
#include "cuset/train/optim.h"

namespace cuset {

struct TrainStepOptions {
    double lr = 0.0;          // this step's learning rate (the schedule already applied)
    double grad_clip = 1.0;   // global-norm clipping; 0 = none
    int64_t step = 0;         // for messages
    bool log_sample_weights = false;  // one debug line per sample (log.sample_weights)
    Decoder* reference = nullptr;     // asft: the frozen initial model (forward without gradients)
};

struct TrainStepResult {
    bool applied = false;     // the optimizer updated the weights
    bool non_finite = false;  // a non-finite loss, logit or gradient on some rank: skipped
    bool nothing_kept = false;  // the objective kept no token on any rank (denominator 0): skipped
    double loss = std::numeric_limits<double>::quiet_NaN();       // numerator / denominator, all ranks
    double grad_norm = std::numeric_limits<double>::quiet_NaN();  // before clipping
    double denominator = 0.0;  // the step's global denominator
    int64_t tokens = 0;        // real tokens over all ranks
    int64_t targets = 0;       // valid targets over all ranks
    ObjectiveStats stats;      // the step's statistics, merged over all ranks
};

// The objective's view of a micro-batch.
MicroBatchTargets targets_of(const MicroBatch& mb);

// The step's objective statistics over all ranks (merged in rank order), the same on every rank.
ObjectiveStats stats_over_ranks(const Comm& comm, const ObjectiveStats& s);

// How many passes every rank runs when each has `n_local` of its own: the most on any rank when
// the optimizer needs every rank in lockstep (ZeRO stages 2-3), n_local otherwise.
int64_t lockstep_rounds(const Comm& comm, const Optimizer& optim, int64_t n_local);
// A pass over one token without data (its gradient contribution is exactly 0): a rank's part in
// the collectives of a pass it has nothing for. backward: forward and backward (`last` as in
// Optimizer::backward_begin), else a forward without gradients.
void null_pass(Decoder& model, Optimizer& optim, const Comm& comm, bool backward, bool last);

// Runs one optimizer step over this rank's micro-batches. Every rank must call it (also with no
// micro-batch): the collectives are the same on every rank whatever happens locally. Gradients
// are left zeroed after a skipped step.
TrainStepResult train_step(Decoder& model, const Objective& objective, Optimizer& optim, const Comm& comm,
                           const std::vector<MicroBatch>& micro, const TrainStepOptions& o);

}  // namespace cuset
