// The LM head's per-token loss in chunks of rows (model/lm_head.h): the chunk operations, the
// chunked NLL with its recomputing backward, and token_nll.
#include "cuset/model/lm_head.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

namespace lm_head {

at::ScalarType compute_dtype(const at::Tensor& t) {
    return t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

at::Tensor chunk_logits(const at::Tensor& h, const at::Tensor& w) {
    const at::ScalarType ct = compute_dtype(h);
    if (h.scalar_type() == ct) return at::mm(h, w.t());
    if (h.is_cuda()) return at::mm(h, w.t(), ct);
    return at::mm(h, w.t()).to(ct);
}

// amax + sum are two vectorised passes; aminmax over dim 1 is ~5x slower on the CPU.
ChunkLoss softmax_inplace(at::Tensor& z, const at::Tensor& y) {
    at::Tensor hi = z.amax(/*dim=*/1);  // [r]; NaN propagates
    at::Tensor n_bad = at::logical_not(at::isfinite(z.sum(1))).sum();
    at::Tensor zy = z.gather(1, y.unsqueeze(1)).squeeze(1);  // [r]
    z.sub_(hi.unsqueeze(1)).exp_();
    at::Tensor s = z.sum(1);  // [r]
    at::Tensor lse = hi + s.log();
    return {lse, lse - zy, s, n_bad};
}

void nll_grad_inplace(at::Tensor& p, const at::Tensor& sum_exp, const at::Tensor& y,
                      const at::Tensor& g) {
    p.mul_((sum_exp.defined() ? g / sum_exp : g).unsqueeze(1));
    p.scatter_add_(1, y.unsqueeze(1), -g.unsqueeze(1));
}

void chunk_backward(const at::Tensor& gz, const at::Tensor& h, const at::Tensor& w,
                    at::Tensor grad_h, at::Tensor& grad_w, bool* grad_w_empty) {
    const bool write = *grad_w_empty;
    if (grad_w.defined()) *grad_w_empty = false;
    if (h.scalar_type() == gz.scalar_type()) {
        if (grad_h.defined()) at::mm_out(grad_h, gz, w);
        if (grad_w.defined() && write) at::mm_out(grad_w, gz.t(), h);
        else if (grad_w.defined()) grad_w.addmm_(gz.t(), h);
        return;
    }
    at::Tensor g = gz.to(h.scalar_type());  // [r, V] model dtype
    if (grad_h.defined()) at::mm_out(grad_h, g, w);
    if (grad_w.defined()) {
        at::Tensor gw = h.is_cuda() ? at::mm(g.t(), h, grad_w.scalar_type()) : at::mm(g.t(), h);  // [V, D]
        if (write) grad_w.copy_(gw);
        else grad_w.add_(gw);
    }
}

void throw_if_nonfinite(int64_t n_bad, const char* where) {
    if (n_bad > 0)
        throw NonFiniteError(strprintf("%s: %lld token(s) have non-finite logits (NaN or inf in the "
                                       "hidden states or lm_head weight)",
                                       where, static_cast<long long>(n_bad)));
}

at::Tensor full_logits(const at::Tensor& h, const at::Tensor& w, const char* where) {
    at::Tensor z = chunk_logits(h, w);  // [n, V]
    {
        at::NoGradGuard no_grad;
        throw_if_nonfinite(at::logical_not(at::isfinite(z)).any(1).sum().item<int64_t>(), where);
    }
    return z;
}

void check_model_tensors(const at::Tensor& hidden, int64_t hidden_dim, const at::Tensor& weight,
                         const char* where) {
    if (!hidden.defined() || !weight.defined())
        throw RuntimeFailure(strprintf("%s: hidden states or lm_head weight undefined", where));
    if (hidden.dim() != hidden_dim || weight.dim() != 2 ||
        hidden.size(hidden_dim - 1) != weight.size(1))
        throw RuntimeFailure(strprintf("%s: hidden %s and lm_head %s do not match ([.., D] and [V, D])",
                                       where, c10::str(hidden.sizes()).c_str(),
                                       c10::str(weight.sizes()).c_str()));
    if (hidden.scalar_type() != weight.scalar_type() || hidden.device() != weight.device())
        throw RuntimeFailure(strprintf("%s: hidden (%s, %s) and lm_head (%s, %s) differ in dtype or device",
                                       where, c10::toString(hidden.scalar_type()),
                                       hidden.device().str().c_str(),
                                       c10::toString(weight.scalar_type()),
                                       weight.device().str().c_str()));
    if (!at::isFloatingType(hidden.scalar_type()))
        throw RuntimeFailure(strprintf("%s: hidden states must be floating point", where));
}

}  // namespace lm_head

namespace {

using namespace lm_head;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Token NLL over valid rows, chunked, backward recomputing each chunk (the general per-token
// function; the training objective has its own fused path, train/objective.cpp).
struct ChunkedNll : public torch::autograd::Function<ChunkedNll> {
    // h [n, D], w [V, D] (model dtype), y [n] int64 valid -> [n] compute dtype
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& h, const at::Tensor& w,
                              const at::Tensor& y, int64_t chunk) {
        const int64_t n = h.size(0);
        const auto opts = h.options().dtype(compute_dtype(h));
        at::Tensor nll = at::empty({n}, opts);  // [n]
        at::Tensor lse = at::empty({n}, opts);  // [n]
        at::Tensor n_bad = at::zeros({}, h.options().dtype(at::kLong));
        for (int64_t a = 0; a < n; a += chunk) {
            const int64_t r = std::min(chunk, n - a);
            at::Tensor z = chunk_logits(h.narrow(0, a, r), w);  // [r, V]
            ChunkLoss cl = softmax_inplace(z, y.narrow(0, a, r));
            nll.narrow(0, a, r).copy_(cl.nll);
            lse.narrow(0, a, r).copy_(cl.lse);
            n_bad.add_(cl.n_bad);
        }
        throw_if_nonfinite(n_bad.item<int64_t>(), "token_nll");
        ctx->save_for_backward({h, w, y, lse});
        ctx->saved_data["chunk"] = chunk;
        return nll;
    }

    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor &h = saved[0], &w = saved[1], &y = saved[2], &lse = saved[3];
        const int64_t chunk = ctx->saved_data["chunk"].toInt();
        const int64_t n = h.size(0);
        const at::ScalarType ct = compute_dtype(h);
        at::Tensor g = grads[0].defined() ? grads[0].to(ct) : at::zeros({n}, lse.options());
        at::Tensor grad_h = ctx->needs_input_grad(0) ? at::empty_like(h) : at::Tensor();  // [n, D]
        at::Tensor grad_w =
            ctx->needs_input_grad(1) ? at::empty(w.sizes(), w.options().dtype(ct)) : at::Tensor();
        bool grad_w_empty = true;
        for (int64_t a = 0; a < n; a += chunk) {
            const int64_t r = std::min(chunk, n - a);
            at::Tensor hc = h.narrow(0, a, r);
            at::Tensor p = chunk_logits(hc, w);  // [r, V] -> softmax
            p.sub_(lse.narrow(0, a, r).unsqueeze(1)).exp_();
            nll_grad_inplace(p, at::Tensor(), y.narrow(0, a, r), g.narrow(0, a, r));
            chunk_backward(p, hc, w, grad_h.defined() ? grad_h.narrow(0, a, r) : at::Tensor(),
                           grad_w, &grad_w_empty);
        }
        if (grad_w.defined() && grad_w_empty) grad_w.zero_();  // no rows
        if (grad_w.defined()) grad_w = grad_w.to(w.scalar_type());
        return {grad_h, grad_w, at::Tensor(), at::Tensor()};
    }
};

// The reference: full [n, V] logits through at::cross_entropy_loss, plain autograd.
at::Tensor nll_full(const at::Tensor& h, const at::Tensor& w, const at::Tensor& y) {
    at::Tensor z = full_logits(h, w, "token_nll (full logits)");  // [n, V]
    return at::cross_entropy_loss(z, y, /*weight=*/{}, at::Reduction::None, kIgnoreIndex);
}

// h [n, D], w [V, D], y [n] all valid -> [n]
at::Tensor nll_rows(const at::Tensor& h, const at::Tensor& w, const at::Tensor& y, int64_t chunk) {
    return chunk > 0 ? ChunkedNll::apply(h, w, y, chunk) : nll_full(h, w, y);
}

}  // namespace

at::Tensor token_nll(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& labels,
                     int64_t chunk_size) {
    check_model_tensors(hidden, 2, weight, "token_nll");
    if (!labels.defined() || labels.dim() != 1 || labels.size(0) != hidden.size(0) ||
        labels.scalar_type() != at::kLong)
        throw RuntimeFailure(strprintf("token_nll: labels must be [N] int64 with N = %lld",
                                       static_cast<long long>(hidden.size(0))));
    at::Tensor y = labels.to(hidden.device());  // [N]
    const int64_t V = weight.size(0);
    at::Tensor valid = y != kIgnoreIndex;
    if (at::logical_and(valid, (y < 0).logical_or_(y >= V)).any().item<bool>())
        throw InputError(strprintf("token_nll: a label is outside the vocabulary [0, %lld)",
                                   static_cast<long long>(V)));
    at::Tensor idx = at::nonzero(valid).squeeze(1);  // [n]
    at::Tensor nll = nll_rows(hidden.index_select(0, idx), weight, y.index_select(0, idx), chunk_size);
    return at::zeros({hidden.size(0)}, nll.options()).index_copy(0, idx, nll);
}

}  // namespace cuset
