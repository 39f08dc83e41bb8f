// `cuset-train --dry-run` (train/dry_run.h).
#include "cuset/train/dry_run.h"

#include <optional>
#include <string>

#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/data/data.h"
#include "cuset/data/dataset.h"
#include "cuset/model/device.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "cuset/model/model_config.h"
#include "cuset/train/distributed.h"  // dist_env_from_environment (the launcher's world size)
#include "cuset/train/memory_plan.h"

namespace cuset {

namespace {

// The per-rank plan of a full fine-tune under `setup`, and for every ZeRO stage on 8 ranks, the
// usual node.
void log_zero_plans(const MemoryCounts& counts, const MemorySetup& setup, const MemoryPlan& plan) {
    const ShardBytes& z = plan.shard;
    log_info("memory plan per rank (ZeRO stage %lld%s, %lld rank(s)): weights %.2f + gradients %.2f + fp32 masters "
             "%.2f + AdamW moments %.2f = %.2f GB on the device%s",
             (long long)setup.zero_stage, setup.offload ? ", optimizer offloaded" : "", (long long)setup.world,
             z.weights / 1e9, z.gradients / 1e9, z.masters / 1e9, z.moments / 1e9, z.device_total() / 1e9,
             z.host > 0 ? strprintf(", %.2f GB in CPU memory", z.host / 1e9).c_str() : "");
    auto on_8 = [&](int64_t stage, bool offload) {
        MemorySetup e = setup;
        e.world = 8;
        e.zero_stage = stage;
        e.offload = offload;
        return memory_plan(counts, e).shard.device_total() / 1e9;
    };
    std::string row;
    for (int64_t st = 0; st <= 3; ++st) row += strprintf("%sstage %lld %.1f", st ? ", " : "", (long long)st, on_8(st, false));
    log_info("memory plan per rank on 8 ranks (GB): %s; stage 3 + offload %.1f", row.c_str(), on_8(3, true));
}

// With activation checkpointing: the activations of one micro-batch of data.max_seq_len tokens
// added to the resident state, and the GPU that takes them.
void log_activations(const TrainOptions& opts, const ModelConfig& mc, double state) {
    if (!opts.model.activation_checkpointing) {
        log_info("memory estimate: activations not estimated (only with model.activation_checkpointing)");
        return;
    }
    const double act = activation_memory_checkpointed(mc, opts.runtime.dtype, opts.train.micro_batch_size,
                                                      opts.data.max_seq_len, opts.objective.chunk_size);
    const double need = state + act;
    // The trainer's own margin: it refuses a resident state above kMemoryMargin of the GPU.
    const char* fits = need <= kMemoryMargin * 24e9 ? "fits one 24 GB GPU"
                       : need <= kMemoryMargin * 48e9 ? "needs a 48 GB GPU"
                       : need <= kMemoryMargin * 80e9 ? "needs an 80 GB GPU"
                       : need <= kMemoryMargin * 141e9 ? "needs a 141 GB GPU"
                                                       : "does not fit one GPU";
    log_info("memory estimate: activations %.2f GB (micro-batch %lld x %lld tokens, checkpointed, loss chunk %lld); "
             "total %.1f GB: %s", act / 1e9, (long long)opts.train.micro_batch_size, (long long)opts.data.max_seq_len,
             (long long)opts.objective.chunk_size, need / 1e9, fits);
}

// The memory estimate from config.json alone (no weights read): the breakdown by kind
// (model/lora.h), the trainer's memory plan (train/memory_plan.h) per rank under ZeRO on the
// launcher's world size (1 without torchrun), and the activations.
void log_memory_estimate(const TrainOptions& opts) {
    ModelConfig mc;
    try {
        mc = model_config_load(opts.model.path);
    } catch (const InputError&) {
        return;  // model_inspect() reports it
    }
    const c10::ScalarType dtype = opts.runtime.dtype;  // the run's (the same rule, resolved once)
    std::optional<LoraOptions> lora;
    if (opts.model.lora) lora = opts.lora;
    const TrainingMemory m = training_memory(mc, dtype, lora ? &*lora : nullptr);
    std::string what = lora ? strprintf("LoRA r %lld on %zu projection kinds: %.1fM trainable, %.2fB frozen",
                                        (long long)lora->r, lora->target_modules.size(), m.n_trainable / 1e6, m.n_frozen / 1e9)
                            : strprintf("full fine-tune: %.2fB trainable", m.n_trainable / 1e9);
    log_info("memory estimate (%s, %s): resident training state %.2f GB = weights %.2f + gradients %.2f + "
             "optimizer %.2f + adapters %.2f GB", what.c_str(), dtype_name(dtype).c_str(), m.total() / 1e9,
             m.weights / 1e9, m.gradients / 1e9, m.optimizer / 1e9, m.adapters / 1e9);
    int64_t world = 1;
    try {
        world = dist_env_from_environment().world;
    } catch (const Error&) {
    }
    const MemoryCounts counts = memory_counts_of(mc, lora ? &*lora : nullptr);
    const MemorySetup setup = memory_setup_of(opts, world);
    const MemoryPlan plan = memory_plan(counts, setup);
    if (plan.reference > 0) log_info("memory estimate: frozen asft reference model %.2f GB", plan.reference / 1e9);
    if (!lora) log_zero_plans(counts, setup, plan);
    log_activations(opts, mc, plan.resident);
}

}  // namespace

void train_dry_run(const TrainOptions& opts) {
    log_info("the run would compute on device %s | dtype %s", opts.runtime.device.str().c_str(),
             dtype_name(opts.runtime.dtype).c_str());
    log_memory_estimate(opts);
    std::string summary = model_inspect(opts.model.path);
    log_info("model %s is readable:\n%s", opts.model.path.c_str(), summary.c_str());
    TextPipeline pipe = text_pipeline_from(opts.text);
    log_info("tokenizer %s (%s, %lld tokens) | chat format %s", pipe.tokenizer->source().c_str(),
             pipe.tokenizer->backend().c_str(), (long long)pipe.tokenizer->vocab_size(), pipe.formatter->name().c_str());
    const DataLoadOptions& lo = pipe.load;
    if (opts.steps) log_info("steps: %s", opts.steps->name().c_str());  // its own data, read already
    for (const std::string& f : {opts.data.train, opts.data.eval}) {
        if (f.empty() || opts.steps) continue;
        LoadReport rep;
        data_load_jsonl(f, lo, &rep);
        log_info("data %s: %lld samples (%lld lines, %lld skipped)", f.c_str(), (long long)rep.loaded,
                 (long long)rep.lines, (long long)rep.skipped);
    }
    log_info("run folder would be %s; configuration hash %s", opts.run.dir.c_str(), opts.run.config_hash.c_str());
}

}  // namespace cuset
