// The output file of `generate`, one JSON line per (prompt, sample), written alike by the local
// backend (generate_run.cpp) and the served one (openai_backend.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuset/generate/generate_run.h"

namespace cuset {

// One sample as it is written.
struct WrittenSample {
    std::string text;
    std::string finish;          // eos | stop | length
    int64_t prompt_tokens = -1;  // -1 = not known
    int64_t tokens = -1;         // generated tokens; -1 = not known (a served answer of several choices)
    double seconds = 0;
};

// Reads req.prompts for either backend: every non-blank line parsed (prompt_parse), its id (the
// record's, or "<file name>:<line>") and line set, then handed to `accept`, which prepares it for
// its backend and returns false with `problem` set when it cannot. A bad record stops with an
// InputError naming its line, or with generate.skip_invalid is counted in sum.skipped (logged with
// the first); no prompt left is an InputError.
std::vector<PromptRecord> generate_read_prompts(const GenerateRequest& req,
                                                const std::function<bool(PromptRecord&, std::string*)>& accept,
                                                GenerateSummary& sum);

// Writes req.out atomically: for every record p and sample k < settings.n, results[p][greedy ? 0 :
// k] (greedy samples of a prompt are one decoding, copied). Adds the lines and their known tokens
// to `sum`, sets sum.prompts, and logs the summary line (`tokens`: the tokens generated, for the
// rate over sum.seconds).
void generate_output_write(const GenerateRequest& req, const std::vector<PromptRecord>& records,
                           const std::vector<std::vector<WrittenSample>>& results, bool greedy, int64_t tokens,
                           GenerateSummary& sum);

}  // namespace cuset
