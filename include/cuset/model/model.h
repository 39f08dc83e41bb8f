// The one generic decoder (Llama / Qwen2 / Qwen3, switched by ModelConfig fields) as LibTorch
// modules, its weight name table to and from Hugging Face checkpoints, and saving a model as a
// Hugging Face folder. The loss lives in the objective: forward() returns hidden states. Seams:
// an optional KV cache in forward() (model/kv_cache.h), an adapter slot in every projection
// (DenseAdapter), and trainable_parameters(), separate from the save/load name table.
// Notation: B batch, T sequence, D hidden_size, H query heads, K key/value heads, E head_dim,
// F intermediate_size, V vocab_size.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include "cuset/model/kv_cache.h"
#include "cuset/model/model_config.h"

namespace cuset {

// Parameters are created with at::empty (uninitialised) in the dtype and device of `options`:
// model_load() fills them from a checkpoint, decoder_init_weights() with random values.

// y = x * rsqrt(mean(x^2) + eps) computed in fp32, cast back to x's dtype, times weight.
class RMSNormImpl : public torch::nn::Module {
public:
    RMSNormImpl(int64_t dim, double eps, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x);  // [..., dim] -> [..., dim], x's dtype

    at::Tensor weight;  // [dim]
    double eps;
};
TORCH_MODULE(RMSNorm);

// What attaches to a projection (a LoRA adapter): its output is added to the projection's.
class DenseAdapter {
public:
    virtual ~DenseAdapter() = default;
    virtual at::Tensor forward(const at::Tensor& x) = 0;  // [..., in] -> [..., out]
    // Its trainable tensors, named relative to the projection ("lora_A.weight", ...).
    virtual std::vector<std::pair<std::string, at::Tensor>> parameters() const = 0;

    bool enabled = true;  // false: the projection runs as if no adapter were attached
};

// y = x W^T (+ b) (+ adapter(x)): nn.Linear without its (slow, here useless) random
// initialisation.
class DenseImpl : public torch::nn::Module {
public:
    DenseImpl(int64_t in, int64_t out, bool bias, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x);  // [..., in] -> [..., out]

    at::Tensor weight;  // [out, in]
    at::Tensor bias;    // [out] or undefined
    std::shared_ptr<DenseAdapter> adapter;  // null: the plain projection
};
TORCH_MODULE(Dense);

// Rotary position tables for one forward pass, fp32 whatever the model dtype.
struct RopeTables {
    at::Tensor cos;  // [B, 1, T, E] fp32 (broadcast over heads), already times attention scaling
    at::Tensor sin;  // [B, 1, T, E] fp32
};

// Grouped-query self-attention: q/k/v projections (optional bias), optional per-head q/k
// RMSNorm before RoPE, rotate-half RoPE, at::scaled_dot_product_attention, o_proj. The query
// heads that share a key/value head are grouped inside the kernel where it can (no mask; over a KV
// cache on the CPU; decode_attention for decode steps over a cache on CUDA); masked attention
// otherwise repeats the keys and values.
class AttentionImpl : public torch::nn::Module {
public:
    AttentionImpl(const ModelConfig& cfg, const at::TensorOptions& options);
    // x [B, T, D]; mask [B, 1, T, T] bool (true = may attend) or undefined (plain causal). With
    // a cache: this layer's keys/values are appended at cache->length and the mask is
    // [B, 1, T, length + T] over every cached position.
    at::Tensor forward(const at::Tensor& x, const RopeTables& rope, const at::Tensor& mask,
                       KvCache* cache = nullptr, int64_t layer = 0);

    Dense q_proj = nullptr;  // D -> H*E
    Dense k_proj = nullptr;  // D -> K*E
    Dense v_proj = nullptr;  // D -> K*E
    Dense o_proj = nullptr;  // H*E -> D
    RMSNorm q_norm = nullptr;  // [E], Qwen3 only
    RMSNorm k_norm = nullptr;  // [E], Qwen3 only
    int64_t n_head, n_head_kv, head_dim;
};
TORCH_MODULE(Attention);

// SwiGLU: down(silu(gate(x)) * up(x)).
class MlpImpl : public torch::nn::Module {
public:
    MlpImpl(const ModelConfig& cfg, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x);  // [B, T, D] -> [B, T, D]

