// Grouped-query decode attention (model/decode_attention.h) against torch's SDPA in fp64 on keys
// and values repeated per query head (repeat_interleave: what repeat_kv does), for one and several
// query positions, masks with padding, fp32 and bf16.
#include <gtest/gtest.h>

#include <cmath>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>

#include "cuset/model/decode_attention.h"

namespace {

struct Case {
    int64_t b, h, kh, t, len, e;
};

// A mask [B, 1, T, L]: random, with every query row attending to at least its own (last) key.
at::Tensor some_mask(const Case& c, at::Generator& gen) {
    at::Tensor m = at::rand({c.b, 1, c.t, c.len}, gen) < 0.7;
    m.narrow(3, c.len - c.t, c.t).copy_(at::eye(c.t, at::kBool).expand({c.b, 1, c.t, c.t}));
    return m;
}

at::Tensor reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                     double scale) {
    const int64_t g = q.size(1) / k.size(1);
    return at::scaled_dot_product_attention(q.to(at::kDouble), k.to(at::kDouble).repeat_interleave(g, 1),
                                            v.to(at::kDouble).repeat_interleave(g, 1), mask, 0.0, false, scale);
}

}  // namespace

TEST(DecodeAttention, MatchesSdpaOnRepeatedKeysAndValues) {
    at::NoGradGuard no_grad;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
    // 28 over 4 heads (Qwen2.5-7B's grouping), 8 over 2, and 4 over 4 (no grouping).
    for (Case c : {Case{2, 28, 4, 1, 41, 16}, Case{3, 8, 2, 1, 37, 32}, Case{3, 8, 2, 5, 37, 32}, Case{1, 4, 4, 3, 9, 8}}) {
        const double scale = 1.0 / std::sqrt(static_cast<double>(c.e));
        at::Tensor q = at::randn({c.b, c.h, c.t, c.e}, gen), k = at::randn({c.b, c.kh, c.len, c.e}, gen),
                   v = at::randn({c.b, c.kh, c.len, c.e}, gen);
        at::Tensor mask = some_mask(c, gen);
        // fp32: sums of at most L (scores: E) products in fp32 against fp64; with |q|, |k|, |v| ~ 1 the
        // outputs are within a few 1e-7 of the reference, 1e-5 leaves 10x margin.
        at::Tensor o = cuset::decode_attention(q, k, v, mask, scale);
        ASSERT_EQ(o.sizes(), q.sizes());
        EXPECT_LE((o.to(at::kDouble) - reference(q, k, v, mask, scale)).abs().max().item<double>(), 1e-5)
            << c.h << "/" << c.kh << " heads, T " << c.t;
        // bf16: the probabilities and the output are rounded to bf16 (relative 2^-9 each), so
        // |err| <= 2 * 2^-9 * max|v| against fp64 on the same bf16 inputs; 1.25x margin.
        at::Tensor qb = q.to(at::kBFloat16), kb = k.to(at::kBFloat16), vb = v.to(at::kBFloat16);
        at::Tensor ob = cuset::decode_attention(qb, kb, vb, mask, scale);
        ASSERT_EQ(ob.scalar_type(), at::kBFloat16);
        const double bound = 1.25 * 2.0 * std::ldexp(1.0, -9) * vb.abs().max().item<double>();
        EXPECT_LE((ob.to(at::kDouble) - reference(qb, kb, vb, mask, scale)).abs().max().item<double>(), bound)
            << c.h << "/" << c.kh << " heads, T " << c.t << " (bf16)";
    }
}

// Query head h reads key/value head h / G: with one key visible per row, head h's output is that
// key's value in head h / G, exactly.
TEST(DecodeAttention, QueryHeadsReadTheirOwnKeyValueHead) {
    at::NoGradGuard no_grad;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
    const int64_t b = 2, h = 6, kh = 3, len = 5, e = 4;
    at::Tensor q = at::randn({b, h, 1, e}, gen), k = at::randn({b, kh, len, e}, gen), v = at::randn({b, kh, len, e}, gen);
    at::Tensor mask = at::zeros({b, 1, 1, len}, at::kBool);
    mask.select(0, 0).select(2, 1).fill_(true);  // row 0 sees key 1
    mask.select(0, 1).select(2, 4).fill_(true);  // row 1 sees key 4
    at::Tensor o = cuset::decode_attention(q, k, v, mask, 0.5);  // [B, H, 1, E]
    for (int64_t head = 0; head < h; ++head) {
        EXPECT_TRUE(at::equal(o[0][head][0], v[0][head / 2][1])) << "head " << head;
        EXPECT_TRUE(at::equal(o[1][head][0], v[1][head / 2][4])) << "head " << head;
    }
}
