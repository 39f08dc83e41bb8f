// Repair turns: the judge's finding about a program, sent back to the model as the next user turn
// of its conversation so that it can answer with a corrected program. One renderer for every
// conversation that goes on after a verdict: `data build`'s repair rounds and `eval --turns`.
#pragma once

#include <cstddef>
#include <string>

#include "cuset/judge/runner.h"

namespace cuset::eval {

// The judge's finding is quoted up to this many bytes (a compiler can print megabytes).
inline constexpr size_t kFindingMaxBytes = 2000;

// The user turn after an attempt judged `status` with first error `error`: what went wrong (the
// compiler's first error, the run's failure, the mismatch) and the request for the complete
// corrected program. "" for a pass and for a status that is not the program's fault (gen-failed,
// task-error, unjudged): such a conversation is not continued.
std::string repair_turn(judge::Status status, const std::string& error);

// judge::status_name's inverse; false for a name that is not a status.
bool status_parse(const std::string& name, judge::Status* out);

}  // namespace cuset::eval
