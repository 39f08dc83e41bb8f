// The decoder's key/value cache for generation: per layer, keys and values preallocated as
// [B, K, T_max, E] in the model dtype, and which key positions hold real tokens (left-padded
// prompts leave their padding masked). A forward pass with a cache appends its T positions at
// `length` and attends bottom-right causally: query i (absolute position length + i) sees cached
// keys 0..length+i that are real. It holds no sampling or stopping logic.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "cuset/model/model_config.h"

namespace cuset {

struct KvCache {
    std::vector<at::Tensor> k;  // n_layer x [B, K, T_max, E], model dtype
    std::vector<at::Tensor> v;  // n_layer x [B, K, T_max, E]
    at::Tensor real;            // [B, T_max] bool: the key position holds a real token
    int64_t length = 0;         // positions filled (the same for every row)

    int64_t batch() const { return real.defined() ? real.size(0) : 0; }
    int64_t capacity() const { return real.defined() ? real.size(1) : 0; }

    // Keeps only rows `rows` [B'] int64 (finished rows leave the batch).
    void select_rows(const at::Tensor& rows);
};

KvCache kv_cache_allocate(const ModelConfig& cfg, int64_t batch, int64_t max_len, c10::ScalarType dtype,
                          c10::Device device);

}  // namespace cuset
