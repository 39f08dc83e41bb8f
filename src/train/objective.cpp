// The CuSeT objective (docs/method.md sec. 1-5): per-token cross-entropy from hidden states
// in chunks, the confidence/sensitivity mask, region weights, the sft/dft/focal/eaft/asft/rho1
// baselines, and the step normalisation. EAFT's top-k entropy and ASFT's KL to the reference
// model are computed per chunk, from that chunk's logits (and the reference's), like the loss. It runs no model and no collective; the trainer brings those.
//
// Memory: [N, V] logits never exist. The fused path of Objective::compute() handles one chunk of
// whole samples at a time: logits -> loss -> the sample's mask and weight -> d(numerator)/d(logits)
// in place -> the chunk's gradient for hidden and lm_head, so each chunk's logits are computed once
// (a sample longer than a chunk is computed twice: loss first, gradients second). The gradients
// wait in the autograd node until numerator.backward(), like a fused linear cross-entropy.
#include "cuset/train/objective.h"

#include <algorithm>
#include <cmath>

#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/custom_function.h>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {
namespace {

using namespace lm_head;  // the chunk operations of the LM head's loss (model/lm_head.h)
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Region windows are chosen on confidences in fixed point (exact sums: ties resolve to the
// earliest window, the same whatever samples share the chunk); 2^40 keeps 1e-12 resolution and
// sums of up to 2^23 tokens in int64.
constexpr double kFixedScale = 1099511627776.0;  // 2^40

// numpy's _lerp: a + (b - a) t, computed from b's side when t >= 0.5.
double lerp_numpy(double a, double b, double t) {
    const double d = b - a;
    return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}
at::Tensor lerp_numpy(const at::Tensor& a, const at::Tensor& b, const at::Tensor& t) {
    at::Tensor d = b - a;
    return at::where(t >= 0.5, b - d * (1 - t), a + d * t);
}

// ------------------------------------------------------------------ planning (host, a few KB)

// Where each valid target sits, grouped by sample, and the chunks the fused path walks.
struct Plan {
    int64_t n = 0;  // valid targets
    int64_t S = 0;  // samples in the micro-batch
    std::vector<int64_t> rows;    // [n] flat positions, sample by sample, in position order
    std::vector<int64_t> labels;  // [n]
    std::vector<int64_t> sample;  // [n] sample of each row
    std::vector<int64_t> count;   // [S] valid targets per sample
    std::vector<int64_t> first;   // [S + 1] first row of each sample
    struct Group {
        int64_t row_begin, row_end;        // rows [row_begin, row_end)
        int64_t sample_begin, sample_end;  // whole samples [.., ..); -1 when groups ignore samples
    };
    std::vector<Group> groups;
};

Plan plan_make(const MicroBatchTargets& t, int64_t vocab) {
    const char* where = "objective";
    if (!t.labels.defined() || t.labels.dim() != 2 || t.labels.scalar_type() != at::kLong)
        throw RuntimeFailure(strprintf("%s: labels must be [B, T] int64", where));
    const int64_t B = t.labels.size(0), T = t.labels.size(1), M = B * T;
    at::Tensor lab = t.labels.to(at::kCPU).contiguous();  // [B, T]
    at::Tensor sid;                                        // [B, T]
    if (t.sample_index.defined()) {
        if (t.sample_index.sizes() != t.labels.sizes() || t.sample_index.scalar_type() != at::kLong)
            throw RuntimeFailure(strprintf("%s: sample_index must be [B, T] int64 like labels", where));
        sid = t.sample_index.to(at::kCPU).contiguous();
    }
    const int64_t* lp = lab.data_ptr<int64_t>();
    const int64_t* sp = sid.defined() ? sid.data_ptr<int64_t>() : nullptr;

    Plan p;
    int64_t max_sample = B - 1;
    if (sp) {
        max_sample = -1;
        for (int64_t i = 0; i < M; ++i)
            if (lp[i] != kIgnoreIndex) max_sample = std::max(max_sample, sp[i]);
    }
    p.S = t.sample_ids.empty() ? max_sample + 1 : static_cast<int64_t>(t.sample_ids.size());
    p.count.assign(p.S, 0);
    for (int64_t i = 0; i < M; ++i) {
        if (lp[i] == kIgnoreIndex) continue;
        const int64_t s = sp ? sp[i] : i / T;
        if (lp[i] < 0 || lp[i] >= vocab)
            throw InputError(strprintf("%s: label %lld at row %lld, position %lld is outside the "
                                       "vocabulary [0, %lld) of the lm_head",
                                       where, static_cast<long long>(lp[i]),
                                       static_cast<long long>(i / T), static_cast<long long>(i % T),
                                       static_cast<long long>(vocab)));
        if (s < 0 || s >= p.S)
            throw RuntimeFailure(strprintf("%s: valid target at row %lld, position %lld has sample "
                                           "index %lld outside [0, %lld)",
                                           where, static_cast<long long>(i / T),
                                           static_cast<long long>(i % T), static_cast<long long>(s),
                                           static_cast<long long>(p.S)));
        ++p.count[s];
    }
    p.first.assign(p.S + 1, 0);
    for (int64_t s = 0; s < p.S; ++s) p.first[s + 1] = p.first[s] + p.count[s];
    p.n = p.first[p.S];
    p.rows.resize(p.n);
    p.labels.resize(p.n);
    p.sample.resize(p.n);
    std::vector<int64_t> next(p.first.begin(), p.first.end() - 1);
    for (int64_t i = 0; i < M; ++i) {  // counting sort: stable, so position order within a sample
        if (lp[i] == kIgnoreIndex) continue;
        const int64_t s = sp ? sp[i] : i / T;
        const int64_t k = next[s]++;
        p.rows[k] = i;
        p.labels[k] = lp[i];
        p.sample[k] = s;
    }
    return p;
}

// Chunks of at most `chunk` rows (chunk 0: one group). With whole_samples, a group holds whole
// samples only, and a sample longer than a chunk is a group of its own; samples without tokens
// join the group at hand, so no group is empty.
void plan_groups(Plan& p, int64_t chunk, bool whole_samples) {
    p.groups.clear();
    if (p.n == 0) return;
    if (chunk <= 0) {
        p.groups.push_back({0, p.n, whole_samples ? 0 : -1, whole_samples ? p.S : -1});
        return;
    }
    if (!whole_samples) {
        for (int64_t a = 0; a < p.n; a += chunk) p.groups.push_back({a, std::min(p.n, a + chunk), -1, -1});
        return;
    }
    Plan::Group g{0, 0, 0, 0};
    for (int64_t s = 0; s < p.S; ++s) {
        const int64_t c = p.count[s];
        if (c > 0 && g.row_end > g.row_begin && g.row_end - g.row_begin + c > chunk) {
            p.groups.push_back(g);
            g = {g.row_end, g.row_end, s, s};
        }
        g.row_end += c;
        g.sample_end = s + 1;
    }
    p.groups.push_back(g);  // non-empty: n > 0
}

// ------------------------------------------------------------------ masks and weights (device)

// What a method takes from a chunk's logits besides the loss, per row: [r] fp64, detached, each
// undefined unless the method's row asks for it.
struct LogitTerms {
    at::Tensor entropy_weight;  // TokenWeight::kEntropy: EAFT's (H_topk / ln k)^alpha
    at::Tensor kl;              // reference_model: KL(pi_ref || pi_theta)
};

// Everything the fused forward hands back besides the numerator, per group, detached.
struct Terms {
    std::vector<at::Tensor> nll, conf, kept, only_sensitive, den, coef;  // [r] per group
    std::vector<at::Tensor> tokw, kl, extra_num;  // [r] per group: m g; asft KL; asft alpha den KL
    std::vector<at::Tensor> tau, weight, win_begin, win_end, win_mean;   // [k] per group (whole samples)
    at::Tensor n_bad;                                                    // [] int64
};

// The per-token and per-sample parts of sec. 2, 3 and 5 for the rows of one group.
class Weigher {
public:
    Weigher(const ObjectiveOptions& o, const Plan& p, std::optional<double> batch_tau,
            at::Tensor sens, at::Tensor cached, at::Tensor sample_dev, at::Tensor ref_ce = {})
        : o_(o), row_(method_row(o.method)), p_(p), batch_tau_(batch_tau), sens_(std::move(sens)),
          cached_(std::move(cached)), sample_(std::move(sample_dev)), ref_ce_(std::move(ref_ce)) {}

    bool needs_whole_samples() const {
        return row_.mask == TokenMask::kCuset &&
               (o_.region_enabled ||
                (o_.mask_confidence && o_.threshold_mode == ThresholdMode::kSampleQuantile));
    }

    // nll [r] (compute dtype, detached) of group g -> coefficient w_i m g [r] fp64; records terms.
    // x: the chunk's logit terms the method's row asks for.
    at::Tensor weigh(const Plan::Group& g, const at::Tensor& nll, Terms& out, const LogitTerms& x = {}) const {
        const int64_t a = g.row_begin, r = g.row_end - g.row_begin;
        at::Tensor c = cached_.defined() ? cached_.narrow(0, a, r)
                                         : at::exp(-nll.to(at::kDouble));  // [r] fp64, detached
        at::Tensor sens = sens_.narrow(0, a, r);                           // [r] bool
        const auto f64 = c.options();
        at::Tensor tau_tok, w_tok;  // [r] fp64 or undefined
        at::Tensor kept = at::ones({r}, sens.options()), only = at::zeros({r}, sens.options());
        const at::Tensor g_tok = token_weight(c, x);  // [r] fp64, undefined = 1

        if (row_.mask == TokenMask::kCuset) {
            at::Tensor lsid, n_dev, first_dev;  // [r], [k], [k]
            int64_t k = 0;
            if (g.sample_begin >= 0) {
                k = g.sample_end - g.sample_begin;
                lsid = sample_.narrow(0, a, r) - g.sample_begin;
                n_dev = at::tensor(std::vector<int64_t>(p_.count.begin() + g.sample_begin,
                                                        p_.count.begin() + g.sample_end))
                            .to(c.device());
                first_dev = at::cumsum(n_dev, 0) - n_dev;  // first row of each sample in the group
            }
            if (o_.mask_confidence) {
                at::Tensor tau;  // [k] fp64
                if (o_.threshold_mode == ThresholdMode::kSampleQuantile) {
                    tau = sample_quantiles(c, lsid, n_dev, first_dev);
                    tau_tok = tau.index_select(0, lsid);
                } else {
                    const double v = o_.threshold_mode == ThresholdMode::kFixed ? o_.threshold_value
                                                                                 : *batch_tau_;
                    tau_tok = at::full({r}, v, f64);
                    if (k > 0) tau = at::where(n_dev > 0, at::full({k}, v, f64), kNaN);
                }
                at::Tensor below = c < tau_tok;
                kept = o_.mask_sensitivity ? at::logical_not(below).logical_or_(sens)
                                           : at::logical_not(below);
                if (o_.mask_sensitivity) only = below.logical_and(sens);
                if (k > 0) out.tau.push_back(tau);
            } else if (k > 0) {
                out.tau.push_back(at::full({k}, kNaN, f64));
            }
            if (o_.region_enabled) {
                at::Tensor w = region_weights(c, lsid, n_dev, first_dev, k, out);  // [k]
                w_tok = w.index_select(0, lsid);
            } else if (k > 0) {
                out.weight.push_back(at::ones({k}, f64));
                for (auto* v : {&out.win_begin, &out.win_end}) v->push_back(at::full({k}, -1.0, f64));
                out.win_mean.push_back(at::full({k}, kNaN, f64));
            }
        } else if (row_.mask == TokenMask::kExcessLoss) {
            // score = l_theta - l_ref, in fp64 exactly as Objective::step_scores makes it
            kept = (nll.to(at::kDouble) - ref_ce_.narrow(0, a, r)) >= *batch_tau_;
        }

        const double drop = row_.mask == TokenMask::kExcessLoss ? 0.0 : o_.drop_weight;  // a hard selection
        at::Tensor m = at::where(kept, at::ones({}, f64), at::full({}, drop, f64));  // [r]
        at::Tensor den = w_tok.defined() ? w_tok * m : m;
        at::Tensor coef = g_tok.defined() ? den * g_tok : den;
        out.tokw.push_back(g_tok.defined() ? m * g_tok : m);
        if (row_.reference_model) {  // the KL part, beside the token weight's part
            out.kl.push_back(x.kl);
            out.extra_num.push_back(den * x.kl * o_.asft_alpha);
        }
        out.nll.push_back(nll);
        out.conf.push_back(c);
        out.kept.push_back(kept);
        out.only_sensitive.push_back(only);
        out.den.push_back(den);
        out.coef.push_back(coef);
        return coef;
    }

private:
    // The method's per-token weight g of confidences c [r] fp64: [r] fp64, undefined for g = 1.
    at::Tensor token_weight(const at::Tensor& c, const LogitTerms& x) const {
        switch (row_.weight) {
            case TokenWeight::kOne: return {};
            case TokenWeight::kConfidence: return c;
            case TokenWeight::kFocal: return at::pow(1.0 - c, o_.focal_gamma);
            case TokenWeight::kEntropy: return x.entropy_weight;
        }
        return {};
    }

    // c [r] fp64 sample by sample, lsid [r] sample in group, n [k], first [k] -> tau [k]
    // (NaN for a sample without tokens): numpy's 'linear' quantile per sample.
    at::Tensor sample_quantiles(const at::Tensor& c, const at::Tensor& lsid, const at::Tensor& n,
                                const at::Tensor& first) const {
        const int64_t r = c.size(0);
        const std::optional<bool> stable = true;  // a plain bool would select sort(dim, descending)
        auto [by_value, order] = at::sort(c, stable, /*dim=*/0);
        at::Tensor regroup = std::get<1>(at::sort(lsid.index_select(0, order), stable, /*dim=*/0));
        at::Tensor sorted = by_value.index_select(0, regroup);  // [r] ascending within each sample
        at::Tensor last = (n - 1).clamp_min(0);                 // [k]
        at::Tensor virt = last.to(at::kDouble) * o_.q;          // numpy: (n - 1) * q
        at::Tensor fl = at::floor(virt);
        at::Tensor top = virt >= last.to(at::kDouble);  // numpy takes the last value there
        at::Tensor lo = at::where(top, last, fl.to(at::kLong));
        at::Tensor hi = at::where(top, last, lo + 1);
        at::Tensor va = sorted.index_select(0, (first + lo).clamp(0, r - 1));
        at::Tensor vb = sorted.index_select(0, (first + hi).clamp(0, r - 1));
        return at::where(n > 0, lerp_numpy(va, vb, virt - fl), kNaN);
    }

    // Windows of min(window, n_i) consecutive valid tokens, stride 1; w_i = 1 + alpha (1 - min
    // mean). Window sums from prefix sums: the choice on exact fixed-point sums, the value in fp64.
    at::Tensor region_weights(const at::Tensor& c, const at::Tensor& lsid, const at::Tensor& n,
                              const at::Tensor& first, int64_t k, Terms& out) const {
        const int64_t r = c.size(0);
        const auto i64 = lsid.options();
        at::Tensor len = at::clamp_max(n, o_.window);  // [k] window length per sample
        at::Tensor j = at::arange(r, i64);             // [r] group row = window start
        at::Tensor off = j - first.index_select(0, lsid);
        at::Tensor wl = len.index_select(0, lsid);
        at::Tensor starts = (off + wl) <= n.index_select(0, lsid);  // [r] a window starts here
        at::Tensor end = at::clamp_max(j + wl, r);

        at::Tensor ci = at::round(c.clamp(0.0, 1.0) * kFixedScale).to(at::kLong);  // [r]
        at::Tensor pi = at::cat({at::zeros({1}, i64), at::cumsum(ci, 0)});         // [r + 1]
        at::Tensor sum_i = pi.index_select(0, end) - pi.index_select(0, j);          // [r]
        const int64_t big = std::numeric_limits<int64_t>::max();
        sum_i = at::where(starts, sum_i, big);
        at::Tensor min_i = at::full({k}, big, i64).scatter_reduce(0, lsid, sum_i, "amin");
        at::Tensor is_min = starts.logical_and(sum_i == min_i.index_select(0, lsid));
        at::Tensor begin = at::full({k}, big, i64)
                               .scatter_reduce(0, lsid, at::where(is_min, off, big), "amin");  // [k]
        at::Tensor has = n > 0;
        begin = at::where(has, begin, 0);
        at::Tensor b_row = (first + begin).clamp(0, std::max<int64_t>(r - 1, 0));
        at::Tensor e_row = (b_row + len).clamp_max(r);

        at::Tensor pd = at::cat({at::zeros({1}, c.options()), at::cumsum(c, 0)});  // [r + 1] fp64
        at::Tensor mean = (pd.index_select(0, e_row) - pd.index_select(0, b_row)) /
                          len.clamp_min(1).to(at::kDouble);  // [k]
        at::Tensor w = at::where(has, 1.0 + o_.alpha * (1.0 - mean), 1.0);
        out.weight.push_back(w);
        out.win_begin.push_back(at::where(has, begin, -1).to(at::kDouble));
        out.win_end.push_back(at::where(has, begin + len, -1).to(at::kDouble));
        out.win_mean.push_back(at::where(has, mean, kNaN));
        return w;
    }

    const ObjectiveOptions& o_;
    const MethodRow& row_;
    const Plan& p_;
    std::optional<double> batch_tau_;
    at::Tensor sens_;    // [n] bool
    at::Tensor cached_;  // [n] fp64 or undefined
    at::Tensor sample_;  // [n] int64
    at::Tensor ref_ce_;  // [n] fp64 -log p_ref (rho1) or undefined
};

// EAFT: z [r, V] logits (compute dtype) -> [r] fp64 weight (H_topk / ln k)^alpha, H_topk the
// entropy of the renormalised top-k probabilities (= softmax of the k largest logits).
at::Tensor eaft_weight(const at::Tensor& z, const ObjectiveOptions& o) {
    const int64_t k = std::min<int64_t>(o.eaft_k, z.size(1));
    if (k < 2) return at::ones({z.size(0)}, z.options().dtype(at::kDouble));
    at::Tensor lq = at::log_softmax(std::get<0>(at::topk(z, k, /*dim=*/1)).to(at::kDouble), 1);  // [r, k]
    at::Tensor H = -(lq.exp() * lq).sum(1);                                                     // [r]
    return at::pow((H / std::log(static_cast<double>(k))).clamp_min(0.0), o.eaft_alpha);
}

// ASFT: reference logits zr [r, V] -> log pi_ref [r, V] and pi_ref [r, V] (compute dtype).
std::pair<at::Tensor, at::Tensor> reference_probs(const at::Tensor& zr) {
    at::Tensor lr = at::log_softmax(zr, 1);
    return {lr, lr.exp()};
}

// Rows of a non-finite logit of zr [r, V].
at::Tensor rows_nonfinite(const at::Tensor& zr) { return at::logical_not(at::isfinite(zr.sum(1))).sum(); }

// ------------------------------------------------------------------ the fused path

struct FusedRun {
    const Plan* plan;
    const Weigher* weigher;
    int64_t chunk;
    bool grad_h, grad_w;  // which gradients autograd will want
    Terms terms;
    const ObjectiveOptions* opts = nullptr;
    at::Tensor ref_h, ref_w;  // asft: reference hidden rows [n, D] and lm_head [V, D]
};

// numerator = sum_r coef_r l_r over the valid rows; gradients computed in forward (see top).
struct FusedObjective : public torch::autograd::Function<FusedObjective> {
    // h [n, D], w [V, D] (model dtype), y [n] int64 -> [] compute dtype
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& h, const at::Tensor& w,
                              const at::Tensor& y, FusedRun* run) {
        const at::ScalarType ct = compute_dtype(h);
        const int64_t n = h.size(0);
        at::Tensor grad_h = run->grad_h ? at::empty_like(h) : at::Tensor();  // [n, D]
        at::Tensor grad_w = run->grad_w ? at::empty(w.sizes(), w.options().dtype(ct))
                                        : at::Tensor();  // [V, D] compute dtype, written by the first chunk
        bool grad_w_empty = true;
        at::Tensor n_bad = at::zeros({}, h.options().dtype(at::kLong));
        const bool any_grad = run->grad_h || run->grad_w;
        auto rows_grad = [&](int64_t a, int64_t r) {
            return grad_h.defined() ? grad_h.narrow(0, a, r) : at::Tensor();
        };
        for (const Plan::Group& g : run->plan->groups) {
            const int64_t a = g.row_begin, r = g.row_end - g.row_begin;
            if (r <= run->chunk) {  // one pass: logits once
                at::Tensor hc = h.narrow(0, a, r), yc = y.narrow(0, a, r);
                at::Tensor z = chunk_logits(hc, w);  // [r, V]
                const MethodRow& row = method_row(run->opts->method);
                LogitTerms x;
                at::Tensor lp, pr;  // with a reference model: log pi_theta, pi_ref [r, V]
                if (row.weight == TokenWeight::kEntropy) x.entropy_weight = eaft_weight(z, *run->opts);
                if (row.reference_model) {
                    lp = at::log_softmax(z, 1);
                    at::Tensor zr = chunk_logits(run->ref_h.narrow(0, a, r), run->ref_w);  // [r, V]
                    n_bad.add_(rows_nonfinite(zr));
                    at::Tensor lr;
                    std::tie(lr, pr) = reference_probs(zr);
                    x.kl = (pr * (lr - lp)).sum(1).to(at::kDouble);  // [r] KL(pi_ref || pi_theta)
                }
                ChunkLoss cl = softmax_inplace(z, yc);
                n_bad.add_(cl.n_bad);
                at::Tensor coef = run->weigher->weigh(g, cl.nll, run->terms, x);  // [r] fp64
                if (!any_grad) continue;
                nll_grad_inplace(z, cl.sum_exp, yc, coef.to(ct));
                if (row.reference_model)  // + alpha den (softmax - pi_ref)
                    z.add_(lp.exp_().sub_(pr).mul_((run->terms.den.back() * run->opts->asft_alpha).to(ct).unsqueeze(1)));
                chunk_backward(z, hc, w, rows_grad(a, r), grad_w, &grad_w_empty);
                continue;
            }
            if (method_row(run->opts->method).mask != TokenMask::kCuset)
                throw RuntimeFailure("objective: internal error, a chunk longer than chunk_size for a per-token method");
            // A sample longer than a chunk: its mask and weight need all its losses first.
            at::Tensor nll = at::empty({r}, h.options().dtype(ct)), lse = at::empty_like(nll);
            for (int64_t b = 0; b < r; b += run->chunk) {
                const int64_t rr = std::min(run->chunk, r - b);
                at::Tensor z = chunk_logits(h.narrow(0, a + b, rr), w);
                ChunkLoss cl = softmax_inplace(z, y.narrow(0, a + b, rr));
                n_bad.add_(cl.n_bad);
                nll.narrow(0, b, rr).copy_(cl.nll);
                lse.narrow(0, b, rr).copy_(cl.lse);
            }
            at::Tensor coef = run->weigher->weigh(g, nll, run->terms).to(ct);
            if (!any_grad) continue;
            for (int64_t b = 0; b < r; b += run->chunk) {
                const int64_t rr = std::min(run->chunk, r - b);
                at::Tensor hc = h.narrow(0, a + b, rr);
                at::Tensor p = chunk_logits(hc, w);
                p.sub_(lse.narrow(0, b, rr).unsqueeze(1)).exp_();
                nll_grad_inplace(p, at::Tensor(), y.narrow(0, a + b, rr), coef.narrow(0, b, rr));
                chunk_backward(p, hc, w, rows_grad(a + b, rr), grad_w, &grad_w_empty);
            }
        }
        if (grad_w.defined() && grad_w_empty) grad_w.zero_();  // no chunk reached the backward
        run->terms.n_bad = n_bad;
        at::Tensor numerator = n == 0 ? at::zeros({}, h.options().dtype(ct))
                                      : (at::cat(run->terms.coef).to(ct) * at::cat(run->terms.nll)).sum();
        if (n > 0 && !run->terms.extra_num.empty()) numerator = numerator + at::cat(run->terms.extra_num).sum().to(ct);
        ctx->saved_data["grad_h"] = grad_h;
        ctx->saved_data["grad_w"] = grad_w;
        ctx->saved_data["weight_dtype"] = static_cast<int64_t>(w.scalar_type());
        return numerator;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        if (ctx->saved_data.count("used"))
            throw RuntimeFailure("objective: the fused numerator was back-propagated twice "
                                 "(retain_graph is not supported)");
        ctx->saved_data["used"] = true;
        at::Tensor g = grads[0];  // [] upstream gradient, 1 for numerator.backward()
        at::Tensor grad_h = ctx->saved_data["grad_h"].toTensor();
        at::Tensor grad_w = ctx->saved_data["grad_w"].toTensor();
        ctx->saved_data["grad_h"] = at::Tensor();  // let autograd own the only reference
        ctx->saved_data["grad_w"] = at::Tensor();
        const auto wt = static_cast<at::ScalarType>(ctx->saved_data["weight_dtype"].toInt());
        if (grad_h.defined()) grad_h.mul_(g);
        if (grad_w.defined()) grad_w = grad_w.mul_(g).to(wt);
        return {grad_h, grad_w, at::Tensor(), at::Tensor()};
    }
};

// ------------------------------------------------------------------ compute(), in its parts

// The micro-batch's reference probabilities, which a method with reference scores needs.
void check_reference_prob(const ObjectiveOptions& o, const MicroBatchTargets& t) {
    if (!t.reference_prob.defined() || t.reference_prob.sizes() != t.labels.sizes())
        throw RuntimeFailure(strprintf("objective: method %s needs the reference model's [B, T] target "
                                       "probabilities (objective.rho1.reference_scores)",
                                       method_name(o.method)));
}

// The micro-batch's confidences, which confidence.source cached needs.
void check_cached_confidence(const MicroBatchTargets& t) {
    if (!t.confidence.defined() || t.confidence.sizes() != t.labels.sizes())
        throw RuntimeFailure("objective: confidence.source is cached but the micro-batch has no "
                             "[B, T] confidence tensor");
}

// What compute() needs of its inputs, as RuntimeFailures naming what does not fit.
void check_compute_inputs(const ObjectiveOptions& o, bool two_passes, const at::Tensor& hidden,
                          const at::Tensor& lm_head, const MicroBatchTargets& t, std::optional<double> batch_tau,
                          const ReferenceForward* reference) {
    check_model_tensors(hidden, 3, lm_head, "objective");
    if (t.labels.sizes() != hidden.sizes().slice(0, 2))
        throw RuntimeFailure(strprintf("objective: labels %s do not match hidden states %s",
                                       c10::str(t.labels.sizes()).c_str(),
                                       c10::str(hidden.sizes()).c_str()));
    if (two_passes && !batch_tau)
        throw RuntimeFailure("objective: threshold mode batch_quantile needs the step's threshold "
                             "from the first pass (batch_tau)");
    const MethodRow& row = method_row(o.method);
    if (two_passes && row.pass == StepPass::kConfidenceQuantile && !(*batch_tau >= 0.0 && *batch_tau <= 1.0))
        throw RuntimeFailure(strprintf("objective: batch_tau %g is not a probability", *batch_tau));
    if (two_passes && row.pass == StepPass::kExcessLoss && std::isnan(*batch_tau))
        throw RuntimeFailure(strprintf("objective: %s's step score threshold is NaN", row.name));
    if (row.reference_scores) check_reference_prob(o, t);
    if (row.reference_model) {
        if (!reference)
            throw RuntimeFailure(strprintf("objective: method %s needs the reference model's forward pass", row.name));
        check_model_tensors(reference->hidden, 3, reference->lm_head, "objective (reference)");
        if (reference->hidden.sizes() != hidden.sizes() || reference->lm_head.sizes() != lm_head.sizes())
            throw RuntimeFailure(strprintf("objective: reference hidden %s / lm_head %s do not match %s / %s",
                                           c10::str(reference->hidden.sizes()).c_str(),
                                           c10::str(reference->lm_head.sizes()).c_str(),
                                           c10::str(hidden.sizes()).c_str(), c10::str(lm_head.sizes()).c_str()));
    }
    if (t.sensitive.defined() &&
        (t.sensitive.sizes() != t.labels.sizes() || t.sensitive.scalar_type() != at::kBool))
        throw RuntimeFailure("objective: sensitive must be [B, T] bool like labels");
    if (o.cached_confidence) check_cached_confidence(t);
}

// The valid targets of a micro-batch on the device, in the plan's order (grouped by sample).
struct ValidRows {
    at::Tensor y;              // [n] int64 labels
    at::Tensor sample;         // [n] int64 sample of each row
    at::Tensor h;              // [n, D] hidden rows, model dtype
    at::Tensor sens;           // [n] bool
    at::Tensor cached;         // [n] fp64 cached confidences; undefined unless confidence.source is cached
    at::Tensor ref_p, ref_ce;  // reference scores: [n] fp64 p_ref and -log p_ref; undefined otherwise
    at::Tensor ref_h;          // a reference model: [n, D] its hidden rows; undefined otherwise
};

ValidRows valid_rows(const ObjectiveOptions& o, const Plan& plan, const at::Tensor& hidden,
                     const MicroBatchTargets& t, const ReferenceForward* reference) {
    const at::Device dev = hidden.device();
    const int64_t D = hidden.size(2);
    const auto i64 = at::TensorOptions().dtype(at::kLong);
    ValidRows r;
    at::Tensor rows = at::tensor(plan.rows, i64).to(dev);   // [n]
    r.y = at::tensor(plan.labels, i64).to(dev);             // [n]
    r.sample = at::tensor(plan.sample, i64).to(dev);        // [n]
    r.h = hidden.reshape({-1, D}).index_select(0, rows);    // [n, D] model dtype
    r.sens = t.sensitive.defined() ? t.sensitive.reshape({-1}).to(dev).index_select(0, rows)
                                   : at::zeros({plan.n}, at::TensorOptions().dtype(at::kBool).device(dev));
    if (o.cached_confidence) r.cached = t.confidence.reshape({-1}).to(dev).index_select(0, rows).to(at::kDouble);
    const MethodRow& row = method_row(o.method);
    if (row.reference_scores) {
        r.ref_p = t.reference_prob.reshape({-1}).to(dev).index_select(0, rows).to(at::kDouble);
        r.ref_ce = -at::log(r.ref_p);
    }
    if (row.reference_model) r.ref_h = reference->hidden.reshape({-1, D}).index_select(0, rows);
    return r;
}

// The reference path (chunk_size 0): full [n, V] logits, plain autograd. Returns the numerator
// with its graph; `terms` gets every group's parts.
at::Tensor numerator_full_logits(const ObjectiveOptions& o, const ValidRows& r, const at::Tensor& lm_head,
                                 const ReferenceForward* reference, const Plan& plan, const Weigher& weigher,
                                 Terms& terms) {
    const at::ScalarType ct = compute_dtype(r.h);
    at::Tensor z = full_logits(r.h, lm_head, "token_nll (full logits)");  // [n, V] with grad
    at::Tensor n_bad = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(r.h.device()));
    at::Tensor nll = at::cross_entropy_loss(z, r.y, /*weight=*/{}, at::Reduction::None, kIgnoreIndex);
    const MethodRow& row = method_row(o.method);
    LogitTerms x;
    at::Tensor kl;  // [n] with grad (a reference model)
    if (row.weight == TokenWeight::kEntropy) {
        at::NoGradGuard no_grad;
        x.entropy_weight = eaft_weight(z.detach(), o);
    }
    if (row.reference_model) {
        at::Tensor zr, lr, pr;
        {
            at::NoGradGuard no_grad;
            zr = chunk_logits(r.ref_h, reference->lm_head.detach());
            n_bad = rows_nonfinite(zr);
            std::tie(lr, pr) = reference_probs(zr);
        }
        kl = (pr * (lr - at::log_softmax(z, 1))).sum(1);
        x.kl = kl.detach().to(at::kDouble);
    }
    at::Tensor coef = weigher.weigh(plan.groups[0], nll.detach(), terms, x);
    at::Tensor numerator = (coef.to(ct) * nll).sum();
    if (kl.defined()) numerator = numerator + ((terms.den.back() * o.asft_alpha).to(ct) * kl).sum();
    terms.n_bad = n_bad;
    return numerator;
}

