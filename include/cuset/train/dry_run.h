// `cuset-train --dry-run`: what a training run would read, checked without training, and its
// memory plan from config.json alone. It loads no weights and writes nothing.
#pragma once

#include "cuset/train/train_options.h"

namespace cuset {

// Checks the model folder (config and every safetensors header, no weights loaded), the tokenizer
// and chat format and the data files, and logs a summary with the memory plan in opts.runtime's
// dtype (the dtype the run computes in). Throws the errors a run would.
void train_dry_run(const TrainOptions& opts);

}  // namespace cuset
