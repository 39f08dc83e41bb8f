// The generic decoder (transformers' Llama/Qwen2/Qwen3 semantics), activation checkpointing,
// the Hugging Face name table, loading and saving. Tensor shapes: see the notation in model.h.
#include "cuset/model/model.h"

#include <unistd.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/model/decode_attention.h"
#include "cuset/model/decode_linear.h"
#include "cuset/model/safetensors.h"
#include "cuset/model/safetensors_torch.h"

namespace cuset {

namespace fs = std::filesystem;

namespace {

std::string shape_str(at::IntArrayRef s) { return c10::str(s); }

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// x [B, *, T, E] -> rotate-half RoPE in fp32, back in x's dtype.
at::Tensor apply_rope(const at::Tensor& x, const RopeTables& rope) {
    const int64_t half = x.size(-1) / 2;
    at::Tensor xf = x.to(at::kFloat);
    at::Tensor rotated = at::cat({-xf.narrow(-1, half, half), xf.narrow(-1, 0, half)}, -1);  // [.., E]
    return (xf * rope.cos + rotated * rope.sin).to(x.scalar_type());
}

// kv [B, K, T, E] -> [B, K*rep, T, E], each kv head repeated for its `rep` query heads.
at::Tensor repeat_kv(const at::Tensor& kv, int64_t rep) {
    if (rep == 1) return kv;
    const int64_t b = kv.size(0), k = kv.size(1), t = kv.size(2), e = kv.size(3);
    return kv.unsqueeze(2).expand({b, k, rep, t, e}).reshape({b, k * rep, t, e});
}

// Inverse RoPE frequencies [E/2] fp32, with transformers' scaling formulas evaluated the same
// way (fp32 tensors, double scalars) so the fp32 parity holds to the last bits that matter.
std::pair<at::Tensor, double> rope_inv_freq(const ModelConfig& cfg) {
    const int64_t dim = cfg.head_dim;
    const double base = cfg.rope_theta;
    const RopeScaling& rs = cfg.rope_scaling;
    at::Tensor exponent = at::arange(0, dim, 2, at::kLong).to(at::kFloat) / static_cast<double>(dim);  // [E/2]
    at::Tensor pos_freqs = at::pow(base, exponent);  // base^(2i/E), fp32
    at::Tensor inv_freq = 1.0 / pos_freqs;
    if (rs.type == "none") return {inv_freq, 1.0};
    if (rs.type == "linear") return {inv_freq / rs.factor, 1.0};
    if (rs.type == "llama3") {
        const double old_len = static_cast<double>(rs.original_max_position_embeddings);
        const double low_wavelen = old_len / rs.low_freq_factor;
        const double high_wavelen = old_len / rs.high_freq_factor;
        at::Tensor wavelen = 2 * M_PI / inv_freq;
        at::Tensor scaled = at::where(wavelen > low_wavelen, inv_freq / rs.factor, inv_freq);
        at::Tensor smooth = (old_len / wavelen - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
        at::Tensor smoothed = (1 - smooth) * scaled / rs.factor + smooth * scaled;
        at::Tensor medium = (wavelen >= high_wavelen).logical_and(wavelen <= low_wavelen);
        return {at::where(medium, smoothed, scaled), 1.0};
    }
    if (rs.type == "yarn") {
        const double factor = rs.factor;
        auto get_mscale = [](double scale, double mscale) {
            return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
        };
        double attention = rs.attention_factor;
        if (attention == 0.0)
            attention = (rs.mscale != 0.0 && rs.mscale_all_dim != 0.0)
                            ? get_mscale(factor, rs.mscale) / get_mscale(factor, rs.mscale_all_dim)
                            : get_mscale(factor, 1.0);
        const double orig = static_cast<double>(rs.original_max_position_embeddings);
        auto correction_dim = [&](double rotations) {
            return (dim * std::log(orig / (rotations * 2 * M_PI))) / (2 * std::log(base));
        };
        double low = correction_dim(rs.beta_fast), high = correction_dim(rs.beta_slow);
        if (rs.truncate) {
            low = std::floor(low);
            high = std::ceil(high);
        }
        low = std::max(low, 0.0);
        high = std::min(high, static_cast<double>(dim - 1));
        if (low == high) high += 0.001;  // avoid a zero-width ramp
        at::Tensor ramp = ((at::arange(dim / 2, at::kFloat) - low) / (high - low)).clamp(0, 1);  // [E/2]
        at::Tensor extrapolation = 1 - ramp;
        at::Tensor interpolation = 1.0 / (factor * pos_freqs);
        return {interpolation * (1 - extrapolation) + inv_freq * extrapolation, attention};
    }
    throw InputError("internal error: unknown rope scaling '" + rs.type + "'");
}

// Per layer: forward without keeping activations, recompute under grad mode in backward.
// Parameter gradients accumulate through the nested backward (reentrant checkpointing).
struct LayerCheckpoint : public torch::autograd::Function<LayerCheckpoint> {
    // `mask` travels as a pointer (it may be undefined, which autograd inputs may not be).
    static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& cos,
                              const at::Tensor& sin, const at::Tensor* mask, DecoderLayerImpl* layer) {
        ctx->save_for_backward({x, cos, sin});
        ctx->saved_data["mask"] = *mask;
        ctx->saved_data["layer"] = reinterpret_cast<int64_t>(layer);
        // The generator states before the layer (torch.utils.checkpoint's preserve_rng_state): the
        // recomputation draws the same random numbers (LoRA dropout masks) as this pass.
        ctx->saved_data["rng_cpu"] = at::detail::getDefaultCPUGenerator().get_state();
        if (x.is_cuda()) ctx->saved_data["rng_dev"] = at::globalContext().defaultGenerator(x.device()).get_state();
        return layer->forward(x, RopeTables{cos, sin}, *mask);  // grad mode is off inside apply()
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        auto saved = ctx->get_saved_variables();
        auto* layer = reinterpret_cast<DecoderLayerImpl*>(ctx->saved_data["layer"].toInt());
        at::Tensor x = saved[0].detach().requires_grad_(true);  // [B, T, D]
        at::Tensor out;
        {
            // Replay the forward pass's random numbers, then put the generators back.
            at::Generator cpu_gen = at::detail::getDefaultCPUGenerator();
            at::Tensor cpu_now = cpu_gen.get_state();
            cpu_gen.set_state(ctx->saved_data["rng_cpu"].toTensor());
            at::Tensor dev_now;
            std::optional<at::Generator> dev_gen;
            if (ctx->saved_data.count("rng_dev")) {
                dev_gen = at::globalContext().defaultGenerator(x.device());
                dev_now = dev_gen->get_state();
                dev_gen->set_state(ctx->saved_data["rng_dev"].toTensor());
            }
            struct Restore {
                at::Generator& cpu;
                at::Tensor& cpu_state;
                std::optional<at::Generator>& dev;
                at::Tensor& dev_state;
                ~Restore() {
                    cpu.set_state(cpu_state);
                    if (dev) dev->set_state(dev_state);
                }
            } restore{cpu_gen, cpu_now, dev_gen, dev_now};
            at::AutoGradMode grad_on(true);
            const c10::IValue& mask = ctx->saved_data["mask"];
            out = layer->forward(x, RopeTables{saved[1], saved[2]}, mask.isTensor() ? mask.toTensor() : at::Tensor());
        }
        torch::autograd::backward({out}, {grads[0]});
        return {x.grad(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    }
};

// One missing/unexpected/mis-shaped tensor report for the whole checkpoint, or nothing.
// Returns the view for every table entry.
std::vector<const TensorView*> match_table(const std::vector<WeightEntry>& table, const SafetensorsCheckpoint& ckpt,
                                           const std::string& dir, bool tied) {
    std::vector<const TensorView*> views;
    std::vector<std::string> missing, mismatched;
    std::set<std::string> known;
    for (const WeightEntry& e : table) {
        known.insert(e.hf_name);
        const TensorView* v = ckpt.find(e.hf_name);
        views.push_back(v);
        if (!v) {
            missing.push_back(e.hf_name);
        } else if (!e.param.sizes().equals(v->shape)) {
            mismatched.push_back("'" + e.hf_name + "' in '" + v->file + "' is " + shape_str(v->shape) + ", expected " +
                                 shape_str(e.param.sizes()));
        }
    }
    std::vector<std::string> unexpected;
    for (const std::string& name : ckpt.names()) {
        if (known.count(name)) continue;
        if (tied && name == "lm_head.weight") continue;  // a saved copy of the tied embedding
        if (ends_with(name, ".rotary_emb.inv_freq")) continue;  // buffers some old exports carry
        unexpected.push_back(name);
    }
    if (missing.empty() && unexpected.empty() && mismatched.empty()) return views;
    auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
        return s;
    };
    std::string msg = "model '" + dir + "' does not fit its config.json:";
    if (!missing.empty()) msg += " " + std::to_string(missing.size()) + " missing tensor(s): " + join(missing) + ";";
    if (!unexpected.empty())
        msg += " " + std::to_string(unexpected.size()) + " unexpected tensor(s): " + join(unexpected) + ";";
    if (!mismatched.empty())
        msg += " " + std::to_string(mismatched.size()) + " shape mismatch(es): " + join(mismatched) + ";";
    msg.pop_back();
    throw InputError(msg);
}

// The config for `dir` with the lm_head fallback applied: no lm_head.weight -> tied.
// The sizes config.json declares against the weights' headers, before anything is allocated from
// them: a num_hidden_layers or intermediate_size the files do not have (100000 layers would
// otherwise allocate hundreds of GB, or overflow a size, before the shape check below fails).
void check_config_sizes(const std::string& dir, const ModelConfig& cfg, const SafetensorsCheckpoint& ckpt) {
    auto fail = [&](const std::string& msg) {
        throw InputError("model '" + dir + "': config.json " + msg + " (config.json and the weights disagree)");
    };
    auto expect = [&](const std::string& name, int64_t rows, int64_t cols, const std::string& what) {
        const TensorView* v = ckpt.find(name);
        if (!v) return;  // reported with every other missing tensor by match_table()
        if (v->shape.size() != 2 || v->shape[0] != rows || v->shape[1] != cols)
            fail("says " + what + " (" + std::to_string(rows) + " x " + std::to_string(cols) + "), but '" + name +
                 "' is " + shape_str(v->shape));
    };
    int64_t q_rows = 0, kv_rows = 0;
    if (__builtin_mul_overflow(cfg.n_head, cfg.head_dim, &q_rows) ||
        __builtin_mul_overflow(cfg.n_head_kv, cfg.head_dim, &kv_rows))
        fail("has sizes whose product overflows (num_attention_heads x head_dim)");
    expect("model.embed_tokens.weight", cfg.vocab_size, cfg.hidden_size, "vocab_size x hidden_size");
    const std::string last = "model.layers." + std::to_string(cfg.n_layer - 1) + ".";
    if (!ckpt.find(last + "input_layernorm.weight") && !ckpt.find(last + "self_attn.q_proj.weight"))
        fail("says num_hidden_layers " + std::to_string(cfg.n_layer) + ", but the weights have no layer " +
             std::to_string(cfg.n_layer - 1));
    const std::string more = "model.layers." + std::to_string(cfg.n_layer) + ".";
    if (ckpt.find(more + "input_layernorm.weight") || ckpt.find(more + "self_attn.q_proj.weight"))
        fail("says num_hidden_layers " + std::to_string(cfg.n_layer) + ", but the weights have more layers");
    expect("model.layers.0.self_attn.q_proj.weight", q_rows, cfg.hidden_size, "num_attention_heads x head_dim, hidden_size");
    expect("model.layers.0.self_attn.k_proj.weight", kv_rows, cfg.hidden_size, "num_key_value_heads x head_dim, hidden_size");
    expect("model.layers.0.mlp.gate_proj.weight", cfg.intermediate_size, cfg.hidden_size, "intermediate_size x hidden_size");
}

ModelConfig config_for_checkpoint(const std::string& dir, const SafetensorsCheckpoint& ckpt) {
    ModelConfig cfg = model_config_load(dir);
    check_config_sizes(dir, cfg, ckpt);
    if (!cfg.tie_word_embeddings && !ckpt.find("lm_head.weight")) {
        log_warn("model '%s' has no lm_head.weight: using the input embedding as the output head (tied)", dir.c_str());
        cfg.tie_word_embeddings = true;
    }
    return cfg;
}

}  // namespace

// ---------------------------------------------------------------- modules

RMSNormImpl::RMSNormImpl(int64_t dim, double eps_, const at::TensorOptions& options) : eps(eps_) {
    weight = register_parameter("weight", at::empty({dim}, options));
}

at::Tensor RMSNormImpl::forward(const at::Tensor& x) {
    at::Tensor h = x.to(at::kFloat);                      // [..., dim] fp32
    at::Tensor variance = h.pow(2).mean(-1, /*keepdim=*/true);  // [..., 1]
    h = h * at::rsqrt(variance + eps);
    return weight * h.to(x.scalar_type());
}

DenseImpl::DenseImpl(int64_t in, int64_t out, bool with_bias, const at::TensorOptions& options) {
    weight = register_parameter("weight", at::empty({out, in}, options));
    if (with_bias) bias = register_parameter("bias", at::empty({out}, options));
}

at::Tensor DenseImpl::forward(const at::Tensor& x) {
    at::Tensor y = decode_linear(x, weight, bias);  // [..., out]; at::linear but for CPU decode steps
    return adapter && adapter->enabled ? y + adapter->forward(x) : y;
}

AttentionImpl::AttentionImpl(const ModelConfig& cfg, const at::TensorOptions& options)
    : n_head(cfg.n_head), n_head_kv(cfg.n_head_kv), head_dim(cfg.head_dim) {
    const int64_t d = cfg.hidden_size;
    q_proj = register_module("q_proj", Dense(d, n_head * head_dim, cfg.attention_bias, options));
    k_proj = register_module("k_proj", Dense(d, n_head_kv * head_dim, cfg.attention_bias, options));
    v_proj = register_module("v_proj", Dense(d, n_head_kv * head_dim, cfg.attention_bias, options));
    o_proj = register_module("o_proj", Dense(n_head * head_dim, d, cfg.o_bias, options));
    if (cfg.qk_norm) {
        q_norm = register_module("q_norm", RMSNorm(head_dim, cfg.rms_norm_eps, options));
        k_norm = register_module("k_norm", RMSNorm(head_dim, cfg.rms_norm_eps, options));
    }
}

at::Tensor AttentionImpl::forward(const at::Tensor& x, const RopeTables& rope, const at::Tensor& mask,
                                  KvCache* cache, int64_t layer) {
    const int64_t b = x.size(0), t = x.size(1);
    at::Tensor q = q_proj(x).view({b, t, n_head, head_dim});     // [B, T, H, E]
    at::Tensor k = k_proj(x).view({b, t, n_head_kv, head_dim});  // [B, T, K, E]
    at::Tensor v = v_proj(x).view({b, t, n_head_kv, head_dim});  // [B, T, K, E]
    if (q_norm) {
        q = q_norm(q);
        k = k_norm(k);
    }
    q = apply_rope(q.transpose(1, 2), rope);  // [B, H, T, E]
    k = apply_rope(k.transpose(1, 2), rope);  // [B, K, T, E]
    v = v.transpose(1, 2);                    // [B, K, T, E]
    if (cache) {
        // Append at cache->length; attend over every cached position through the mask.
        const int64_t end = cache->length + t;
        cache->k[layer].narrow(2, cache->length, t).copy_(k);
        cache->v[layer].narrow(2, cache->length, t).copy_(v);
        k = cache->k[layer].narrow(2, 0, end);  // [B, K, L+T, E]
        v = cache->v[layer].narrow(2, 0, end);  // [B, K, L+T, E]
    }
    const double scale = std::pow(static_cast<double>(head_dim), -0.5);
    at::Tensor o;  // [B, H, T, E]
    if (!mask.defined()) {
        // Causal without a mask: flash kernels, GQA handled inside SDPA.
        o = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true, scale,
                                             /*enable_gqa=*/n_head_kv != n_head);
    } else if (cache && x.is_cpu()) {
        // Over the cache on the CPU: the grouped query heads inside SDPA (enable_gqa) instead of
        // repeated keys and values (repeat_kv copies the whole cache every step: 6x slower
        // attention at batch 8).
        o = at::scaled_dot_product_attention(q, k, v, mask, /*dropout_p=*/0.0, /*is_causal=*/false, scale,
                                             /*enable_gqa=*/n_head_kv != n_head);
    } else if (cache && n_head_kv != n_head && t <= kDecodeAttentionMaxQueries) {
        // Decode steps over the cache: grouped query heads read each cached key once.
        o = decode_attention(q, k, v, mask, scale);
    } else {
        // With a mask the memory-efficient kernels need equal head counts: repeat k/v.
        const int64_t rep = n_head / n_head_kv;
        o = at::scaled_dot_product_attention(q, repeat_kv(k, rep), repeat_kv(v, rep), mask, /*dropout_p=*/0.0,
                                             /*is_causal=*/false, scale);
    }
    return o_proj(o.transpose(1, 2).reshape({b, t, n_head * head_dim}));  // [B, T, D]
}

MlpImpl::MlpImpl(const ModelConfig& cfg, const at::TensorOptions& options) {
    gate_proj = register_module("gate_proj", Dense(cfg.hidden_size, cfg.intermediate_size, false, options));
    up_proj = register_module("up_proj", Dense(cfg.hidden_size, cfg.intermediate_size, false, options));
    down_proj = register_module("down_proj", Dense(cfg.intermediate_size, cfg.hidden_size, false, options));
}

at::Tensor MlpImpl::forward(const at::Tensor& x) {
    return down_proj(at::silu(gate_proj(x)) * up_proj(x));  // [B, T, F] inside
}

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& cfg, const at::TensorOptions& options) {
    input_layernorm = register_module("input_layernorm", RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, options));
    self_attn = register_module("self_attn", Attention(cfg, options));
    post_attention_layernorm =
        register_module("post_attention_layernorm", RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, options));
    mlp = register_module("mlp", Mlp(cfg, options));
}

