// ZeRO: AdamW whose training state is sharded over the data-parallel ranks (train/comm.h's
// collectives; c10d NCCL on GPUs, Gloo on CPUs). The trainable parameters are grouped into
// buckets, each flattened and padded to a multiple of the world size; rank r owns part r of every
// bucket (llm.c's layout, per bucket):
//   stage 1: fp32 masters and AdamW moments of the shard only; gradients reduce-scattered into
//            the shard instead of all-reduced; each rank updates its shard and the updated weights
//            are all-gathered (in the model dtype);
//   stage 2: as 1, and the reduce-scatter runs during every backward pass (every rank runs as
//            many, train_step's lockstep), adding into the fp32 shard: a bucket's whole gradients
//            are freed as soon as they are packed, so they never outlive a backward pass;
//   stage 3: as 2, and the weights too: one bucket per decoder layer whose weights are gathered
//            just before its forward (the next layer's gather already under way) and again before
//            its backward, and freed after each; embeddings, final norm and lm_head stay whole
//            (they are live through every micro-batch's forward and backward anyway).
// offload: the shard's masters and moments live in (pinned) CPU memory and AdamW runs there.
// The step's semantics are stage 0's: same denominator, global-norm clipping over all shards,
// same AdamW arithmetic per element, so results agree to fp32 summation order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuset/model/model.h"
#include "cuset/train/comm.h"
#include "cuset/train/optim.h"

namespace cuset {

struct ZeroOptions {
    int64_t stage = 1;                // 1, 2 or 3
    bool offload = false;             // masters, moments and the update on the CPU
    int64_t bucket_bytes = 25 << 20;  // stages 1-2: fp32 bytes of gradient per reduce-scatter
};

// Bytes one rank holds between steps, by kind (what the start-up plan prints).
struct ShardBytes {
    double weights = 0, gradients = 0, masters = 0, moments = 0;  // on the device
    double host = 0;                                              // offloaded to CPU memory
    double device_total() const { return weights + gradients + masters + moments; }
};

// The per-rank plan for `n_params` trainable parameters of which `n_whole` stay whole at stage 3
// (embeddings, final norm, lm_head), in a model dtype of `dtype_bytes` bytes.
ShardBytes zero_plan(double n_params, double n_whole, double dtype_bytes, int64_t world, int64_t stage,
                     bool offload);

class ZeroAdamW : public Optimizer {
public:
    // `params` are the same list (names, shapes, values) on every rank. Stage 3 needs `model`
    // (its layer hooks are set here and removed by the destructor) and parameter names
    // "model.layers.<i>." for the per-layer buckets.
    ZeroAdamW(std::vector<OptimParam> params, AdamWOptions opts, const Comm& comm, ZeroOptions zo,
              Decoder model = nullptr);
    ~ZeroAdamW() override;

    const std::vector<OptimParam>& params() const override { return params_; }
    void zero_grad() override;
    void backward_begin(const Comm& comm, bool last) override;
    void sum_grads(const Comm& comm) override;
    void scale_grads(double factor) override;
    double clip_grads(const Comm& comm, double max_norm) override;
    void step(double lr) override;
    int64_t step_count() const override { return step_; }
    bool lockstep() const override { return zo_.stage >= 2 && world_ > 1; }
    // This rank's shard: "<param>.exp_avg@<k>" (elements k.. of the flattened parameter), and
    // "<param>.master@<k>" for non-fp32 parameters.
    std::vector<std::pair<std::string, at::Tensor>> state_tensors() const override;
    void load_state(const StateReader& read, int64_t step) override;

    // Stage 3: every weight whole on this rank (every rank must call it; for saving the model) and
    // back to shards. No-ops at stages 1-2.
    void gather_all();
    void release_all();

    int64_t stage() const { return zo_.stage; }
    // What this rank holds now, measured from the tensors' storages.
    ShardBytes resident() const;

    struct Impl;

private:
    std::vector<OptimParam> params_;
    AdamWOptions opts_;
    ZeroOptions zo_;
    int64_t step_ = 0;
    int64_t world_ = 1;
    std::shared_ptr<Impl> impl_;
};

}  // namespace cuset
