// The CPU decode-step linear layer (model/decode_linear.h) against torch's at::linear in fp64, for
// the shapes a decode step has (one row and 2..16 rows, with and without bias, a [B, 1, in] input,
// input widths that leave a tail after the 16-lane loop), and the cases it must hand to
// at::linear unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include "cuset/model/decode_linear.h"
#include "tensor_check.h"

namespace {

// fp32 sums of `in` products in another order than the reference: the classic bound for a
// recursive sum, |err| <= in * 2^-24 * sum_i |w_i x_i| per output, plus one rounding of the bias
// add and of the result; blocked / pairwise orders have smaller bounds. The check allows 8x that
// worst case: for the 5-wide input a sum reaches half of it (seen: 3.3 u sum |w x|), and every
// bound here keeps 10x over the largest difference seen; a wrong row or a dropped tail is
// off by O(|w x|), 1e5 times more.
// The element closest to its bound (its error and its bound, tensor_check.h's Closeness).
cuset::test::Closeness closeness(const at::Tensor& ours, const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias) {
    const at::Tensor xd = x.to(at::kDouble), wd = w.to(at::kDouble);
    at::Tensor ref = at::linear(xd, wd, bias.defined() ? bias.to(at::kDouble) : at::Tensor());
    at::Tensor mag = at::linear(xd.abs(), wd.abs());
    if (bias.defined()) mag = mag + bias.to(at::kDouble).abs();
    const double u = std::ldexp(1.0, -24);
    at::Tensor bound = 8.0 * (w.size(1) + 2) * u * mag + 1e-30;
    at::Tensor err = (ours.to(at::kDouble) - ref).abs();
    cuset::test::Closeness c;
    c.empty = false;
    if (err.isnan().any().item<bool>()) {
        c.err = std::nan("");
        return c;
    }
    const int64_t worst = (err / bound).reshape({-1}).argmax().item<int64_t>();
    c.err = err.reshape({-1})[worst].item<double>();
    c.bound = bound.reshape({-1})[worst].item<double>();
    c.max_abs = err.max().item<double>();
    return c;
}

struct Shape {
    int64_t out, in;
};

}  // namespace

TEST(DecodeLinear, MatchesLinearWithinTheFp32SummationBound) {
    at::NoGradGuard no_grad;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
    // 4096x256: tiny-coder's lm_head; 32768x64: many rows for the threads; 37x5 and 300x1000:
    // widths below and not a multiple of the 16 lanes.
    for (Shape s : {Shape{4096, 256}, Shape{32768, 64}, Shape{37, 5}, Shape{300, 1000}}) {
        at::Tensor w = at::randn({s.out, s.in}, gen);
        at::Tensor bias = at::randn({s.out}, gen);
        for (int64_t rows : {1, 2, 8, 16}) {
            at::Tensor x = at::randn({rows, 1, s.in}, gen);  // [B, 1, in]: B rows of one token
            ASSERT_TRUE(cuset::decode_linear_applies(x, w));
            for (bool with_bias : {false, true}) {
                at::Tensor b = with_bias ? bias : at::Tensor();
                at::Tensor y = cuset::decode_linear(x, w, b);
                ASSERT_EQ(y.sizes(), (std::vector<int64_t>{rows, 1, s.out}));
                const cuset::test::Closeness c = closeness(y, x, w, b);
                CUSET_EXPECT_WITHIN(c.err, c.bound) << s.out << "x" << s.in << " rows " << rows << " bias " << with_bias;
            }
        }
    }
}

// A one-row product sums every output in a fixed order of its own: the result cannot depend on how
// many threads share the rows (a sample's tokens must not depend on the thread count).
TEST(DecodeLinear, OneRowIsBitwiseIndependentOfTheThreadCount) {
    at::NoGradGuard no_grad;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    at::Tensor w = at::randn({8192, 384}, gen), x = at::randn({1, 384}, gen);
    const int threads = at::get_num_threads();
    at::set_num_threads(1);
    at::Tensor one = cuset::decode_linear(x, w);
    at::set_num_threads(std::max(2, threads));
    at::Tensor many = cuset::decode_linear(x, w);
    at::set_num_threads(threads);
    EXPECT_TRUE(at::equal(one, many));
}

// Autograd, more than kDecodeLinearMaxRows rows, another dtype or a non-contiguous weight: exactly at::linear.
TEST(DecodeLinear, OtherCasesAreAtLinear) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
    at::Tensor w = at::randn({64, 32}, gen), x = at::randn({4, 32}, gen);
    {
        at::NoGradGuard no_grad;
        at::Tensor many = at::randn({cuset::kDecodeLinearMaxRows + 1, 32}, gen);
        EXPECT_FALSE(cuset::decode_linear_applies(many, w));
        EXPECT_TRUE(at::equal(cuset::decode_linear(many, w), at::linear(many, w)));
        at::Tensor wb = w.to(at::kBFloat16), xb = x.to(at::kBFloat16);
        EXPECT_FALSE(cuset::decode_linear_applies(xb, wb));
        EXPECT_TRUE(at::equal(cuset::decode_linear(xb, wb), at::linear(xb, wb)));
        at::Tensor wt = at::randn({32, 64}, gen).t();  // [64, 32], not contiguous
        EXPECT_FALSE(cuset::decode_linear_applies(x, wt));
        EXPECT_TRUE(at::equal(cuset::decode_linear(x, wt), at::linear(x, wt)));
    }
    // With grad mode on the result carries a gradient like at::linear's.
    at::Tensor wg = w.clone().requires_grad_(true);
    EXPECT_FALSE(cuset::decode_linear_applies(x, wg));
    at::Tensor y = cuset::decode_linear(x, wg);
    y.sum().backward();
    // The gradient is the column sum of x's 4 rows, by the backward GEMM and by sum(0) in other
    // orders: each within 3 u sum_i |x_i| of the exact sum (u = 2^-24), an absolute bound since
    // a sum of random signs can be ~0; 2 x 3 u max_j sum_i |x_ij| for the two together.
    const double sum_tol = 6 * std::ldexp(1.0, -24) * x.abs().sum(0).max().item<double>();
    CUSET_EXPECT_ALLCLOSE(wg.grad(), x.sum(0).expand({64, 32}), 0.0, sum_tol, "gradient");
}