at::Tensor DecoderLayerImpl::forward(const at::Tensor& x, const RopeTables& rope, const at::Tensor& mask,
                                     KvCache* cache, int64_t layer) {
    at::Tensor h = x + self_attn->forward(input_layernorm(x), rope, mask, cache, layer);  // [B, T, D]
    return h + mlp(post_attention_layernorm(h));
}

DecoderImpl::DecoderImpl(const ModelConfig& cfg, const at::TensorOptions& options) : cfg_(cfg) {
    embed_tokens = register_parameter("embed_tokens", at::empty({cfg.vocab_size, cfg.hidden_size}, options));
    layers = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < cfg.n_layer; ++i) {
        layer_list.emplace_back(cfg, options);
        layers->push_back(layer_list.back());
    }
    norm = register_module("norm", RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, options));
    if (!cfg.tie_word_embeddings)
        lm_head = register_module("lm_head", Dense(cfg.hidden_size, cfg.vocab_size, false, options));
    std::tie(inv_freq, attention_scaling) = rope_inv_freq(cfg);
}

RopeTables DecoderImpl::rope(const at::Tensor& position_ids) const {
    if (!inv_freq_on_device_.defined() || inv_freq_on_device_.device() != position_ids.device())
        inv_freq_on_device_ = inv_freq.to(position_ids.device());
    at::Tensor freqs = position_ids.to(at::kFloat).unsqueeze(-1) * inv_freq_on_device_;  // [B, T, E/2]
    at::Tensor emb = at::cat({freqs, freqs}, -1);                                                          // [B, T, E]
    return {(emb.cos() * attention_scaling).unsqueeze(1), (emb.sin() * attention_scaling).unsqueeze(1)};
}

