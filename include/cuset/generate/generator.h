// Batched autoregressive decoding over the decoder's KV cache: a batch of prompts is left-padded
// and prefilled at once, then decoded one token per step; a sequence that finishes (EOS or an
// end-of-turn token, a stop string, its token budget) leaves the batch (KvCache::select_rows)
// instead of decoding padding. Each sequence samples from its own stream (sampling.h), so its
// tokens do not depend on the other sequences of its batch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "cuset/generate/sampling.h"
#include "cuset/model/model.h"
#include "cuset/text/tokenizer.h"

namespace cuset {

enum class FinishReason : uint8_t { kEos, kStop, kLength };
const char* finish_reason_name(FinishReason r);  // "eos" | "stop" | "length"

struct GenerateOptions {
    int64_t max_new_tokens = 256;
    SamplingOptions sampling;
    std::vector<int32_t> eos_ids;            // tokens that end a sample (EOS, end of turn)
    std::vector<std::string> stop_strings;   // texts that end a sample (checked on the decoded text)
    int64_t context_length = 0;              // prompt + generated tokens at most; 0 = unlimited
};

// One sequence to decode.
struct GenerationInput {
    std::vector<int32_t> prompt;  // [T] token ids, T >= 1
    uint64_t seed = 0;            // its stream's seed (sample_seed); unused when greedy
};

struct GenerationOutput {
    std::vector<int32_t> tokens;  // generated ids, the EOS / stop-completing token included
    std::string text;             // decoded response: without the EOS token, cut before a stop string
    FinishReason finish = FinishReason::kLength;
    double seconds = 0;           // from the start of its batch to its last token
};

class Generator {
public:
    // `tokenizer` decodes for stop strings and the response text; it must outlive the generator.
    Generator(Decoder model, const Tokenizer& tokenizer, GenerateOptions opts, c10::Device device);

    // Decodes `batch` together (one KV cache of batch x (longest prompt + max_new_tokens)).
    // `on_token(n)`: called after every step with the number of tokens that step produced.
    // `on_finish(i, out)`: called as soon as row i has finished (its output complete), while the
    // other rows go on decoding, so that a caller can start work on it (the GRPO judge).
    std::vector<GenerationOutput> generate(const std::vector<GenerationInput>& batch,
                                           const std::function<void(int64_t)>& on_token = {},
                                           const std::function<void(size_t, const GenerationOutput&)>& on_finish = {});

    const GenerateOptions& options() const { return opts_; }

private:
    Decoder model_;
    const Tokenizer& tok_;
    GenerateOptions opts_;
    c10::Device device_;
};

}  // namespace cuset