    Dense gate_proj = nullptr;  // D -> F
    Dense up_proj = nullptr;    // D -> F
    Dense down_proj = nullptr;  // F -> D
};
TORCH_MODULE(Mlp);

// Pre-norm block: x + attn(norm(x)), then + mlp(norm(.)).
class DecoderLayerImpl : public torch::nn::Module {
public:
    DecoderLayerImpl(const ModelConfig& cfg, const at::TensorOptions& options);
    at::Tensor forward(const at::Tensor& x, const RopeTables& rope, const at::Tensor& mask,
                       KvCache* cache = nullptr, int64_t layer = 0);  // [B, T, D]

    RMSNorm input_layernorm = nullptr;
    Attention self_attn = nullptr;
    RMSNorm post_attention_layernorm = nullptr;
    Mlp mlp = nullptr;
};
TORCH_MODULE(DecoderLayer);

// Called around every decoder layer of a forward pass (sharded weights, train/zero.h): before()
// makes layer `i`'s weights usable, after() sees its output [B, T, D] and returns it (it may
// attach a backward hook that makes them usable again for the backward pass).
class LayerHooks {
public:
    virtual ~LayerHooks() = default;
    virtual void before(int64_t layer) = 0;
    virtual at::Tensor after(int64_t layer, const at::Tensor& out) = 0;
};

class DecoderImpl : public torch::nn::Module {
public:
    // Parameters uninitialised, in `options`' dtype and device (default fp32 on the CPU).
    explicit DecoderImpl(const ModelConfig& cfg, const at::TensorOptions& options = {});

    // input_ids [B, T] int64; attention_mask [B, T] bool/int (1 = real token) or undefined;
    // position_ids [B, T] int64 or undefined (0..T-1 per row; restarting at 0 in every segment
    // when segment_ids is given); segment_ids [B, T] int64 or undefined: tokens attend only to
    // earlier tokens of the same segment (packed rows). Returns the final hidden states
    // [B, T, D] in the model dtype (after the final norm). Padded positions get finite values.
    // With `cache` (generation, no gradients, no segments): the T new positions are appended to
    // the cache; attention_mask [B, T] marks which of them are real (left padding), and
    // position_ids default to cache->length + 0..T-1.
    at::Tensor forward(const at::Tensor& input_ids, const at::Tensor& attention_mask = {},
                       const at::Tensor& position_ids = {}, const at::Tensor& segment_ids = {},
                       KvCache* cache = nullptr);
    at::Tensor logits(const at::Tensor& hidden);  // [B, T, D] -> [B, T, V], model dtype
    at::Tensor lm_head_weight() const;           // [V, D] (the embedding when tied)
    // Recompute each layer in backward instead of keeping its activations. Gradients then
    // accumulate through loss.backward() (not torch::autograd::grad w.r.t. parameters).
    void set_activation_checkpointing(bool on) { checkpointing_ = on; }
    bool activation_checkpointing() const { return checkpointing_; }
    const ModelConfig& config() const { return cfg_; }

    // What the optimizer trains: every weight of the name table (Hugging Face names), unless the
    // base is frozen, plus the tensors of every attached adapter
    // ("model.layers.0.self_attn.q_proj.lora_A.weight").
    std::vector<std::pair<std::string, at::Tensor>> trainable_parameters() const;
    void set_base_frozen(bool frozen) { base_frozen_ = frozen; }
    bool base_frozen() const { return base_frozen_; }
    // Every projection of the decoder with its Hugging Face module name
    // ("model.layers.3.mlp.down_proj"): where adapters attach.
    std::vector<std::pair<std::string, Dense>> projections() const;

    // RoPE tables for position_ids [B, T] int64.
    RopeTables rope(const at::Tensor& position_ids) const;