at::Tensor DecoderImpl::forward(const at::Tensor& input_ids, const at::Tensor& attention_mask,
                                const at::Tensor& position_ids, const at::Tensor& segment_ids, KvCache* cache) {
    TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [B, T], got ", input_ids.sizes());
    const int64_t b = input_ids.size(0), t = input_ids.size(1);
    const at::Device device = input_ids.device();
    for (const at::Tensor* side : {&attention_mask, &position_ids, &segment_ids})
        TORCH_CHECK(!side->defined() || side->sizes() == input_ids.sizes(),
                    "attention_mask/position_ids/segment_ids must be [B, T] like input_ids");
    if (cache) return forward_cached(input_ids, attention_mask, position_ids, *cache);

    at::Tensor idx = at::arange(t, at::TensorOptions().dtype(at::kLong).device(device)).unsqueeze(0).expand({b, t});
    at::Tensor pos = position_ids;  // [B, T] int64
    if (!pos.defined() && segment_ids.defined()) {
        // Positions restart at every segment start: t - (index of the segment's first token).
        at::Tensor starts = at::ones({b, t}, at::TensorOptions().dtype(at::kBool).device(device));
        if (t > 1) starts.narrow(1, 1, t - 1).copy_(segment_ids.narrow(1, 1, t - 1) != segment_ids.narrow(1, 0, t - 1));
        at::Tensor first = std::get<0>(at::cummax(at::where(starts, idx, 0), 1));  // [B, T]
        pos = idx - first;
    } else if (!pos.defined()) {
        pos = idx;
    }
    RopeTables rope_tables = rope(pos);

    at::Tensor mask;  // [B, 1, T, T] bool or undefined (plain causal)
    if (attention_mask.defined() || segment_ids.defined()) {
        auto bool_opts = at::TensorOptions().dtype(at::kBool).device(device);
        at::Tensor allowed = at::ones({t, t}, bool_opts).tril().unsqueeze(0);  // [1, T, T]
        if (segment_ids.defined()) allowed = allowed.logical_and(segment_ids.unsqueeze(2) == segment_ids.unsqueeze(1));
        if (attention_mask.defined()) allowed = allowed.logical_and(attention_mask.to(at::kBool).unsqueeze(1));
        // Every query may see itself: padded queries then have a finite (unused) output instead
        // of a fully masked, NaN-producing row; real queries never see a padded key.
        allowed = allowed.logical_or(at::eye(t, bool_opts).unsqueeze(0));
        mask = allowed.expand({b, t, t}).unsqueeze(1);
    }

    at::Tensor x = at::embedding(embed_tokens, input_ids, cfg_.pad_token_id);  // [B, T, D]
    const bool checkpoint = checkpointing_ && at::GradMode::is_enabled();
    if (checkpoint && !x.requires_grad()) x = x.detach().requires_grad_(true);  // so layer params get gradients
    for (size_t i = 0; i < layer_list.size(); ++i) {
        DecoderLayer& layer = layer_list[i];
        if (layer_hooks) layer_hooks->before(static_cast<int64_t>(i));
        if (checkpoint)
            x = LayerCheckpoint::apply(x, rope_tables.cos, rope_tables.sin, &mask, layer.get());
        else
            x = layer->forward(x, rope_tables, mask);
        if (layer_hooks) x = layer_hooks->after(static_cast<int64_t>(i), x);
    }
    return norm(x);
}

