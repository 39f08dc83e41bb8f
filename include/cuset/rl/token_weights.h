// objective.grpo.token_weights: cuset — CuSeT's token weights on GRPO's policy-gradient loss. Each
// completion token gets CuSeT's coefficient w_i m(i,t) (docs/method.md sec. 2-3): m keeps a token
// the policy is confident about (its probability at or above the completion's threshold) or that
// the tagger marks CUDA-sensitive, w_i up-weights a completion by its hardest region. The
// coefficients take the completion mask's place in the loss and its normaliser (rl/grpo.h).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "cuset/model/model.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/tokenizer.h"
#include "cuset/rl/grpo_step.h"
#include "cuset/train/objective.h"

namespace cuset::rl {

struct TokenWeightOptions {
    bool enabled = false;       // objective.grpo.token_weights: cuset
    ObjectiveOptions cuset;     // method cuset with the run's objective.mask.* and objective.region.*
    TaggerOptions tagger;       // tagger.*: what counts as CUDA-sensitive
};

struct CompletionWeights {
    at::Tensor weights;     // [N, T] fp32 w_i m(i,t) on the completion tokens, 0 elsewhere
    int64_t tokens = 0;     // completion tokens (completion mask 1)
    int64_t kept = 0;       // of them, m = 1
    int64_t sensitive = 0;  // of them, marked by the tagger
    double weight_sum = 0;  // sum of w_i over the completions with a token
    int64_t completions = 0;
};

// The byte span [begin, end) of each of `ids` in tok.decode(ids): token t ends where the decoding
// of ids[0..t] stops agreeing with the whole decoding (spans are contiguous; a token whose bytes
// are completed into a character by a later token gets an empty span, the completing one the
// character).
std::vector<std::pair<int32_t, int32_t>> token_byte_spans(const Tokenizer& tok, const std::vector<int32_t>& ids);

// The coefficients of `batch`'s completions: confidences from a no-grad forward of `model` at
// temperature 1 (the policy's own probabilities of the tokens it sampled; micro-batch and LM-head
// chunk of `step`), sensitivity from the tagger over each completion's decoded text.
CompletionWeights completion_token_weights(Decoder& model, const Tokenizer& tok, const GrpoRollout& batch,
                                           const GrpoStepOptions& step, const TokenWeightOptions& o);

}  // namespace cuset::rl
