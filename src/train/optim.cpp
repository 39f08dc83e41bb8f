// AdamW (torch.optim.AdamW single-tensor semantics) over fp32 master weights, gradient clipping,
// learning-rate schedules.
#include "cuset/train/optim.h"

#include <cmath>

#include <ATen/ATen.h>

#include "cuset/core/error.h"

namespace cuset {

AdamW::AdamW(std::vector<OptimParam> params, AdamWOptions opts)
    : params_(std::move(params)), opts_(opts) {
    at::NoGradGuard no_grad;
    for (const OptimParam& p : params_) {
        at::Tensor master = p.param.scalar_type() == at::kFloat
                                ? p.param
                                : p.param.detach().to(at::kFloat).clone();
        master_.push_back(master);
        exp_avg_.push_back(at::zeros_like(master));
        exp_avg_sq_.push_back(at::zeros_like(master));
    }
}

void AdamW::zero_grad() {
    for (OptimParam& p : params_) {
        at::Tensor g = p.param.mutable_grad();
        if (g.defined()) g.zero_();
    }
}

void AdamW::step(double lr) {
    at::NoGradGuard no_grad;
    ++step_;
    const double bias_correction1 = 1.0 - std::pow(opts_.beta1, double(step_));
    const double bias_correction2 = 1.0 - std::pow(opts_.beta2, double(step_));
    const double step_size = lr / bias_correction1;
    const double bias_correction2_sqrt = std::sqrt(bias_correction2);
    for (size_t i = 0; i < params_.size(); ++i) {
        const OptimParam& p = params_[i];
        at::Tensor grad = p.param.grad();
        if (!grad.defined()) continue;
        if (grad.scalar_type() != at::kFloat) grad = grad.to(at::kFloat);
        at::Tensor& w = master_[i];           // [shape] fp32
        at::Tensor& m = exp_avg_[i];          // [shape] fp32
        at::Tensor& v = exp_avg_sq_[i];       // [shape] fp32
        const double wd = p.decay ? opts_.weight_decay : 0.0;
        // Same operation order as torch.optim.AdamW's single-tensor path, so fp32 results agree
        // to rounding.
        if (wd != 0.0) w.mul_(1.0 - lr * wd);
        m.lerp_(grad, 1.0 - opts_.beta1);
        v.mul_(opts_.beta2).addcmul_(grad, grad, 1.0 - opts_.beta2);
        at::Tensor denom = (v.sqrt() / bias_correction2_sqrt).add_(opts_.eps);
        w.addcdiv_(m, denom, -step_size);
        if (!w.is_same(p.param)) p.param.copy_(w);
    }
}

std::vector<std::pair<std::string, at::Tensor>> AdamW::state_tensors() const {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (size_t i = 0; i < params_.size(); ++i) {
        const std::string& n = params_[i].name;
        out.emplace_back(n + ".exp_avg", exp_avg_[i]);
        out.emplace_back(n + ".exp_avg_sq", exp_avg_sq_[i]);
        if (!master_[i].is_same(params_[i].param)) out.emplace_back(n + ".master", master_[i]);
    }
    return out;
}

void AdamW::load_state(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                       int64_t step) {
    at::NoGradGuard no_grad;
    auto find = [&](const std::string& key) -> const at::Tensor* {
        for (const auto& kv : tensors)
            if (kv.first == key) return &kv.second;
        return nullptr;
    };
    auto restore = [&](const std::string& key, at::Tensor& dst) {
        const at::Tensor* src = find(key);
        if (!src) throw InputError("optimizer state: tensor '" + key + "' is missing");
        if (src->sizes() != dst.sizes())
            throw InputError("optimizer state: tensor '" + key + "' has shape " +
                             c10::str(src->sizes()) + ", expected " + c10::str(dst.sizes()));
        dst.copy_(*src);
    };
    for (size_t i = 0; i < params_.size(); ++i) {
        const std::string& n = params_[i].name;
        restore(n + ".exp_avg", exp_avg_[i]);
        restore(n + ".exp_avg_sq", exp_avg_sq_[i]);
        if (!master_[i].is_same(params_[i].param)) {
            restore(n + ".master", master_[i]);
            params_[i].param.copy_(master_[i]);
        }
    }
    step_ = step;
}

double gradients_clip(const std::vector<at::Tensor>& params, double max_norm) {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> norms;
    for (const at::Tensor& p : params) {
        const at::Tensor& g = p.grad();
        if (g.defined()) norms.push_back(g.to(at::kFloat).norm(2));  // [] fp32
    }
    if (norms.empty()) return 0.0;
    // One host sync per step for the norm (needed to decide on clipping and to log it).
    double total = at::stack(norms).norm(2).item<double>();
    if (max_norm > 0.0 && std::isfinite(total)) {
        double coef = max_norm / (total + 1e-6);
        if (coef < 1.0)
            for (const at::Tensor& p : params) {
                at::Tensor g = p.grad();
                if (g.defined()) g.mul_(coef);
            }
    }
    return total;
}

bool decays_by_default(const std::string& name, const at::Tensor& param) {
    return param.dim() >= 2 && name.find("norm") == std::string::npos;
}

double lr_multiplier(const ScheduleOptions& s, int64_t step) {
    if (s.warmup_steps > 0 && step < s.warmup_steps)
        return double(step + 1) / double(s.warmup_steps);
    if (s.kind == "constant") return 1.0;
    int64_t span = std::max<int64_t>(1, s.total_steps - 1 - s.warmup_steps);
    double progress = std::min(1.0, std::max(0.0, double(step - s.warmup_steps) / double(span)));
    if (s.kind == "linear") return 1.0 - (1.0 - s.min_lr_ratio) * progress;
    if (s.kind == "cosine")
        return s.min_lr_ratio + (1.0 - s.min_lr_ratio) * 0.5 * (1.0 + std::cos(M_PI * progress));
    throw UsageError("config error: key 'train.schedule' has unknown value '" + s.kind + "'");
}

}  // namespace cuset