at::Tensor DecoderImpl::forward_cached(const at::Tensor& input_ids, const at::Tensor& attention_mask,
                                       const at::Tensor& position_ids, KvCache& cache) {
    const int64_t b = input_ids.size(0), t = input_ids.size(1);
    TORCH_CHECK(!at::GradMode::is_enabled(), "a forward pass with a KV cache runs without gradients");
    TORCH_CHECK(cache.batch() == b, "KV cache holds ", cache.batch(), " rows, input has ", b);
    TORCH_CHECK(cache.length + t <= cache.capacity(), "KV cache full: ", cache.length, " + ", t, " > ",
                cache.capacity());
    const at::Device device = input_ids.device();
    const int64_t end = cache.length + t;
    at::Tensor idx = at::arange(cache.length, end, at::TensorOptions().dtype(at::kLong).device(device));  // [T]
    at::Tensor pos = position_ids.defined() ? position_ids : idx.unsqueeze(0).expand({b, t});  // [B, T]
    cache.real.narrow(1, cache.length, t).copy_(attention_mask.defined() ? attention_mask.to(at::kBool)
                                                                         : at::ones({b, t}, cache.real.options()));
    // Bottom-right causal: query i (absolute position length + i) sees real keys 0..length + i,
    // and itself (a padded query then gets a finite, unused output).
    at::Tensor keys = at::arange(end, idx.options());                                   // [L+T]
    at::Tensor causal = keys.unsqueeze(0) <= idx.unsqueeze(1);                          // [T, L+T]
    at::Tensor self = keys.unsqueeze(0) == idx.unsqueeze(1);                            // [T, L+T]
    at::Tensor mask = causal.unsqueeze(0).logical_and(cache.real.narrow(1, 0, end).unsqueeze(1))
                          .logical_or(self.unsqueeze(0))
                          .unsqueeze(1);  // [B, 1, T, L+T]
    RopeTables rope_tables = rope(pos);
    at::Tensor x = at::embedding(embed_tokens, input_ids, cfg_.pad_token_id);  // [B, T, D]
    for (size_t i = 0; i < layer_list.size(); ++i)
        x = layer_list[i]->forward(x, rope_tables, mask, &cache, static_cast<int64_t>(i));
    cache.length = end;
    return norm(x);
}

