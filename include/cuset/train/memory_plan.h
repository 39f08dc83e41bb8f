// The memory plan of a training run: what one rank keeps resident on its device between steps
// (a full fine-tune's weights, gradients, fp32 masters and AdamW moments under its ZeRO stage; a
// LoRA run's frozen base and fp32 adapters with their state; the frozen asft reference model),
// computed before anything is allocated. The trainer checks it against the GPU at start-up from
// the model it loaded; the dry run prints it from config.json alone. Activations are not in it
// (activation_memory_checkpointed in model/lora.h estimates those).
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/ScalarType.h>

#include "cuset/model/lora.h"
#include "cuset/model/model_config.h"
#include "cuset/train/zero.h"

namespace cuset {

// The trainer refuses a resident state above this share of the GPU's memory.
constexpr double kMemoryMargin = 0.97;

// Elements of the model by what the plan does with them.
struct MemoryCounts {
    double trainable = 0;  // what the optimizer trains (the adapters with LoRA)
    double whole = 0;      // of a full fine-tune's, what ZeRO stage 3 keeps whole (embeddings, final norm, lm_head)
    double frozen = 0;     // the frozen base of a LoRA run (0 for a full fine-tune)
};

// The counts of `cfg`'s model from config.json alone, with `lora`'s adapters when not null.
MemoryCounts memory_counts_of(const ModelConfig& cfg, const LoraOptions* lora);

struct MemorySetup {
    c10::ScalarType dtype = c10::ScalarType::Float;  // the model dtype
    bool lora = false;
    bool reference = false;  // asft: a frozen copy of the initial model on the same device
    int64_t world = 1;
    int64_t zero_stage = 0;
    bool offload = false;    // distributed.offload_optimizer
};

// Bytes, per rank.
struct MemoryPlan {
    ShardBytes shard;      // a full fine-tune's weights, gradients, masters, moments (zero_plan)
    double frozen = 0;     // LoRA: the frozen base, model dtype
    double adapters = 0;   // LoRA: fp32 adapters with their gradients and two moments (16 bytes an element)
    double reference = 0;  // asft: the frozen reference model, model dtype
    double resident = 0;   // on the device: all of the above but what is offloaded (shard.host)
};
MemoryPlan memory_plan(const MemoryCounts& n, const MemorySetup& s);

// The start-up log line of a plan ("resident training state ..."); `total` > 0: the device's
// memory, named `device`.
std::string memory_plan_text(const MemoryPlan& plan, const MemorySetup& s, double total, const std::string& device);

// RuntimeFailure when plan.resident exceeds kMemoryMargin of `total` bytes (the memory of
// `device`; total <= 0: unknown, nothing is checked), naming as the fix the least ZeRO sharding,
// from the configured one on, whose plan fits.
void memory_plan_check(const MemoryPlan& plan, const MemoryCounts& n, const MemorySetup& s, double total,
                       const std::string& device);

}  // namespace cuset
