// AdamW (torch.optim.AdamW single-tensor semantics) over fp32 master weights, gradient clipping,
// learning-rate schedules.
#include "cuset/train/optim.h"

#include <cmath>
#include <map>

#include <ATen/ATen.h>

#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/train/comm.h"
#include "cuset/train/objective.h"  // gradients_scale
#include "cuset/train/zero.h"       // make_optimizer's ZeroAdamW

namespace cuset {

void Optimizer::backward_begin(const Comm& comm, bool last) {
    if (last) comm.grads_will_be_final(param_tensors());
}

void Optimizer::sum_grads(const Comm& comm) { comm.sum_grads(param_tensors()); }

void Optimizer::scale_grads(double factor) { gradients_scale(param_tensors(), factor); }

double Optimizer::clip_grads(const Comm&, double max_norm) { return gradients_clip(param_tensors(), max_norm); }

std::vector<at::Tensor> Optimizer::param_tensors() const {
    std::vector<at::Tensor> out;
    for (const OptimParam& p : params()) out.push_back(p.param);
    return out;
}

StateReader state_reader_of(const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
    struct Segment {
        int64_t offset;
        at::Tensor flat;  // [n] fp32
        bool whole;       // a whole tensor (no "@offset")
        std::vector<int64_t> shape;
    };
    auto index = std::make_shared<std::map<std::string, std::vector<Segment>>>();
    for (const auto& [name, t] : tensors) {
        std::string key = name;
        int64_t offset = 0;
        const size_t at_sign = name.rfind('@');
        if (at_sign != std::string::npos) {
            key = name.substr(0, at_sign);
            try {
                offset = std::stoll(name.substr(at_sign + 1));
            } catch (const std::exception&) {
                throw InputError("optimizer state: tensor name '" + name + "' has no element offset after '@'");
            }
        }
        (*index)[key].push_back({offset, t.reshape({-1}), at_sign == std::string::npos, t.sizes().vec()});
    }
    return [index](const std::string& key, int64_t numel, int64_t begin, int64_t len) -> at::Tensor {
        auto it = index->find(key);
        if (it == index->end()) return {};
        at::Tensor out = at::zeros({len}, at::kFloat);  // [len] fp32
        int64_t covered = 0;
        for (const Segment& s : it->second) {
            if (s.whole && s.flat.numel() != numel)
                throw InputError(strprintf("optimizer state: tensor '%s' has shape %s (%lld elements), the parameter %lld",
                                           key.c_str(), c10::str(at::IntArrayRef(s.shape)).c_str(),
                                           (long long)s.flat.numel(), (long long)numel));
            const int64_t lo = std::max(begin, s.offset), hi = std::min(begin + len, s.offset + s.flat.numel());
            if (lo >= hi) continue;
            out.narrow(0, lo - begin, hi - lo).copy_(s.flat.narrow(0, lo - s.offset, hi - lo));
            covered += hi - lo;
        }
        if (covered != len)
            throw InputError(strprintf("optimizer state: tensor '%s' covers %lld of elements [%lld, %lld) (a shard "
                                       "file of the checkpoint is missing?)",
                                       key.c_str(), (long long)covered, (long long)begin, (long long)(begin + len)));
        return out;
    };
}

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

void AdamW::load_state(const std::vector<std::pair<std::string, at::Tensor>>& tensors, int64_t step) {
    load_state(state_reader_of(tensors), step);
}

void AdamW::load_state(const StateReader& read, int64_t step) {
    at::NoGradGuard no_grad;
    auto restore = [&](const std::string& key, at::Tensor& dst) {
        at::Tensor src = read(key, dst.numel(), 0, dst.numel());
        if (!src.defined()) throw InputError("optimizer state: tensor '" + key + "' is missing");
        dst.copy_(src.view(dst.sizes()));
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

std::unique_ptr<Optimizer> make_optimizer(std::vector<OptimParam> params, const AdamWOptions& adam,
                                          const ZeroOptions& zero, const Comm& comm, Decoder& model) {
    if (zero.stage > 0) return std::make_unique<ZeroAdamW>(std::move(params), adam, comm, zero, model);
    if (zero.offload) throw UsageError("config error: 'distributed.offload_optimizer' needs distributed.zero_stage 1-3");
    return std::make_unique<AdamW>(std::move(params), adam);
}

std::vector<OptimParam> optim_params_of(const std::vector<std::pair<std::string, at::Tensor>>& named, bool decay_all) {
    std::vector<OptimParam> out;
    out.reserve(named.size());
    for (const auto& [name, p] : named) {
        p.set_requires_grad(true);
        out.push_back({name, p, decay_all || decays_by_default(name, p)});
    }
    return out;
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
