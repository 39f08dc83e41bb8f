// The decoder's hyper-parameters, read from a Hugging Face `config.json` (LlamaForCausalLM,
// Qwen2ForCausalLM, Qwen3ForCausalLM) with transformers' defaults and semantics; anything the
// decoder does not implement is an InputError naming the key. No LibTorch here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuset {

// RoPE frequency scaling (config `rope_scaling` or `rope_parameters`).
struct RopeScaling {
    std::string type = "none";  // none | linear | yarn | llama3
    double factor = 1.0;        // linear, yarn, llama3
    int64_t original_max_position_embeddings = 0;  // yarn, llama3
    double low_freq_factor = 1.0;   // llama3
    double high_freq_factor = 4.0;  // llama3
    double beta_fast = 32.0;        // yarn
    double beta_slow = 1.0;         // yarn
    double attention_factor = 0.0;  // yarn: cos/sin scale; 0 = derived from factor (and mscale)
    double mscale = 0.0;            // yarn, 0 = absent
    double mscale_all_dim = 0.0;    // yarn, 0 = absent
    bool truncate = true;           // yarn: round the correction range to whole dimensions
};

struct ModelConfig {
    std::string architecture;  // LlamaForCausalLM | Qwen2ForCausalLM | Qwen3ForCausalLM
    int64_t vocab_size = 0;    // embedding rows (may exceed the tokenizer's vocabulary)
    int64_t hidden_size = 0;   // D
    int64_t intermediate_size = 0;
    int64_t n_layer = 0;
    int64_t n_head = 0;     // query heads H
    int64_t n_head_kv = 0;  // key/value heads (GQA: divides H)
    int64_t head_dim = 0;   // explicit, or hidden_size / n_head (Qwen3 default 128, as transformers)
    double rms_norm_eps = 1e-6;
    double rope_theta = 10000.0;
    RopeScaling rope_scaling;
    bool attention_bias = false;  // q/k/v projections have a bias (always for Qwen2)
    bool o_bias = false;          // o_proj has a bias (Llama/Qwen3 attention_bias; never Qwen2)
    bool qk_norm = false;         // per-head RMSNorm of q and k before RoPE (Qwen3)
    bool tie_word_embeddings = false;  // lm_head shares embed_tokens
    std::string torch_dtype = "float32";  // float32 | bfloat16 | float16 (`dtype`/`torch_dtype`)
    int64_t max_position_embeddings = 0;
    int64_t bos_token_id = -1;  // -1: absent
    std::vector<int64_t> eos_token_ids;
    int64_t pad_token_id = -1;  // -1: absent (its embedding row gets no gradient, as in transformers)
    nlohmann::json raw;         // the file as read, kept to write back
};

// Reads `dir`/config.json. InputError naming the file and key on a missing, malformed or
// unsupported value (architecture, rope type, sliding window, activation, ...).
ModelConfig model_config_load(const std::string& dir);

// The same from parsed JSON; `source` names it in errors.
ModelConfig model_config_from_json(const nlohmann::json& j, const std::string& source);

// `raw` with the fields a saved model must carry updated: dtype/torch_dtype = `torch_dtype`,
// tie_word_embeddings, architectures.
nlohmann::json model_config_to_json(const ModelConfig& cfg, const std::string& torch_dtype);

// Validates model folder `dir` without loading its weights (config.json, every safetensors
// header, the decoder's name table and shapes) and returns a multi-line summary; InputError on
// any problem. Declared here, free of LibTorch, for the command line; defined in model.cpp.
std::string model_inspect(const std::string& dir);

}  // namespace cuset
