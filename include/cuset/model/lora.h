// LoRA adapters with PEFT's semantics and file format (peft.tuners.lora.layer.Linear):
//   y = x W^T (+ b) + scale * B (A dropout(x)),  A [r, in], B [out, r], fp32,
// scale = alpha / r (alpha / sqrt(r) with rslora); A kaiming-uniform(a = sqrt(5)), i.e.
// U(-1/sqrt(in), 1/sqrt(in)), or normal(0, 1/r) ("gaussian"), from the given generator; B = 0.
// The adapter runs in fp32 (its input is cast up, its output cast back to the projection's
// dtype before the add). Dropout applies only while the projection module is in training mode
// (torch::nn::Module::train()/eval()); the trainer puts the model in eval() for evaluation.
// Files (PeftModel.save_pretrained's layout): adapter_config.json and adapter_model.safetensors
// with "base_model.model.model.layers.<i>.<self_attn|mlp>.<proj>.lora_A.weight" [r, in] and
// "...lora_B.weight" [out, r].
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include "cuset/model/model.h"

namespace cuset {

struct LoraOptions {
    int64_t r = 16;
    double alpha = 32.0;
    double dropout = 0.0;
    std::vector<std::string> target_modules = {"q_proj", "k_proj", "v_proj", "o_proj",
                                               "gate_proj", "up_proj", "down_proj"};
    bool rslora = false;
    std::string init = "kaiming";  // kaiming | gaussian

    double scale() const;  // alpha / r, or alpha / sqrt(r) with rslora
};

class LoraAdapter : public DenseAdapter {
public:
    // A and B uninitialised fp32 on `device`; `owner` is the projection (its is_training()
    // switches dropout).
    LoraAdapter(int64_t in, int64_t out, const LoraOptions& options, c10::Device device,
                const torch::nn::Module* owner);
    at::Tensor forward(const at::Tensor& x) override;  // [..., in] -> [..., out], x's dtype
    std::vector<std::pair<std::string, at::Tensor>> parameters() const override;

    at::Tensor A;  // lora_A.weight [r, in] fp32
    at::Tensor B;  // lora_B.weight [out, r] fp32
    double scale;
    double dropout;
    const torch::nn::Module* owner;
};

// Switches every attached adapter of `model` on or off; off, the model computes exactly its base
// (PEFT's disable_adapter()): GRPO's reference policy under LoRA, with no second model in memory.
void lora_set_enabled(Decoder& model, bool enabled);

// The adapters of `model` off for the guard's lifetime, then on again (also when an exception
// leaves the scope).
class LoraDisabled {
public:
    explicit LoraDisabled(Decoder& model) : model_(model) { lora_set_enabled(model_, false); }
    ~LoraDisabled() { lora_set_enabled(model_, true); }
    LoraDisabled(const LoraDisabled&) = delete;
    LoraDisabled& operator=(const LoraDisabled&) = delete;

private:
    Decoder& model_;
};

// Attaches a new adapter to every projection whose last name part is in options.target_modules,
// initialised from `generator` (A drawn on the CPU, so the values do not depend on the device),
// and freezes the base: every weight of the name table gets requires_grad(false) and
// model->set_base_frozen(true). UsageError when adapters are already attached.
void lora_attach(Decoder& model, const LoraOptions& options, at::Generator generator);

// The attached adapters by projection name ("model.layers.0.self_attn.q_proj"), in order.
std::vector<std::pair<std::string, LoraAdapter*>> lora_adapters(const Decoder& model);

// PEFT's adapter_config.json for `options` (peft_type LORA, task_type CAUSAL_LM, ...).
std::string lora_config_json(const LoraOptions& options, const std::string& base_model_name_or_path);
// Reads an adapter folder's adapter_config.json: InputError when it is not a plain LoRA adapter
// cuset can run (another peft_type, bias, DoRA, fan_in_fan_out, rank/alpha patterns, targets
// other than the seven projections, layers_to_transform, ...).
LoraOptions lora_read_config(const std::string& dir);
// base_model_name_or_path of `dir`'s adapter_config.json ("" when absent or null).
std::string lora_base_model(const std::string& dir);
// PEFT's tensor name of one adapter tensor ("base_model.model." + module + ".lora_A.weight").
std::string lora_tensor_name(const std::string& module, const std::string& param);

// Writes adapter_config.json and adapter_model.safetensors (fp32) into the existing folder
// `dir`.
void lora_save(const Decoder& model, const LoraOptions& options, const std::string& dir,
               const std::string& base_model_name_or_path);
// Copies adapter_model.safetensors of `dir` into the attached adapters: every adapter tensor
// must be there with its shape and nothing else (InputError listing what does not match).
void lora_load_weights(Decoder& model, const std::string& dir);

// The model for inference (score, generate): `model_dir` in `dtype` on `device` and, when
// `adapter_dir` is not empty, that PEFT LoRA folder's adapter attached over the frozen base (the
// folder's r, alpha, rslora and targets; dropout 0, since inference never drops). Not merged: the
// adapter runs in fp32 beside the base, as PeftModel does. InputError, with the fix, when
// `model_dir` is itself an adapter folder (adapter_config.json and no config.json).
Decoder model_load_for_inference(const std::string& model_dir, const std::string& adapter_dir, c10::ScalarType dtype,
                                 c10::Device device);

// Folds every adapter into its projection, W <- W + scale * B @ A (computed in fp32, rounded once
// to W's dtype), and detaches the adapters: the plain model gives the same outputs.
void lora_merge(Decoder& model);

// The resident training state, in bytes, that the trainer checks before training (no
// activations): frozen weights in the model dtype (no gradients, masters or moments) and fp32
// adapters with their gradients and two AdamW moments, or for a full fine-tune the weights and
// gradients in the model dtype plus fp32 masters (when not fp32) and the moments.
struct TrainingMemory {
    double weights = 0;          // every base weight (frozen or trained), model dtype
    double gradients = 0;        // model dtype for a full fine-tune; fp32 adapter gradients for LoRA
    double optimizer = 0;        // fp32 masters (full fine-tune in 16-bit) + AdamW's two moments
    double adapters = 0;         // fp32 adapter weights (0 without LoRA)
    int64_t n_trainable = 0;     // elements the optimizer trains
    int64_t n_frozen = 0;        // frozen base elements (0 for a full fine-tune)
    double total() const { return weights + gradients + optimizer + adapters; }
};
// Elements of the base (name table) and of the adapters `options` would attach to `cfg`.
int64_t lora_base_numel(const ModelConfig& cfg);
int64_t lora_adapter_numel(const ModelConfig& cfg, const LoraOptions& options);
TrainingMemory training_memory(const ModelConfig& cfg, c10::ScalarType dtype, const LoraOptions* lora);
// A rough peak-activation figure (bytes) for one micro-batch of `batch` x `seq` tokens with
// activation checkpointing: every layer's input kept (B T D, model dtype), one layer's
// recomputation live (about 34 B T D + 5 B T F bytes-equivalents in 16-bit, plus its attention
// with a fused kernel), and the chunked loss (objective.chunk_size tokens x V fp32 logits x 3).
double activation_memory_checkpointed(const ModelConfig& cfg, c10::ScalarType dtype, int64_t batch, int64_t seq,
                                      int64_t loss_chunk);

// The identity of a base model with a PEFT LoRA adapter folder attached (core/hash.h's
// hash_model_dir of both, and the adapter's adapter_config.json); `adapter_dir` empty: the base's
// own hash. Another model than the base, whose scores must not pass for the base's.
std::string hash_model_with_adapter(const std::string& model_dir, const std::string& adapter_dir);

}  // namespace cuset