// The fused path (chunk_size > 0): chunk by chunk, the gradients computed on the way and handed to
// autograd (FusedObjective). Returns the numerator; `terms` gets every group's parts.
at::Tensor numerator_fused(const ObjectiveOptions& o, const ValidRows& r, const at::Tensor& lm_head,
                           const ReferenceForward* reference, const Plan& plan, const Weigher& weigher,
                           Terms& terms) {
    FusedRun run{&plan, &weigher, o.chunk_size,
                 at::GradMode::is_enabled() && r.h.requires_grad(),
                 at::GradMode::is_enabled() && lm_head.requires_grad(), {}, &o, {}, {}};
    if (reference) {
        run.ref_h = r.ref_h;
        run.ref_w = reference->lm_head.detach();
    }
    at::Tensor numerator = FusedObjective::apply(r.h, lm_head, r.y, &run);
    terms = std::move(run.terms);
    return numerator;
}

// The statistics, the denominator and the per-sample weights of `out` from the groups' parts, in
// one transfer from the device: the statistics in ObjectiveStats' buffer layout (the per-sample
// ones at their identities, summed on the host below), then the denominator and the counts of
// non-finite logits and of bad cached or reference probabilities, then the per-sample values.
void finish_output(const ObjectiveOptions& o, const Plan& plan, const ValidRows& r, const Terms& terms,
                   std::optional<double> batch_tau, ObjectiveOutput& out) {
    at::Tensor nll = at::cat(terms.nll).to(at::kDouble), conf = at::cat(terms.conf);
    at::Tensor kept = at::cat(terms.kept), only = at::cat(terms.only_sensitive);
    at::Tensor den = at::cat(terms.den);
    const auto f64 = conf.options();
    at::Tensor bad_conf = r.cached.defined()
                              ? at::logical_not(at::isfinite(r.cached).logical_and_(r.cached >= 0)
                                                    .logical_and_(r.cached <= 1)).sum()
                              : at::zeros({}, at::TensorOptions().dtype(at::kLong).device(r.h.device()));
    if (r.ref_p.defined())
        bad_conf = bad_conf + at::logical_not(at::isfinite(r.ref_p).logical_and_(r.ref_p >= 0)
                                                  .logical_and_(r.ref_p <= 1)).sum();
    using F = ObjectiveStats::Field;
    const std::vector<double> identity = ObjectiveStats{}.to_buffer();
    std::vector<at::Tensor> fields;  // [kFields] scalars, in the buffer's order
    for (double v : identity) fields.push_back(at::scalar_tensor(v, f64));
    fields[F::kNValid] = at::scalar_tensor(static_cast<double>(plan.n), f64);
    fields[F::kNKept] = kept.sum().to(at::kDouble);
    fields[F::kNSensitive] = r.sens.sum().to(at::kDouble);
    fields[F::kNKeptOnlySensitive] = only.sum().to(at::kDouble);
    fields[F::kConfSumSensitive] = at::where(r.sens, conf, 0.0).sum();
    fields[F::kConfSumPlain] = at::where(r.sens, 0.0, conf).sum();
    fields[F::kNllSumValid] = nll.sum();
    fields[F::kTokWSum] = at::cat(terms.tokw).sum();
    fields[F::kKlSum] = terms.kl.empty() ? at::zeros({}, f64) : at::cat(terms.kl).sum();
    constexpr size_t kDen = F::kFields, kBadLogits = kDen + 1, kBadProbs = kDen + 2, kPerSample = kDen + 3;
    fields.push_back(den.sum());
    fields.push_back(terms.n_bad.to(at::kDouble));
    fields.push_back(bad_conf.to(at::kDouble));
    const bool per_sample = !terms.weight.empty();
    std::vector<at::Tensor> pack{at::stack(fields)};
    if (per_sample)
        for (auto* v : {&terms.tau, &terms.weight, &terms.win_begin, &terms.win_end, &terms.win_mean})
            pack.push_back(v->empty() ? at::full({plan.S}, kNaN, f64) : at::cat(*v));
    at::Tensor host = at::cat(pack).to(at::kCPU);
    const double* hp = host.data_ptr<double>();

    throw_if_nonfinite(static_cast<int64_t>(hp[kBadLogits]), "objective");
    if (hp[kBadProbs] > 0)
        throw InputError(strprintf("objective: %lld cached confidence(s) are not finite values in "
                                   "[0, 1] (a damaged or mismatched score file)",
                                   static_cast<long long>(hp[kBadProbs])));
    ObjectiveStats& st = out.stats;
    st = ObjectiveStats::from_buffer(hp);
    out.denominator = hp[kDen];
    const double fixed_tau = !o.mask_confidence || method_row(o.method).mask != TokenMask::kCuset ? kNaN
                             : o.threshold_mode == ThresholdMode::kFixed     ? o.threshold_value
                             : o.threshold_mode == ThresholdMode::kBatchQuantile ? *batch_tau
                                                                                 : kNaN;
    for (int64_t s = 0; s < plan.S; ++s) {
        SampleWeight& sw = out.samples[s];
        if (sw.n_valid == 0) continue;
        if (per_sample) {
            const double* ps = hp + kPerSample;
            sw.tau = ps[s];
            sw.weight = ps[plan.S + s];
            sw.win_begin = static_cast<int64_t>(ps[2 * plan.S + s]);
            sw.win_end = static_cast<int64_t>(ps[3 * plan.S + s]);
            sw.win_mean = ps[4 * plan.S + s];
        } else {
            sw.tau = fixed_tau;
        }
        ++st.n_samples;
        st.w_min = std::min(st.w_min, sw.weight);
        st.w_max = std::max(st.w_max, sw.weight);
        st.w_sum += sw.weight;
        if (!std::isnan(sw.tau)) {
            st.sum_tau += sw.tau;
            ++st.n_tau;
        }
    }
}

