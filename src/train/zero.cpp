// ZeRO stages 1-3 over the Comm's reduce-scatter and all-gather (see train/zero.h).
#include "cuset/train/zero.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/train/objective.h"  // gradients_scale's contract

namespace cuset {

ShardBytes zero_plan(double n, double n_whole, double b, int64_t world, int64_t stage, bool offload) {
    const double w = static_cast<double>(std::max<int64_t>(1, world));
    ShardBytes s;
    if (stage <= 0) {
        s.weights = n * b;
        s.gradients = n * b;
        s.masters = b == 4 ? 0.0 : 4 * n;
        s.moments = 8 * n;
        return s;
    }
    s.weights = stage >= 3 ? n_whole * b + (n - n_whole) * b / w : n * b;
    // Stage 1 keeps the whole gradients (the accumulation buffers) and the fp32 sum of its
    // shard; stages 2-3 only the shard between steps.
    s.gradients = (stage == 1 ? n * b : 0.0) + 4 * n / w;
    s.masters = 4 * n / w;
    s.moments = 8 * n / w;
    if (offload) {
        s.host = s.masters + s.moments;
        s.masters = s.moments = 0;
    }
    return s;
}

namespace {

// A parameter's storage emptied (stage 3 between uses) or given memory again. The tensor and its
// views (saved for backward) keep pointing at the same storage, so refilling it in place makes
// them valid again.
void storage_release(const at::Tensor& p) {
    c10::StorageImpl* s = p.storage().unsafeGetStorageImpl();
    s->set_data_ptr_noswap(at::DataPtr(nullptr, s->device()));
    s->set_nbytes(0);
}

void storage_allocate(const at::Tensor& p) {
    c10::StorageImpl* s = p.storage().unsafeGetStorageImpl();
    const size_t bytes = static_cast<size_t>(p.numel()) * p.element_size();
    if (s->nbytes() == bytes && s->data() != nullptr) return;
    at::Allocator* a = s->allocator() ? s->allocator() : c10::GetAllocator(p.device().type());
    s->set_data_ptr_noswap(a->allocate(bytes));
    s->set_nbytes(bytes);
}

// [numel] over p's memory with a version counter of its own: refilling a weight the backward pass
// saved (at stage 3, between its forward and backward) is not an in-place change of it.
at::Tensor raw_view(const at::Tensor& p) {
    return at::from_blob(p.data_ptr(), {p.numel()}, at::TensorOptions().dtype(p.scalar_type()).device(p.device()));
}

// "model.layers.<i>.<rest>" -> i, anything else -> -1.
int64_t layer_of(const std::string& name) {
    const std::string prefix = "model.layers.";
    if (name.rfind(prefix, 0) != 0) return -1;
    size_t end = name.find('.', prefix.size());
    if (end == std::string::npos) return -1;
    try {
        return std::stoll(name.substr(prefix.size(), end - prefix.size()));
    } catch (const std::exception&) {
        return -1;
    }
}

}  // namespace

struct ZeroAdamW::Impl : public std::enable_shared_from_this<ZeroAdamW::Impl> {
    // Elements [begin, begin + len) of parameter `param` (flattened) sit at shard offset `at`.
    struct Piece {
        size_t param;
        int64_t begin, at, len;
    };
    struct Bucket {
        std::vector<size_t> params;   // in flat order
        std::vector<int64_t> offset;  // each one's offset in the flat bucket
        int64_t numel = 0, shard = 0;  // the flat bucket is padded to shard * world
        int64_t layer = -1;            // stage 3: the decoder layer, -1 = stays whole
        std::vector<Piece> pieces;     // this rank's part
        at::Tensor master, exp_avg, exp_avg_sq;  // [shard] fp32, on the state device
        at::Tensor grad;                         // [shard] fp32, the summed gradient, on the device
        at::Tensor weight;                       // stage 3 layer: [shard] model dtype, on the device
        // this step's reduce-scatter
        size_t n_done = 0;  // parameters whose gradient of this backward is accumulated
        at::Tensor send;    // [shard * world] fp32 while in flight
        at::Tensor recv;    // [shard] fp32 while in flight
        Comm::Wait reduced;
        // stage 3
        bool gathered = true;
        at::Tensor gather_buf;  // [shard * world] model dtype while in flight
        Comm::Wait gathering;
    };

