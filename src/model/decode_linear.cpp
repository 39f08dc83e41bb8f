// The CPU decode-step linear layer (see the header). This file is compiled with OpenMP when the
// LibTorch it links has an OpenMP runtime: at::parallel_for is a header template that runs its
// body serially in a translation unit compiled without it.
#include "cuset/model/decode_linear.h"

#include <algorithm>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/mm.h>
#include <c10/core/GradMode.h>

namespace cuset {

namespace {

// A thread's share holds at least this many weights (about 128 KB of fp32), so small layers do
// not pay for waking threads.
constexpr int64_t kWeightsPerTask = 1 << 15;

// y[o] = sum_i w[o, i] x[i] for rows o in [lo, hi) of the row-major w [., n]. Sixteen independent
// partial sums per row, which the compiler keeps in vector registers; the weight row is read once.
void dot_rows(const float* w, const float* x, float* y, int64_t lo, int64_t hi, int64_t n) {
    constexpr int kLanes = 16;
    for (int64_t o = lo; o < hi; ++o) {
        const float* r = w + o * n;
        float acc[kLanes] = {};
        int64_t i = 0;
        for (; i + kLanes <= n; i += kLanes)
            for (int k = 0; k < kLanes; ++k) acc[k] += r[i + k] * x[i + k];
        float tail = 0.0f;
        for (; i < n; ++i) tail += r[i] * x[i];
        // Pairwise over the lanes.
        for (int width = kLanes / 2; width > 0; width /= 2)
            for (int k = 0; k < width; ++k) acc[k] += acc[k + width];
        y[o] = acc[0] + tail;
    }
}

}  // namespace

bool decode_linear_applies(const at::Tensor& x, const at::Tensor& w) {
    if (!x.is_cpu() || !w.is_cpu() || at::GradMode::is_enabled()) return false;
    if (x.scalar_type() != at::kFloat || w.scalar_type() != at::kFloat || w.dim() != 2 || !w.is_contiguous())
        return false;
    const int64_t in = w.size(1);
    if (x.dim() < 1 || x.size(-1) != in || in == 0) return false;
    const int64_t rows = x.numel() / in;
    return rows >= 1 && rows <= kDecodeLinearMaxRows;
}

at::Tensor decode_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias) {
    if (!decode_linear_applies(x, w) || (bias.defined() && bias.scalar_type() != at::kFloat))
        return at::linear(x, w, bias);
    const int64_t out = w.size(0), in = w.size(1);
    const int64_t rows = x.numel() / in;
    const at::Tensor x2 = x.reshape({rows, in}).contiguous();  // [N, in]
    const int64_t grain = std::max<int64_t>(1, kWeightsPerTask / in);
    at::Tensor y;  // [N, out]
    if (rows == 1) {
        y = at::empty({1, out}, x.options());
        const float* wp = w.const_data_ptr<float>();
        const float* xp = x2.const_data_ptr<float>();
        float* yp = y.mutable_data_ptr<float>();
        at::parallel_for(0, out, grain, [&](int64_t lo, int64_t hi) { dot_rows(wp, xp, yp, lo, hi, in); });
    } else {
        at::Tensor yt = at::empty({out, rows}, x.options());  // [out, N]
        const at::Tensor xt = x2.t();                           // [in, N]
        at::parallel_for(0, out, grain, [&](int64_t lo, int64_t hi) {
            at::NoGradGuard no_grad;  // grad mode is per thread, and on in a fresh OpenMP worker
            at::Tensor slice = yt.narrow(0, lo, hi - lo);  // [hi - lo, N]
            at::mm_out(slice, w.narrow(0, lo, hi - lo), xt);
        });
        y = yt.t().contiguous();
    }
    if (bias.defined()) y.add_(bias);
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = out;
    return y.view(shape);  // [..., out]
}

}  // namespace cuset
