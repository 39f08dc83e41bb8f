// What the GPU benchmarks (bench_gpu_step, bench_gpu_decode) share: the Qwen2.5-Coder-7B shape
// and the wall clock with a device synchronisation.
#pragma once

#include <chrono>
#include <cstdint>

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include "cuset/model/model_config.h"

namespace bench {

// Seconds on the monotonic clock.
inline double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Waits for the work queued on a CUDA device (a copy to the host); nothing on the CPU.
inline void sync(c10::Device d) {
    if (d.is_cuda()) (void)at::zeros({1}, at::TensorOptions().device(d)).cpu();
}

// The Qwen2.5-Coder-7B shape (hidden 3584, 28 heads over 4 key/value heads, MLP 18944, vocabulary
// 152064, untied lm_head) with `layers` decoder layers; `tiny` shrinks it to a few MB for a smoke
// run on the CPU.
inline cuset::ModelConfig qwen7b_shape(int64_t layers, bool tiny) {
    nlohmann::json j = {{"architectures", {"Qwen2ForCausalLM"}},
                        {"model_type", "qwen2"},
                        {"vocab_size", tiny ? 1024 : 152064},
                        {"hidden_size", tiny ? 128 : 3584},
                        {"intermediate_size", tiny ? 384 : 18944},
                        {"num_hidden_layers", layers},
                        {"num_attention_heads", tiny ? 4 : 28},
                        {"num_key_value_heads", tiny ? 2 : 4},
                        {"max_position_embeddings", 32768},
                        {"rms_norm_eps", 1e-6},
                        {"rope_theta", 1000000.0},
                        {"tie_word_embeddings", false},
                        {"torch_dtype", "bfloat16"}};
    return cuset::model_config_from_json(j, "bench");
}

}  // namespace bench
