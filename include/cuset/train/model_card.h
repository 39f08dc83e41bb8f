// The model card of a checkpoint: its README.md, a Hugging Face model card (YAML front matter,
// then how the model was made: base model, objective, steps, batch, schedule, data with their
// hashes, the evaluations, the settings and the command line).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cuset/train/checkpoint.h"
#include "cuset/train/train_options.h"

namespace cuset {

// The card of a checkpoint at state `st` of a run of `opts` on `world` ranks (its settings section
// is the objective, tagger and train sections of opts.run.config_yaml). Only what the
// training itself determines, so that two runs reaching the same state write the same card (no run
// name, paths of the run folder, times or host). data_hash: the tokenised training data's;
// file_hashes: (data file, its hash); command_line: "" = not recorded.
std::string model_card(const TrainOptions& opts, const TrainerState& st, int64_t world, const std::string& data_hash,
                       const std::vector<std::pair<std::string, std::string>>& file_hashes,
                       const std::string& command_line);

}  // namespace cuset