at::Tensor DecoderImpl::lm_head_weight() const { return lm_head ? lm_head->weight : embed_tokens; }

at::Tensor DecoderImpl::logits(const at::Tensor& hidden) { return decode_linear(hidden, lm_head_weight()); }

// ---------------------------------------------------------------- name table

namespace {

std::vector<WeightEntry> weight_table_of(const DecoderImpl& model) {
    std::vector<WeightEntry> t;
    t.push_back({"model.embed_tokens.weight", model.embed_tokens});
    for (size_t i = 0; i < model.layer_list.size(); ++i) {
        const DecoderLayerImpl& l = *model.layer_list[i];
        const std::string p = "model.layers." + std::to_string(i) + ".";
        const AttentionImpl& a = *l.self_attn;
        t.push_back({p + "input_layernorm.weight", l.input_layernorm->weight});
        for (auto [name, proj] : {std::pair<const char*, const Dense*>{"q_proj", &a.q_proj}, {"k_proj", &a.k_proj},
                                  {"v_proj", &a.v_proj}, {"o_proj", &a.o_proj}}) {
            t.push_back({p + "self_attn." + name + ".weight", (*proj)->weight});
            if ((*proj)->bias.defined()) t.push_back({p + "self_attn." + name + ".bias", (*proj)->bias});
        }
        if (a.q_norm) {
            t.push_back({p + "self_attn.q_norm.weight", a.q_norm->weight});
            t.push_back({p + "self_attn.k_norm.weight", a.k_norm->weight});
        }
        t.push_back({p + "post_attention_layernorm.weight", l.post_attention_layernorm->weight});
        t.push_back({p + "mlp.gate_proj.weight", l.mlp->gate_proj->weight});
        t.push_back({p + "mlp.up_proj.weight", l.mlp->up_proj->weight});
        t.push_back({p + "mlp.down_proj.weight", l.mlp->down_proj->weight});
    }
    t.push_back({"model.norm.weight", model.norm->weight});
    if (model.lm_head) t.push_back({"lm_head.weight", model.lm_head->weight});
    return t;
}

}  // namespace