    Comm comm;
    ZeroOptions zo;
    std::vector<OptimParam>* params = nullptr;
    c10::Device device{c10::kCPU}, state_device{c10::kCPU};
    c10::ScalarType dtype = at::kFloat;
    std::vector<Bucket> buckets;
    std::vector<size_t> bucket_of;      // parameter -> bucket
    std::vector<int64_t> layer_bucket;  // stage 3: decoder layer -> bucket
    size_t next = 0;                    // next bucket to reduce-scatter
    bool armed = false;                 // the step's last backward is running
    Decoder model = nullptr;

    // ---- gradients ----

    void on_final(size_t i) {
        Bucket& b = buckets[bucket_of[i]];
        if (++b.n_done == b.params.size() && b.layer >= 0 && !armed) release(b);  // stage 3, earlier micro-batch
        if (!armed) return;
        at::NoGradGuard no_grad;
        while (next < buckets.size() && buckets[next].n_done == buckets[next].params.size()) launch(next++);
    }

    // Packs bucket k's gradients (zeros where a parameter has none) and starts its reduce-scatter
    // into the fp32 shard; from stage 2 on the whole gradients are freed once packed.
    void launch(size_t k) {
        Bucket& b = buckets[k];
        b.send = at::zeros({b.shard * comm.world}, at::TensorOptions().dtype(at::kFloat).device(device));
        for (size_t j = 0; j < b.params.size(); ++j) {
            at::Tensor& p = (*params)[b.params[j]].param;
            at::Tensor g = p.grad();
            if (g.defined()) b.send.narrow(0, b.offset[j], p.numel()).copy_(g.reshape({-1}));
            if (zo.stage >= 2 && g.defined()) p.mutable_grad().reset();
        }
        b.recv = at::empty({b.shard}, b.send.options());
        b.reduced = comm.reduce_scatter_start(b.send, b.recv);
        if (b.layer >= 0) release(b);  // its backward is done
    }

    // Completes the reduce-scatter of one backward pass (launching what backward did not reach:
    // unused parameters, or a rank without data) and adds it to the shards' sums.
    void complete_round() {
        at::NoGradGuard no_grad;
        while (next < buckets.size()) launch(next++);
        for (Bucket& b : buckets) {
            if (b.reduced) b.reduced();
            b.reduced = nullptr;
            if (b.recv.defined()) b.grad.add_(b.recv);
            b.send = b.recv = at::Tensor();
        }
        armed = false;
    }

    // Stage 1 reduces once a step, during the last backward; stages 2-3 during every backward (in
    // lockstep: every rank runs as many), so whole gradients never outlive a backward pass.
    bool every_backward() const { return zo.stage >= 2; }

    void finish() {
        // A stage-1 rank that ran no backward still takes part; at stages 2-3 every rank ran as
        // many rounds (none at all: nothing to sum).
        if (armed || !every_backward()) complete_round();
        release_layers();
    }

    // ---- stage 3: weights gathered around their use ----

    void start_gather(Bucket& b) {
        if (b.gathered || b.gathering) return;
        b.gather_buf = at::empty({b.shard * comm.world}, at::TensorOptions().dtype(dtype).device(device));
        b.gathering = comm.all_gather_start(b.weight, b.gather_buf);
    }

    void ensure_gathered(Bucket& b) {
        if (b.gathered) return;
        at::NoGradGuard no_grad;
        start_gather(b);
        b.gathering();
        b.gathering = nullptr;
        for (size_t j = 0; j < b.params.size(); ++j) {
            at::Tensor& p = (*params)[b.params[j]].param;
            storage_allocate(p);
            raw_view(p).copy_(b.gather_buf.narrow(0, b.offset[j], p.numel()));
        }
        b.gather_buf = at::Tensor();
        b.gathered = true;
    }

