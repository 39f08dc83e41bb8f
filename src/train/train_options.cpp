// What the trainer's options imply for the run's set-up (train/train_options.h).
#include "cuset/train/train_options.h"

#include "cuset/train/memory_plan.h"

namespace cuset {

bool run_needs_reference_model(const TrainOptions& opts) {
    if (opts.steps) return opts.steps->needs_reference() && !opts.model.lora;
    return method_row(opts.objective.method).reference_model;
}

MemorySetup memory_setup_of(const TrainOptions& opts, int64_t world) {
    MemorySetup s;
    s.dtype = opts.runtime.dtype;
    s.lora = opts.model.lora;
    s.reference = run_needs_reference_model(opts);
    s.world = world;
    s.zero_stage = opts.distributed.zero_stage;
    s.offload = opts.distributed.offload_optimizer;
    return s;
}

}  // namespace cuset