double ratio(double a, int64_t b) { return b > 0 ? a / static_cast<double>(b) : kNaN; }

// How two values of a statistic combine (CUSET_OBJECTIVE_STATS' merge column).
template <class T> T merge_sum(T a, T b) { return a + b; }
template <class T> T merge_min(T a, T b) { return std::min(a, b); }
template <class T> T merge_max(T a, T b) { return std::max(a, b); }

}  // namespace

// ------------------------------------------------------------------ public API

void ObjectiveStats::merge(const ObjectiveStats& o) {
#define CUSET_STATS_MERGE(type, member, index, merge, init) member = merge_##merge(member, o.member);
    CUSET_OBJECTIVE_STATS(CUSET_STATS_MERGE)
#undef CUSET_STATS_MERGE
}

std::vector<double> ObjectiveStats::to_buffer() const {
    std::vector<double> v(kFields);
#define CUSET_STATS_TO(type, member, index, merge, init) v[index] = static_cast<double>(member);
    CUSET_OBJECTIVE_STATS(CUSET_STATS_TO)
#undef CUSET_STATS_TO
    return v;
}

ObjectiveStats ObjectiveStats::from_buffer(const double* v) {
    ObjectiveStats s;
#define CUSET_STATS_FROM(type, member, index, merge, init) s.member = static_cast<type>(v[index]);
    CUSET_OBJECTIVE_STATS(CUSET_STATS_FROM)
#undef CUSET_STATS_FROM
    return s;
}