std::vector<WeightEntry> decoder_weight_table(const Decoder& model) { return weight_table_of(*model); }

std::vector<std::pair<std::string, Dense>> DecoderImpl::projections() const {
    std::vector<std::pair<std::string, Dense>> out;
    for (size_t i = 0; i < layer_list.size(); ++i) {
        const DecoderLayerImpl& l = *layer_list[i];
        const std::string p = "model.layers." + std::to_string(i) + ".";
        const AttentionImpl& a = *l.self_attn;
        const MlpImpl& m = *l.mlp;
        for (auto [name, proj] : {std::pair<const char*, const Dense*>{"self_attn.q_proj", &a.q_proj},
                                  {"self_attn.k_proj", &a.k_proj}, {"self_attn.v_proj", &a.v_proj},
                                  {"self_attn.o_proj", &a.o_proj}, {"mlp.gate_proj", &m.gate_proj},
                                  {"mlp.up_proj", &m.up_proj}, {"mlp.down_proj", &m.down_proj}})
            out.emplace_back(p + name, *proj);
    }
    return out;
}

std::vector<std::pair<std::string, at::Tensor>> DecoderImpl::trainable_parameters() const {
    std::vector<std::pair<std::string, at::Tensor>> out;
    if (!base_frozen_) {
        for (WeightEntry& e : weight_table_of(*this)) out.emplace_back(std::move(e.hf_name), std::move(e.param));
    }
    for (const auto& [name, proj] : projections())
        if (proj->adapter)
            for (auto& [pname, t] : proj->adapter->parameters()) out.emplace_back(name + "." + pname, t);
    return out;
}

