// The memory plan of a training run (train/memory_plan.h): resident bytes per rank, their log
// line and the check against the device.
#include "cuset/train/memory_plan.h"

#include <utility>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

MemoryCounts memory_counts_of(const ModelConfig& cfg, const LoraOptions* lora) {
    MemoryCounts n;
    const int64_t base = lora_base_numel(cfg);
    if (lora) {
        n.trainable = static_cast<double>(lora_adapter_numel(cfg, *lora));
        n.frozen = static_cast<double>(base);
    } else {
        n.trainable = static_cast<double>(base);
        n.whole = static_cast<double>(cfg.vocab_size * cfg.hidden_size * (cfg.tie_word_embeddings ? 1 : 2) +
                                      cfg.hidden_size);
    }
    return n;
}

MemoryPlan memory_plan(const MemoryCounts& n, const MemorySetup& s) {
    MemoryPlan p;
    const double b = static_cast<double>(c10::elementSize(s.dtype));
    if (s.reference) p.reference = (s.lora ? n.frozen : n.trainable) * b;
    if (s.lora) {
        p.frozen = n.frozen * b;
        p.adapters = n.trainable * 16.0;
        p.resident = p.frozen + p.adapters + p.reference;
    } else {
        p.shard = zero_plan(n.trainable, n.whole, b, s.world, s.zero_stage, s.offload);
        p.resident = p.shard.device_total() + p.reference;
    }
    return p;
}

std::string memory_plan_text(const MemoryPlan& p, const MemorySetup& s, double total, const std::string& device) {
    const std::string ref = p.reference > 0 ? strprintf(", frozen asft reference model %.1f GB", p.reference / 1e9) : "";
    const std::string of = total > 0 ? strprintf(" of %.1f GB on %s", total / 1e9, device.c_str()) : "";
    if (s.lora)
        return strprintf("resident training state: %.1f GB (frozen weights %.1f GB, fp32 LoRA adapters + gradients + "
                         "AdamW moments %.3f GB)%s%s", p.resident / 1e9, p.frozen / 1e9, p.adapters / 1e9, ref.c_str(),
                         of.c_str());
    const ShardBytes& z = p.shard;
    return strprintf("resident training state per rank: %.2f GB = weights %.2f + gradients %.2f + fp32 masters %.2f + "
                     "AdamW moments %.2f GB%s (ZeRO stage %lld over %lld rank(s)%s)%s%s",
                     p.resident / 1e9, z.weights / 1e9, z.gradients / 1e9, z.masters / 1e9, z.moments / 1e9,
                     z.host > 0 ? strprintf("; %.2f GB in CPU memory", z.host / 1e9).c_str() : "",
                     (long long)s.zero_stage, (long long)s.world, s.offload ? ", optimizer offloaded" : "", ref.c_str(),
                     of.c_str());
}

void memory_plan_check(const MemoryPlan& plan, const MemoryCounts& n, const MemorySetup& s, double total,
                       const std::string& device) {
    if (!(total > 0) || plan.resident <= kMemoryMargin * total) return;
    std::string hint = "use a smaller model or GPUs with more memory";
    // The least sharding that fits, from the one configured on.
    const std::pair<int64_t, bool> ladder[] = {{1, false}, {2, false}, {3, false}, {2, true}, {3, true}};
    if (!s.lora)
        for (const auto& [stage, offload] : ladder) {
            if (stage < s.zero_stage || (stage == s.zero_stage && offload <= s.offload)) continue;
            MemorySetup t = s;
            t.zero_stage = stage;
            t.offload = offload;
            const double need = memory_plan(n, t).resident;
            if (need > kMemoryMargin * total) continue;
            hint = strprintf("set distributed.zero_stage=%lld%s (%.1f GB per rank on %lld rank(s))", (long long)stage,
                             offload ? " and distributed.offload_optimizer=true" : "", need / 1e9, (long long)s.world);
            break;
        }
    throw RuntimeFailure(strprintf("the model's training state needs %.1f GB per rank but %s has %.1f GB; %s",
                                   plan.resident / 1e9, device.c_str(), total / 1e9, hint.c_str()));
}

}  // namespace cuset