double ObjectiveStats::kept_fraction() const { return ratio(n_kept, n_valid); }
double ObjectiveStats::sensitive_fraction() const { return ratio(n_sensitive, n_valid); }
double ObjectiveStats::kept_only_sensitive_fraction() const { return ratio(n_kept_only_sensitive, n_valid); }
double ObjectiveStats::mean_tau() const { return ratio(sum_tau, n_tau); }
double ObjectiveStats::w_mean() const { return ratio(w_sum, n_samples); }
double ObjectiveStats::conf_mean_sensitive() const { return ratio(conf_sum_sensitive, n_sensitive); }
double ObjectiveStats::conf_mean_plain() const { return ratio(conf_sum_plain, n_valid - n_sensitive); }
double ObjectiveStats::nll_mean() const { return ratio(nll_sum_valid, n_valid); }
double ObjectiveStats::tok_w_mean() const { return ratio(tok_w_sum, n_valid); }
double ObjectiveStats::kl_mean() const { return ratio(kl_sum, n_valid); }

CusetTokenWeights cuset_token_weights(const at::Tensor& conf, const at::Tensor& sensitive,
                                      const std::vector<int64_t>& counts, const ObjectiveOptions& opts) {
    if (method_row(opts.method).mask != TokenMask::kCuset)
        throw RuntimeFailure("cuset_token_weights: the options are not method cuset's");
    if (opts.mask_confidence && opts.threshold_mode == ThresholdMode::kBatchQuantile)
        throw UsageError("CuSeT token weights take a per-sequence or fixed threshold: objective.mask.threshold.mode "
                         "sample_quantile or fixed, not batch_quantile");
    const int64_t n = conf.numel();
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    if (total != n || sensitive.numel() != n)
        throw RuntimeFailure(strprintf("cuset_token_weights: %lld confidences, %lld sensitivity flags, counts summing to %lld",
                                       (long long)n, (long long)sensitive.numel(), (long long)total));
    CusetTokenWeights out;
    if (n == 0) {
        const auto f64 = conf.options().dtype(at::kDouble);
        return {at::zeros({0}, f64), at::zeros({0}, f64.dtype(at::kBool)),
                at::ones({static_cast<int64_t>(counts.size())}, f64)};
    }
    // The sequences as one group of whole samples, their confidences given (as the cached source
    // gives them to the SFT objective), through the same Weigher as the training objective.
    Plan p;
    p.n = n;
    p.S = static_cast<int64_t>(counts.size());
    p.count = counts;
    p.groups.push_back({0, n, 0, p.S});
    const at::Tensor c = conf.reshape({n}).to(at::kDouble);
    std::vector<int64_t> sample;
    sample.reserve(static_cast<size_t>(n));
    for (int64_t s = 0; s < p.S; ++s) sample.insert(sample.end(), static_cast<size_t>(counts[s]), s);
    const at::Tensor sample_dev = at::tensor(sample, at::kLong).to(c.device());
    ObjectiveOptions o = opts;
    o.cached_confidence = true;
    Weigher weigher(o, p, std::nullopt, sensitive.reshape({n}).to(c.device(), at::kBool), c, sample_dev);
    Terms t;
    out.coefficient = weigher.weigh(p.groups[0], at::zeros({n}, c.options()), t);
    out.kept = t.kept[0];
    out.weight = t.weight.empty() ? at::ones({p.S}, c.options()) : t.weight[0];
    return out;
}

