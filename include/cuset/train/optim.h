// AdamW with fp32 master weights and moments, global-norm gradient clipping and the learning-rate
// schedules. Semantics follow torch.optim.AdamW (single-tensor path) and
// torch.nn.utils.clip_grad_norm_; tests compare against them. No other optimizers on purpose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace cuset {

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

class AdamW {
public:
    // Master copies are made (fp32) for parameters whose dtype is not fp32; fp32 parameters are
    // updated in place and serve as their own master.
    AdamW(std::vector<OptimParam> params, AdamWOptions opts);

    // One update with learning rate `lr` from the parameters' current .grad() (model dtype; read
    // in fp32). Parameters without a gradient are skipped, as torch does.
    void step(double lr);
    void zero_grad();

    int64_t step_count() const { return step_; }
    const std::vector<OptimParam>& params() const { return params_; }

    // State for checkpoints: names "<param>.exp_avg", "<param>.exp_avg_sq" and, for non-fp32
    // parameters, "<param>.master"; all fp32 [same shape as the parameter].
    std::vector<std::pair<std::string, at::Tensor>> state_tensors() const;
    // Restores state written by state_tensors() (copies into the existing tensors; shapes
    // checked, InputError naming the tensor otherwise) and the step counter.
    void load_state(const std::vector<std::pair<std::string, at::Tensor>>& tensors, int64_t step);

private:
    std::vector<OptimParam> params_;
    std::vector<at::Tensor> master_;   // [param shape] fp32; aliases param when it is fp32
    std::vector<at::Tensor> exp_avg_;  // [param shape] fp32
    std::vector<at::Tensor> exp_avg_sq_;
    AdamWOptions opts_;
    int64_t step_ = 0;
};

// Global L2 norm of all gradients, computed in fp32; when max_norm > 0 and the norm exceeds it,
// scales every gradient by max_norm / (norm + 1e-6), as torch.nn.utils.clip_grad_norm_.
// Returns the norm before clipping (may be inf/nan: the caller skips such steps).
double gradients_clip(const std::vector<at::Tensor>& params, double max_norm);

// Weight decay applies to matrices; by default not to norms or biases (1-D tensors).
bool decays_by_default(const std::string& name, const at::Tensor& param);

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
