// Tensor comparisons for the test programs that use LibTorch, measured like every numeric check
// (test_util.h: CUSET_TOLERANCE_LOG). Header-only: test_util.cpp is linked into test programs
// without LibTorch as well.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace cuset::test {

// The largest |a - b| over the elements, in fp64 (NaN when either holds a NaN).
inline double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
    at::Tensor d = (a.to(at::kDouble) - b.to(at::kDouble)).abs();
    if (d.numel() == 0) return 0.0;
    if (d.isnan().any().item<bool>()) return std::nan("");
    return d.max().item<double>();
}

// How close `actual` is to `expected` under |a - e| <= atol + rtol |e| (at::allclose's rule),
// elementwise: the element that comes closest to its bound (largest ratio), with its |a - e|
// (err) and its atol + rtol |e| (bound), so that checking err <= bound is the whole comparison and
// recording them gives the smallest margin over the tensor. max_abs: the largest |a - e|. A NaN
// makes err NaN (the check fails).
struct Closeness {
    double err = 0, bound = 1, max_abs = 0;
    std::string worst;  // a caller's name for the tensor of the worst element (merge)
    bool empty = true;  // nothing compared yet (merge takes the first comparison whole)
    double ratio() const { return err == 0 ? 0.0 : err / bound; }
    // Keeps the worse of the two (a NaN wins; between exact ones, the tighter bound).
    void merge(const Closeness& o) {
        max_abs = std::max(max_abs, o.max_abs);
        const bool worse = std::isnan(o.err) || (!std::isnan(err) && o.ratio() > ratio()) ||
                           (o.ratio() == ratio() && o.bound < bound);
        if (empty || worse) {
            empty = false;
            err = o.err;
            bound = o.bound;
            worst = o.worst;
        }
    }
};

// Elementwise, where `keep` (broadcastable, bool) is true if it is given.
inline Closeness closeness(const at::Tensor& actual, const at::Tensor& expected, double rtol, double atol,
                           const at::Tensor& keep = {}, const std::string& name = "") {
    Closeness c;
    c.worst = name;
    c.bound = atol;
    c.empty = false;
    const at::Tensor a = actual.detach().to(at::kDouble), e = expected.detach().to(at::kDouble);
    at::Tensor err = (a - e).abs();
    if (keep.defined()) err = at::where(keep.to(at::kBool), err, at::zeros_like(err));
    if (err.numel() == 0) return c;
    if (err.isnan().any().item<bool>()) {
        c.err = c.max_abs = std::nan("");
        return c;
    }
    const at::Tensor bound = (atol + rtol * e.abs()).expand_as(err);
    const at::Tensor ratio = at::where(err == 0, at::zeros_like(err), err / bound);  // 0 / 0: exact
    const int64_t worst = ratio.reshape({-1}).argmax().item<int64_t>();
    c.err = err.reshape({-1})[worst].item<double>();
    c.bound = bound.reshape({-1})[worst].item<double>();
    c.max_abs = err.max().item<double>();
    return c;
}

// |actual - expected| <= bound elementwise (bound: a tensor broadcastable to them, e.g. a rounding
// bound derived per element from the magnitudes of the terms that formed it).
inline Closeness closeness_to_bound(const at::Tensor& actual, const at::Tensor& expected, const at::Tensor& bound) {
    Closeness c;
    c.empty = false;
    const at::Tensor err = (actual.detach().to(at::kDouble) - expected.detach().to(at::kDouble)).abs();
    const at::Tensor b = bound.detach().to(at::kDouble).expand_as(err);
    if (err.numel() == 0) return c;
    if (err.isnan().any().item<bool>()) {
        c.err = c.max_abs = std::nan("");
        return c;
    }
    const at::Tensor ratio = at::where(err == 0, at::zeros_like(err), err / b);
    const int64_t worst = ratio.reshape({-1}).argmax().item<int64_t>();
    c.err = err.reshape({-1})[worst].item<double>();
    c.bound = b.reshape({-1})[worst].item<double>();
    c.max_abs = err.max().item<double>();
    return c;
}

// at::allclose(actual, expected, rtol, atol) made at `site`, measured (the closest element).
inline void expect_allclose_at(const Site& site, const at::Tensor& actual, const at::Tensor& expected, double rtol,
                               double atol, const std::string& what) {
    ASSERT_TRUE(actual.defined()) << what << ": undefined";
    ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
    const Closeness c = closeness(actual, expected, rtol, atol);
    CUSET_EXPECT_WITHIN_AT(site, c.err, c.bound)
        << what << ": max |actual - expected| = " << c.max_abs << " (rtol " << rtol << ", atol " << atol << ")";
}

// |actual - expected| <= bound elementwise, made at `site`, measured (the closest element).
inline void expect_within_bound_at(const Site& site, const at::Tensor& actual, const at::Tensor& expected,
                                   const at::Tensor& bound, const std::string& what) {
    ASSERT_TRUE(actual.defined()) << what << ": undefined";
    ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
    const Closeness c = closeness_to_bound(actual, expected, bound);
    CUSET_EXPECT_WITHIN_AT(site, c.err, c.bound) << what << ": max |actual - expected| = " << c.max_abs;
}

}  // namespace cuset::test

// CUSET_EXPECT_ELEMENTWISE(actual, expected, bound, what): expect_within_bound_at here.
#define CUSET_EXPECT_ELEMENTWISE(actual, expected, bound, what) \
    ::cuset::test::expect_within_bound_at(CUSET_HERE, actual, expected, bound, what)

// CUSET_EXPECT_ALLCLOSE(actual, expected, rtol, atol, what): expect_allclose_at here.
#define CUSET_EXPECT_ALLCLOSE(actual, expected, rtol, atol, what) \
    ::cuset::test::expect_allclose_at(CUSET_HERE, actual, expected, rtol, atol, what)