Objective::Objective(ObjectiveOptions opts) : opts_(std::move(opts)) {
    // The objective's own bounds: a region window of at least one token, EAFT's k of at least 2
    // (ln 1 = 0), a rho1 share that keeps tokens. A configuration's values meet the same ranges on
    // load (app/config_schema.cpp); options built in code meet them here.
    constexpr int64_t kWindowMax = int64_t{1} << 24, kEaftKMax = int64_t{1} << 20;
    if (opts_.window < 1 || opts_.window > kWindowMax)
        throw UsageError(strprintf("objective: region window %lld is out of range [1, %lld]",
                                   static_cast<long long>(opts_.window), static_cast<long long>(kWindowMax)));
    if (opts_.eaft_k < 2 || opts_.eaft_k > kEaftKMax)
        throw UsageError(strprintf("objective: eaft k %lld is out of range [2, %lld]", static_cast<long long>(opts_.eaft_k),
                                   static_cast<long long>(kEaftKMax)));
    if (!(opts_.rho1_keep_fraction >= 1e-6 && opts_.rho1_keep_fraction <= 1.0))  // NaN is out of every range
        throw UsageError(strprintf("objective: rho1 keep fraction %g is out of range [1e-06, 1]", opts_.rho1_keep_fraction));
}

bool Objective::needs_two_passes() const {
    switch (method_row(opts_.method).pass) {
        case StepPass::kNone: return false;
        case StepPass::kConfidenceQuantile:
            return opts_.mask_confidence && opts_.threshold_mode == ThresholdMode::kBatchQuantile;
        case StepPass::kExcessLoss: return true;
    }
    return false;
}