    void release(Bucket& b) {
        if (b.layer < 0 || !b.gathered) return;
        for (size_t k : b.params) storage_release((*params)[k].param);
        b.gathered = false;
    }

    void release_layers() {
        for (Bucket& b : buckets) {
            if (b.layer < 0) continue;
            if (b.gathering) {  // a prefetch nobody used: complete it (every rank started it)
                b.gathering();
                b.gathering = nullptr;
                b.gather_buf = at::Tensor();
            }
            release(b);
        }
    }

    void layer_before(int64_t layer, int64_t direction) {
        Bucket& b = buckets[layer_bucket[static_cast<size_t>(layer)]];
        ensure_gathered(b);
        const int64_t n = static_cast<int64_t>(layer_bucket.size());
        const int64_t ahead = layer + direction;
        if (ahead >= 0 && ahead < n) {
            at::NoGradGuard no_grad;
            start_gather(buckets[layer_bucket[static_cast<size_t>(ahead)]]);
        }
    }

    at::Tensor layer_after(int64_t layer, const at::Tensor& out) {
        Bucket& b = buckets[layer_bucket[static_cast<size_t>(layer)]];
        if (at::GradMode::is_enabled() && out.requires_grad()) {
            // The backward pass reaches this layer when the gradient of its output is complete.
            std::weak_ptr<Impl> self = weak_from_this();
            at::Tensor o = out;
            o.register_hook([self, layer](const at::Tensor& g) {
                if (auto impl = self.lock()) impl->layer_before(layer, -1);
                return g;
            });
        }
        release(b);
        return out;
    }

    struct Hooks : public LayerHooks {
        std::weak_ptr<Impl> impl;
        void before(int64_t layer) override {
            if (auto i = impl.lock()) i->layer_before(layer, +1);
        }
        at::Tensor after(int64_t layer, const at::Tensor& out) override {
            if (auto i = impl.lock()) return i->layer_after(layer, out);
            return out;
        }
    };