std::vector<std::pair<std::string, at::Tensor>> hf_named_parameters(const Decoder& model) {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (WeightEntry& e : decoder_weight_table(model)) out.emplace_back(std::move(e.hf_name), std::move(e.param));
    return out;
}

void decoder_init_weights(Decoder& model, uint64_t seed, double std) {
    at::NoGradGuard no_grad;
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    for (WeightEntry& e : decoder_weight_table(model)) {
        const std::string& n = e.hf_name;
        const bool is_norm = n.find("norm.weight") != std::string::npos;
        const bool is_bias = ends_with(n, ".bias");
        if (is_norm)
            e.param.fill_(1.0);
        else if (is_bias)
            e.param.zero_();
        else
            e.param.copy_(at::normal(0.0, std, e.param.sizes(), gen, at::TensorOptions().dtype(at::kFloat)));
    }
}

// ---------------------------------------------------------------- load / save

std::string dtype_name(c10::ScalarType dtype) {
    switch (dtype) {
        case at::kFloat: return "float32";
        case at::kBFloat16: return "bfloat16";
        case at::kHalf: return "float16";
        default: throw RuntimeFailure(std::string("unsupported model dtype ") + c10::toString(dtype));
    }
}

c10::ScalarType dtype_from_name(const std::string& name) {
    if (name == "float32") return at::kFloat;
    if (name == "bfloat16") return at::kBFloat16;
    if (name == "float16") return at::kHalf;
    throw RuntimeFailure("unsupported model dtype '" + name + "' (expected float32, bfloat16 or float16)");
}