at::Tensor Objective::step_scores(const at::Tensor& hidden, const at::Tensor& lm_head,
                                  const MicroBatchTargets& t) const {
    if (method_row(opts_.method).pass != StepPass::kExcessLoss) return confidences(hidden, lm_head, t);
    check_reference_prob(opts_, t);
    at::NoGradGuard no_grad;
    const int64_t D = lm_head.size(-1);
    at::Tensor y = t.labels.reshape({-1}).to(hidden.device());  // [N]
    at::Tensor nll = token_nll(hidden.reshape({-1, D}), lm_head, y, opts_.chunk_size);
    at::Tensor idx = at::nonzero(y != kIgnoreIndex).squeeze(1);
    at::Tensor ref_ce = -at::log(t.reference_prob.reshape({-1}).to(hidden.device()).index_select(0, idx).to(at::kDouble));
    return nll.index_select(0, idx).to(at::kDouble) - ref_ce;  // [n_valid], as compute() scores
}

double Objective::step_threshold(const at::Tensor& all_scores) const {
    if (method_row(opts_.method).pass != StepPass::kExcessLoss) return quantile_linear(all_scores, opts_.q);
    if (!all_scores.defined() || all_scores.numel() == 0) throw RuntimeFailure("step_threshold: no scores");
    at::Tensor v = std::get<0>(at::sort(all_scores.reshape({-1}).to(at::kDouble).to(at::kCPU), /*dim=*/0,
                                        /*descending=*/true));
    const int64_t n = v.numel();
    // keep = ceil(f n); the 1e-9 keeps 0.6 * 10 = 6.000000000000001 at 6
    const auto keep = std::clamp<int64_t>(
        static_cast<int64_t>(std::ceil(opts_.rho1_keep_fraction * static_cast<double>(n) - 1e-9)), 1, n);
    return v.data_ptr<double>()[keep - 1];
}

