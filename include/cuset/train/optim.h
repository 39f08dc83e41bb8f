// AdamW with fp32 master weights and moments, global-norm gradient clipping and the learning-rate
// schedules. Semantics follow torch.optim.AdamW (single-tensor path) and
// torch.nn.utils.clip_grad_norm_; tests compare against them. No other optimizers on purpose.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace cuset {

struct Comm;
class Decoder;
struct ZeroOptions;

struct AdamWOptions {
    double lr = 1e-3;  // peak; the schedule scales it per step
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 0.0;
};

// One trainable tensor as the optimizer sees it.
struct OptimParam {
    std::string name;   // Hugging Face tensor name (checkpoint key)
    at::Tensor param;   // the model's parameter (model dtype, on the device)
    bool decay = true;  // weight decay applies
};

// Where a resumed optimizer reads its state, whatever layout wrote it (one file of whole
// tensors, or one shard file per rank): elements [begin, begin + len) of the flattened state
// tensor `key` ("<param>.exp_avg", "<param>.exp_avg_sq", "<param>.master") as fp32 [len] on the
// CPU, or an undefined tensor when the checkpoint has no such key (InputError when it has the key
// but not every element of the range, or a whole tensor of another size than `numel`, the
// parameter's).
using StateReader =
    std::function<at::Tensor(const std::string& key, int64_t numel, int64_t begin, int64_t len)>;

// The optimizer as train_step drives it. Besides the update it owns the step's gradient path:
// the sum over ranks (all-reduce of whole gradients, or reduce-scatter into shards with ZeRO,
// train/zero.h), normalisation, the global norm and clipping.
class Optimizer {
public:
    virtual ~Optimizer() = default;

    virtual const std::vector<OptimParam>& params() const = 0;
    virtual void zero_grad() = 0;
    // Around the step's last backward pass (the gradient sum may overlap it).
    virtual void backward_begin(const Comm& comm, bool last);
    // Completes the gradient sum over ranks (every rank, once per step, after all backward passes).
    virtual void sum_grads(const Comm& comm);
    virtual void scale_grads(double factor);
    // Global L2 norm of the summed gradients before clipping (every rank gets the same value);
    // clips to max_norm when max_norm > 0, as torch.nn.utils.clip_grad_norm_.
    virtual double clip_grads(const Comm& comm, double max_norm);
    // One update with learning rate `lr` from the summed, normalised, clipped gradients.
    virtual void step(double lr) = 0;
    virtual int64_t step_count() const = 0;

    // This rank's part of the state for checkpoints (fp32 tensors; names as StateReader's keys,
    // a shard's elements from offset k of its tensor named "<key>@<k>").
    virtual std::vector<std::pair<std::string, at::Tensor>> state_tensors() const = 0;
    // Restores the state this rank needs from any layout, and the step counter.
    virtual void load_state(const StateReader& read, int64_t step) = 0;

    // Every pass (forward, backward) takes part in collectives, so every rank must run as many
    // (train/train_step.h lockstep_rounds, null_pass).
    virtual bool lockstep() const { return false; }

    // Whole tensors of the gradients as the step sees them (every parameter's .grad()).
    std::vector<at::Tensor> param_tensors() const;
};

class AdamW : public Optimizer {
public:
    // Master copies are made (fp32) for parameters whose dtype is not fp32; fp32 parameters are
    // updated in place and serve as their own master.
    AdamW(std::vector<OptimParam> params, AdamWOptions opts);

    // One update with learning rate `lr` from the parameters' current .grad() (model dtype; read
    // in fp32). Parameters without a gradient are skipped, as torch does.
    void step(double lr) override;
    void zero_grad() override;

    int64_t step_count() const override { return step_; }
    const std::vector<OptimParam>& params() const override { return params_; }

    // State for checkpoints: names "<param>.exp_avg", "<param>.exp_avg_sq" and, for non-fp32
    // parameters, "<param>.master"; all fp32 [same shape as the parameter].
    std::vector<std::pair<std::string, at::Tensor>> state_tensors() const override;
    // Restores state written by state_tensors() (copies into the existing tensors; shapes
    // checked, InputError naming the tensor otherwise) and the step counter.
    void load_state(const std::vector<std::pair<std::string, at::Tensor>>& tensors, int64_t step);
    void load_state(const StateReader& read, int64_t step) override;

private:
    std::vector<OptimParam> params_;
    std::vector<at::Tensor> master_;   // [param shape] fp32; aliases param when it is fp32
    std::vector<at::Tensor> exp_avg_;  // [param shape] fp32
    std::vector<at::Tensor> exp_avg_sq_;
    AdamWOptions opts_;
    int64_t step_ = 0;
};

// A StateReader over tensors held in memory: whole tensors named "<key>" and shards named
// "<key>@<offset>" (what state_tensors() of any layout returns).
StateReader state_reader_of(const std::vector<std::pair<std::string, at::Tensor>>& tensors);

// Global L2 norm of all gradients, computed in fp32; when max_norm > 0 and the norm exceeds it,
// scales every gradient by max_norm / (norm + 1e-6), as torch.nn.utils.clip_grad_norm_.
// Returns the norm before clipping (may be inf/nan: the caller skips such steps).
double gradients_clip(const std::vector<at::Tensor>& params, double max_norm);

// Weight decay applies to matrices; by default not to norms or biases (1-D tensors).
bool decays_by_default(const std::string& name, const at::Tensor& param);

// The optimizer of a run over `params` of `model`: AdamW over replicas at zero.stage 0, ZeroAdamW
// (train/zero.h, sharded over the ranks of `comm`) at stages 1-3. UsageError for zero.offload at
// stage 0.
std::unique_ptr<Optimizer> make_optimizer(std::vector<OptimParam> params, const AdamWOptions& adam,
                                          const ZeroOptions& zero, const Comm& comm, Decoder& model);

// Named trainable tensors (Decoder::trainable_parameters()) as optimizer parameters, each set to
// require gradients; decayed by decays_by_default, or all of them with decay_all
// (train.decay_norm_and_bias).
std::vector<OptimParam> optim_params_of(const std::vector<std::pair<std::string, at::Tensor>>& named,
                                        bool decay_all = false);

struct ScheduleOptions {
    std::string kind = "cosine";  // constant | linear | cosine
    int64_t warmup_steps = 0;
    int64_t total_steps = 1;
    double min_lr_ratio = 0.0;
};

// Multiplier of the peak lr for the update of 0-based step `step`: linear warmup
// (step + 1) / warmup_steps over the first warmup_steps updates, then constant, or a linear or
// cosine decay from 1 to min_lr_ratio reached at the last step.
double lr_multiplier(const ScheduleOptions& s, int64_t step);

}  // namespace cuset