    at::Tensor embed_tokens;  // [V, D]
    torch::nn::ModuleList layers = nullptr;  // n_layer x DecoderLayer
    std::vector<DecoderLayer> layer_list;    // the same layers, typed
    RMSNorm norm = nullptr;
    Dense lm_head = nullptr;  // [V, D], null when tied
    at::Tensor inv_freq;      // [E/2] fp32 on the CPU, RoPE scaling applied (not a buffer: to(bf16) must not round it)
    std::shared_ptr<LayerHooks> layer_hooks;  // null: none
    double attention_scaling = 1.0;  // yarn's cos/sin factor, 1 otherwise

private:
    at::Tensor forward_cached(const at::Tensor& input_ids, const at::Tensor& attention_mask,
                              const at::Tensor& position_ids, KvCache& cache);

    ModelConfig cfg_;
    bool checkpointing_ = false;
    bool base_frozen_ = false;
    mutable at::Tensor inv_freq_on_device_;  // inv_freq where the inputs live (one copy, not one per step)
};
TORCH_MODULE(Decoder);

// The model in eval mode for a scope (no LoRA dropout while sampling or evaluating), back in train
// mode at its end, also when the scope ends by an exception.
class EvalModeScope {
public:
    explicit EvalModeScope(Decoder& m) : m_(m) { m_->eval(); }
    ~EvalModeScope() { m_->train(); }
    EvalModeScope(const EvalModeScope&) = delete;
    EvalModeScope& operator=(const EvalModeScope&) = delete;

private:
    Decoder& m_;
};

// One row of the explicit name table: a Hugging Face tensor name and the parameter it fills.
struct WeightEntry {
    std::string hf_name;  // "model.layers.3.self_attn.q_proj.weight"
    at::Tensor param;     // the module's parameter (shared storage)
};

// The name table of `model`, in layer order. A tied lm_head has no entry (the embedding is it).
std::vector<WeightEntry> decoder_weight_table(const Decoder& model);

// (HF name, parameter) for every tensor of the name table: what is saved and loaded.
std::vector<std::pair<std::string, at::Tensor>> hf_named_parameters(const Decoder& model);

// Random initialisation like transformers' (normal(0, std) matrices and embedding, zero biases,
// unit norms), deterministic for `seed`. For benchmarks and tests without a checkpoint.
void decoder_init_weights(Decoder& model, uint64_t seed, double std = 0.02);

// Reads config.json and the safetensors weights of Hugging Face folder `dir` into a decoder of
// `dtype` on `device`. Tensors come from the explicit name table, shape-checked; any missing,
// unexpected or mis-shaped tensor is listed in one InputError. Without lm_head.weight the head
// falls back to the embedding (tied).
Decoder model_load(const std::string& dir, c10::ScalarType dtype, c10::Device device);

// Writes `model` as a Hugging Face folder `out_dir`: config.json (dtype = save_dtype), the
// weights in `save_dtype` as shards of at most `max_shard_bytes` (+ index when several), and
// the tokenizer files found in `tokenizer_dir` (tokenizer.json, tokenizer_config.json,
// special_tokens_map.json, tokenizer.model, vocab.json, merges.txt, added_tokens.json,
// generation_config.json). Built in a temporary folder renamed to `out_dir` when complete
// (replacing an existing one).
void model_save(const Decoder& model, const std::string& out_dir, const std::string& tokenizer_dir,
                c10::ScalarType save_dtype, int64_t max_shard_bytes);
// The same files written into the existing folder `dir` as they are (no temporary folder of its
// own): for a caller that builds a larger folder atomically itself (a checkpoint's AtomicDir).
void model_save_files(const Decoder& model, const std::string& dir, const std::string& tokenizer_dir,
                      c10::ScalarType save_dtype, int64_t max_shard_bytes);

// "float32" | "bfloat16" | "float16" <-> dtype; InputError/UsageError-free: RuntimeFailure on others.
std::string dtype_name(c10::ScalarType dtype);
c10::ScalarType dtype_from_name(const std::string& name);

}  // namespace cuset