at::Tensor Objective::confidences(const at::Tensor& hidden, const at::Tensor& lm_head,
                                  const at::Tensor& labels) const {
    at::NoGradGuard no_grad;
    const int64_t D = lm_head.size(-1);
    at::Tensor y = labels.reshape({-1}).to(hidden.device());  // [N]
    at::Tensor nll = token_nll(hidden.reshape({-1, D}), lm_head, y, opts_.chunk_size);
    at::Tensor idx = at::nonzero(y != kIgnoreIndex).squeeze(1);
    return at::exp(-nll.index_select(0, idx).to(at::kDouble));  // [n_valid], as compute() makes c
}

at::Tensor Objective::confidences(const at::Tensor& hidden, const at::Tensor& lm_head,
                                  const MicroBatchTargets& t) const {
    if (!opts_.cached_confidence) return confidences(hidden, lm_head, t.labels);
    check_cached_confidence(t);
    at::Tensor y = t.labels.reshape({-1}).to(t.confidence.device());
    at::Tensor idx = at::nonzero(y != kIgnoreIndex).squeeze(1);
    return t.confidence.reshape({-1}).index_select(0, idx).to(at::kDouble);
}

ObjectiveOutput Objective::compute(const at::Tensor& hidden, const at::Tensor& lm_head,
                                   const MicroBatchTargets& t, std::optional<double> batch_tau,
                                   const ReferenceForward* reference) const {
    const ObjectiveOptions& o = opts_;
    check_compute_inputs(o, needs_two_passes(), hidden, lm_head, t, batch_tau, reference);
    Plan plan = plan_make(t, lm_head.size(0));
    ObjectiveOutput out;
    out.samples.resize(plan.S);
    for (int64_t s = 0; s < plan.S; ++s) {
        out.samples[s].id = t.sample_ids.empty() ? std::to_string(s) : t.sample_ids[s];
        out.samples[s].n_valid = plan.count[s];
    }
    if (plan.n == 0) {  // nothing to learn from: a zero the trainer may call backward() on
        out.numerator = at::zeros({}, hidden.options().dtype(compute_dtype(hidden)));
        if (at::GradMode::is_enabled()) out.numerator.requires_grad_(true);
        return out;
    }
    const ValidRows rows = valid_rows(o, plan, hidden, t, reference);
    Weigher weigher(o, plan, batch_tau, rows.sens, rows.cached, rows.sample, rows.ref_ce);
    plan_groups(plan, o.chunk_size, weigher.needs_whole_samples());
    Terms terms;
    out.numerator = o.chunk_size == 0 ? numerator_full_logits(o, rows, lm_head, reference, plan, weigher, terms)
                                      : numerator_fused(o, rows, lm_head, reference, plan, weigher, terms);
    finish_output(o, plan, rows, terms, batch_tau, out);
    return out;
}