Decoder model_load(const std::string& dir, c10::ScalarType dtype, c10::Device device) {
    SafetensorsCheckpoint ckpt(dir);
    ModelConfig cfg = config_for_checkpoint(dir, ckpt);
    Decoder model(cfg, at::TensorOptions().dtype(dtype).device(device));
    std::vector<WeightEntry> table = decoder_weight_table(model);
    std::vector<const TensorView*> views = match_table(table, ckpt, dir, cfg.tie_word_embeddings);
    // File by file: map one shard's pages in, copy its tensors, go on (a 64 GB checkpoint never
    // has to be resident at once).
    at::NoGradGuard no_grad;
    for (const auto& f : ckpt.files()) {
        f->prefetch();
        for (size_t i = 0; i < table.size(); ++i)
            if (views[i]->file == f->path()) tensor_copy_from_view(table[i].param, *views[i]);
    }
    log_debug("loaded %s (%zu tensors, %.1f MB) as %s on %s", dir.c_str(), table.size(), ckpt.total_bytes() / 1e6,
              dtype_name(dtype).c_str(), device.str().c_str());
    return model;
}

std::string model_inspect(const std::string& dir) {
    SafetensorsCheckpoint ckpt(dir);
    ModelConfig cfg = config_for_checkpoint(dir, ckpt);
    Decoder model(cfg, at::TensorOptions().dtype(at::kFloat).device(at::kMeta));  // shapes only, no memory
    std::vector<WeightEntry> table = decoder_weight_table(model);
    match_table(table, ckpt, dir, cfg.tie_word_embeddings);
    int64_t n_params = 0;
    for (const WeightEntry& e : table) n_params += e.param.numel();
    std::string s;
    s += strprintf("model        %s\n", dir.c_str());
    s += strprintf("architecture %s (dtype %s)\n", cfg.architecture.c_str(), cfg.torch_dtype.c_str());
    s += strprintf("layers %lld, hidden %lld, intermediate %lld, heads %lld (kv %lld), head_dim %lld\n",
                   (long long)cfg.n_layer, (long long)cfg.hidden_size, (long long)cfg.intermediate_size,
                   (long long)cfg.n_head, (long long)cfg.n_head_kv, (long long)cfg.head_dim);
    s += strprintf("vocab %lld, rope theta %g scaling %s (factor %g), qkv bias %s, qk norm %s, tied %s\n",
                   (long long)cfg.vocab_size, cfg.rope_theta, cfg.rope_scaling.type.c_str(), cfg.rope_scaling.factor,
                   cfg.attention_bias ? "yes" : "no", cfg.qk_norm ? "yes" : "no",
                   cfg.tie_word_embeddings ? "yes" : "no");
    s += strprintf("parameters %.3f M in %zu tensors, %zu file(s), %.1f MB\n", n_params / 1e6, table.size(),
                   ckpt.files().size(), ckpt.total_bytes() / 1e6);
    return s;
}

void model_save_files(const Decoder& model, const std::string& dir, const std::string& tokenizer_dir,
                      c10::ScalarType save_dtype, int64_t max_shard_bytes) {
    const std::string name = dtype_name(save_dtype);
    fs::path tmp = dir;
    std::string config = model_config_to_json(model->config(), name).dump(2) + "\n";
    atomic_write((tmp / "config.json").string(), config);
    safetensors_save_sharded(tmp.string(), hf_named_parameters(model), max_shard_bytes, save_dtype);
    if (!tokenizer_dir.empty()) {
        for (const char* f : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                              "tokenizer.model", "vocab.json", "merges.txt", "added_tokens.json",
                              "chat_template.jinja", "generation_config.json"}) {
            fs::path src = fs::path(tokenizer_dir) / f;
            if (fs::is_regular_file(src)) fs::copy_file(src, tmp / f, fs::copy_options::overwrite_existing);
        }
    }
}

void model_save(const Decoder& model, const std::string& out_dir, const std::string& tokenizer_dir,
                c10::ScalarType save_dtype, int64_t max_shard_bytes) {
    const std::string name = dtype_name(save_dtype);
    fs::path out = fs::absolute(out_dir);
    try {
        // A temporary folder next to `out`, fsynced and renamed onto it (an older folder of that
        // name is replaced) only when complete; removed when anything fails.
        AtomicDir dir(out.string());
        model_save_files(model, dir.path(), tokenizer_dir, save_dtype, max_shard_bytes);
        dir.commit();
    } catch (const fs::filesystem_error& e) {
        throw RuntimeFailure(std::string("saving model to '") + out.string() + "': " + e.what());
    }
    log_info("saved model to %s (%s)", out.string().c_str(), name.c_str());
}

}  // namespace cuset