    struct FinalHook : public torch::autograd::PostAccumulateGradHook {
        FinalHook(std::weak_ptr<Impl> r, size_t i) : impl(std::move(r)), index(i) {}
        void operator()(const torch::autograd::Variable&) override {
            if (auto r = impl.lock()) r->on_final(index);
        }
        std::weak_ptr<Impl> impl;
        size_t index;
    };
};

ZeroAdamW::ZeroAdamW(std::vector<OptimParam> params, AdamWOptions opts, const Comm& comm, ZeroOptions zo,
                     Decoder model)
    : params_(std::move(params)), opts_(opts), zo_(zo) {
    if (zo_.stage < 1 || zo_.stage > 3)
        throw UsageError(strprintf("config error: key 'distributed.zero_stage' = %lld: ZeroAdamW shards at stages 1-3",
                                   (long long)zo_.stage));
    if (params_.empty()) throw RuntimeFailure("ZeRO: no trainable parameter");
    impl_ = std::make_shared<Impl>();
    Impl& m = *impl_;
    m.comm = comm;
    m.zo = zo_;
    m.params = &params_;
    m.device = params_[0].param.device();
    m.dtype = params_[0].param.scalar_type();
    m.state_device = zo_.offload ? c10::Device(c10::kCPU) : m.device;
    for (const OptimParam& p : params_)
        if (p.param.scalar_type() != m.dtype || p.param.device() != m.device)
            throw RuntimeFailure("ZeRO: every trainable parameter must have the same dtype and device ('" + p.name + "')");
    const int64_t world = comm.world, rank = comm.rank;
    world_ = world;

    // Buckets: stage 3 one per decoder layer, last layer first (the order backward finishes
    // them), then one of everything else; stages 1-2 runs of parameters in reverse order up to
    // bucket_bytes of fp32 gradient (as the stage-0 all-reduce).
    std::vector<std::vector<size_t>> groups;
    std::vector<int64_t> group_layer;
    if (zo_.stage >= 3) {
        if (!model) throw RuntimeFailure("ZeRO stage 3 needs the model (its layer hooks)");
        const int64_t n_layer = static_cast<int64_t>(model->layer_list.size());
        std::vector<std::vector<size_t>> per_layer(static_cast<size_t>(n_layer));
        std::vector<size_t> rest;
        for (size_t i = params_.size(); i-- > 0;) {
            const int64_t l = layer_of(params_[i].name);
            if (l >= 0 && l < n_layer) per_layer[static_cast<size_t>(l)].push_back(i);
            else rest.push_back(i);
        }
        for (int64_t l = n_layer; l-- > 0;) {
            if (per_layer[static_cast<size_t>(l)].empty())
                throw RuntimeFailure(strprintf("ZeRO stage 3: decoder layer %lld has no trainable parameter (a frozen "
                                               "base, LoRA, needs stage 0-2)", (long long)l));
            groups.push_back(per_layer[static_cast<size_t>(l)]);
            group_layer.push_back(l);
        }
        if (!rest.empty()) {
            groups.push_back(rest);
            group_layer.push_back(-1);
        }
    } else {
        int64_t numel = 0;
        for (size_t i = params_.size(); i-- > 0;) {
            const int64_t n = params_[i].param.numel();
            if (groups.empty() || (numel > 0 && (numel + n) * 4 > zo_.bucket_bytes)) {
                groups.emplace_back();
                group_layer.push_back(-1);
                numel = 0;
            }
            groups.back().push_back(i);
            numel += n;
        }
    }

    at::NoGradGuard no_grad;
    auto fp32_state = at::TensorOptions().dtype(at::kFloat).device(m.state_device);
    if (zo_.offload && m.device.is_cuda()) fp32_state = fp32_state.pinned_memory(true);
    m.bucket_of.assign(params_.size(), 0);
    if (zo_.stage >= 3) m.layer_bucket.assign(model->layer_list.size(), 0);
    for (size_t g = 0; g < groups.size(); ++g) {
        Impl::Bucket b;
        b.params = groups[g];
        b.layer = group_layer[g];
        for (size_t k : b.params) {
            b.offset.push_back(b.numel);
            b.numel += params_[k].param.numel();
            m.bucket_of[k] = g;
        }
        b.shard = (b.numel + world - 1) / world;
        const int64_t lo = rank * b.shard, hi = lo + b.shard;
        for (size_t j = 0; j < b.params.size(); ++j) {
            const int64_t o = b.offset[j], n = params_[b.params[j]].param.numel();
            const int64_t a = std::max(lo, o), e = std::min(hi, o + n);
            if (a < e) b.pieces.push_back({b.params[j], a - o, a - lo, e - a});
        }
        b.master = at::zeros({b.shard}, fp32_state);
        for (const Impl::Piece& pc : b.pieces)
            b.master.narrow(0, pc.at, pc.len).copy_(params_[pc.param].param.detach().reshape({-1}).narrow(0, pc.begin, pc.len));
        b.exp_avg = at::zeros({b.shard}, fp32_state);
        b.exp_avg_sq = at::zeros({b.shard}, fp32_state);
        b.grad = at::zeros({b.shard}, at::TensorOptions().dtype(at::kFloat).device(m.device));
        if (b.layer >= 0) {
            m.layer_bucket[static_cast<size_t>(b.layer)] = g;
            b.weight = b.master.to(m.device, m.dtype, /*non_blocking=*/false, /*copy=*/true);
        }
        m.buckets.push_back(std::move(b));
    }
    std::weak_ptr<Impl> self = impl_;
    for (size_t i = 0; i < params_.size(); ++i)
        torch::autograd::impl::set_post_acc_grad_hooks(params_[i].param, std::make_unique<Impl::FinalHook>(self, i));
    if (zo_.stage >= 3) {
        // Each weight gets a storage of its own (a loaded model's may share one), then only the
        // shards remain.
        for (Impl::Bucket& b : m.buckets) {
            if (b.layer < 0) continue;
            for (size_t k : b.params) {
                at::Tensor& p = params_[k].param;
                p.set_data(p.detach().clone());
            }
            m.release(b);
        }
        auto hooks = std::make_shared<Impl::Hooks>();
        hooks->impl = impl_;
        model->layer_hooks = hooks;
        m.model = model;
    }
}

ZeroAdamW::~ZeroAdamW() {
    if (impl_ && impl_->model) impl_->model->layer_hooks.reset();
}

void ZeroAdamW::zero_grad() {
    at::NoGradGuard no_grad;
    for (OptimParam& p : params_) {
        at::Tensor g = p.param.mutable_grad();
        if (!g.defined()) continue;
        if (zo_.stage >= 2) p.param.mutable_grad().reset();
        else g.zero_();
    }
    for (Impl::Bucket& b : impl_->buckets) b.grad.zero_();
}

void ZeroAdamW::backward_begin(const Comm&, bool last) {
    Impl& m = *impl_;
    if (m.every_backward() && m.armed) m.complete_round();  // the previous micro-batch's
    for (Impl::Bucket& b : m.buckets) b.n_done = 0;
    if (last || m.every_backward()) {
        m.next = 0;
        m.armed = true;
    }
}

void ZeroAdamW::sum_grads(const Comm&) { impl_->finish(); }

void ZeroAdamW::scale_grads(double factor) {
    if (!std::isfinite(factor))
        throw RuntimeFailure(strprintf("gradients_scale: 1/denominator = %g (a step without kept tokens must be skipped)",
                                       factor));
    at::NoGradGuard no_grad;
    for (Impl::Bucket& b : impl_->buckets) b.grad.mul_(factor);
}

double ZeroAdamW::clip_grads(const Comm& comm, double max_norm) {
    at::NoGradGuard no_grad;
    // The shard's sum of squares accumulated in fp64: an fp32 sum over a bucket of millions of
    // elements (stage 3's embedding) drifts by ~1e-5 relative.
    at::Tensor sq = at::zeros({}, at::TensorOptions().dtype(at::kDouble).device(impl_->device));  // []
    for (Impl::Bucket& b : impl_->buckets) sq += at::linalg_vector_norm(b.grad, 2, {}, false, at::kDouble).square();
    const double local = sq.item<double>();
    // Padding is zero: the sum of the shards' squares is the whole gradient's.
    const double total = std::sqrt(comm.sum(local));
    if (max_norm > 0.0 && std::isfinite(total)) {
        const double coef = max_norm / (total + 1e-6);
        if (coef < 1.0)
            for (Impl::Bucket& b : impl_->buckets) b.grad.mul_(coef);
    }
    return total;
}

void ZeroAdamW::step(double lr) {
    at::NoGradGuard no_grad;
    Impl& m = *impl_;
    ++step_;
    const double bias_correction1 = 1.0 - std::pow(opts_.beta1, double(step_));
    const double bias_correction2 = 1.0 - std::pow(opts_.beta2, double(step_));
    const double step_size = lr / bias_correction1;
    const double bias_correction2_sqrt = std::sqrt(bias_correction2);
    for (Impl::Bucket& b : m.buckets) {
        at::Tensor g = b.grad.to(m.state_device);  // [shard] fp32
        // AdamW's operations of AdamW::step in the same order, per element: decay on the pieces
        // of decayed parameters, then the moments and the update over the whole shard (the
        // padding stays 0: its gradient, moments and weight are 0).
        if (opts_.weight_decay != 0.0)
            for (const Impl::Piece& pc : b.pieces)
                if (params_[pc.param].decay) b.master.narrow(0, pc.at, pc.len).mul_(1.0 - lr * opts_.weight_decay);
        b.exp_avg.lerp_(g, 1.0 - opts_.beta1);
        b.exp_avg_sq.mul_(opts_.beta2).addcmul_(g, g, 1.0 - opts_.beta2);
        at::Tensor denom = (b.exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(opts_.eps);
        b.master.addcdiv_(b.exp_avg, denom, -step_size);
    }
    // Every rank's updated shard to everyone (stage 3's layers stay sharded until used).
    std::vector<at::Tensor> whole(m.buckets.size());
    std::vector<Comm::Wait> waits(m.buckets.size());
    for (size_t k = 0; k < m.buckets.size(); ++k) {
        Impl::Bucket& b = m.buckets[k];
        if (b.layer >= 0) {
            b.weight.copy_(b.master);
            continue;
        }
        at::Tensor mine = b.master.to(m.device, m.dtype);  // [shard]
        whole[k] = at::empty({b.shard * m.comm.world}, mine.options());
        waits[k] = m.comm.all_gather_start(mine, whole[k]);
        b.send = mine;  // alive until waited for
    }
    for (size_t k = 0; k < m.buckets.size(); ++k) {
        if (!waits[k]) continue;
        Impl::Bucket& b = m.buckets[k];
        waits[k]();
        b.send = at::Tensor();
        for (size_t j = 0; j < b.params.size(); ++j) {
            at::Tensor& p = params_[b.params[j]].param;
            p.view({-1}).copy_(whole[k].narrow(0, b.offset[j], p.numel()));
        }
    }
}

std::vector<std::pair<std::string, at::Tensor>> ZeroAdamW::state_tensors() const {
    std::vector<std::pair<std::string, at::Tensor>> out;
    for (const Impl::Bucket& b : impl_->buckets)
        for (const Impl::Piece& pc : b.pieces) {
            const std::string& n = params_[pc.param].name;
            std::string at = "@";  // not "@" + to_string(): GCC 12 warns falsely on that (-Wrestrict, PR 105651)
            at += std::to_string(pc.begin);
            out.emplace_back(n + ".exp_avg" + at, b.exp_avg.narrow(0, pc.at, pc.len));
            out.emplace_back(n + ".exp_avg_sq" + at, b.exp_avg_sq.narrow(0, pc.at, pc.len));
            if (impl_->dtype != at::kFloat) out.emplace_back(n + ".master" + at, b.master.narrow(0, pc.at, pc.len));
        }
    return out;
}

void ZeroAdamW::load_state(const StateReader& read, int64_t step) {
    at::NoGradGuard no_grad;
    for (Impl::Bucket& b : impl_->buckets) {
        for (const Impl::Piece& pc : b.pieces) {
            const OptimParam& p = params_[pc.param];
            auto restore = [&](const char* what, at::Tensor& dst, bool required) {
                at::Tensor src = read(p.name + what, p.param.numel(), pc.begin, pc.len);
                if (!src.defined()) {
                    if (required) throw InputError("optimizer state: tensor '" + p.name + what + "' is missing");
                    return;
                }
                dst.narrow(0, pc.at, pc.len).copy_(src);
            };
            restore(".exp_avg", b.exp_avg, true);
            restore(".exp_avg_sq", b.exp_avg_sq, true);
            // fp32 weights are their own master: the loaded weights already are.
            restore(".master", b.master, impl_->dtype != at::kFloat);
        }
        if (b.layer >= 0) b.weight.copy_(b.master);
    }
    step_ = step;
}

void ZeroAdamW::gather_all() {
    for (Impl::Bucket& b : impl_->buckets)
        if (b.layer >= 0) impl_->ensure_gathered(b);
}

void ZeroAdamW::release_all() { impl_->release_layers(); }

ShardBytes ZeroAdamW::resident() const {
    ShardBytes s;
    std::set<const void*> seen;
    for (const OptimParam& p : params_) {
        const c10::StorageImpl* st = p.param.storage().unsafeGetStorageImpl();
        if (seen.insert(st).second) s.weights += static_cast<double>(st->nbytes());
        if (p.param.grad().defined()) s.gradients += static_cast<double>(p.param.grad().storage().nbytes());
    }
    for (const Impl::Bucket& b : impl_->buckets) {
        s.gradients += static_cast<double>(b.grad.nbytes());
        if (b.weight.defined()) s.weights += static_cast<double>(b.weight.nbytes());
        const double state = static_cast<double>(b.master.nbytes());
        const double moments = static_cast<double>(b.exp_avg.nbytes() + b.exp_avg_sq.nbytes());
        if (zo_.offload && impl_->device != impl_->state_device) {
            s.host += state + moments;
        } else {
            s.masters += state;
            s.moments += moments;
        }
    }
    return s;
}

}  // namespace cuset