double quantile_linear(const at::Tensor& values, double q) {
    if (!values.defined() || values.numel() == 0)
        throw RuntimeFailure("quantile_linear: no values");
    if (!(q >= 0.0 && q <= 1.0)) throw RuntimeFailure(strprintf("quantile_linear: q = %g", q));
    at::Tensor v = std::get<0>(at::sort(values.reshape({-1}).to(at::kDouble).to(at::kCPU)));
    const int64_t n = v.numel();
    const double* p = v.data_ptr<double>();
    const double virt = static_cast<double>(n - 1) * q;
    if (virt >= static_cast<double>(n - 1)) return p[n - 1];
    const double fl = std::floor(virt);
    const auto lo = static_cast<int64_t>(fl);
    return lerp_numpy(p[lo], p[lo + 1], virt - fl);
}

void gradients_scale(const std::vector<at::Tensor>& params, double inv_denominator) {
    if (!std::isfinite(inv_denominator))
        throw RuntimeFailure(strprintf("gradients_scale: 1/denominator = %g (a step without kept "
                                       "tokens must be skipped)", inv_denominator));
    at::NoGradGuard no_grad;
    for (const at::Tensor& p : params)
        if (p.defined() && p.grad().defined()) p.mutable_grad().mul_(inv_denominator);
}

}  // namespace cuset
