// Grouped-query decode attention (model/decode_attention.h) against torch's SDPA in fp64 on keys
// and values repeated per query head (repeat_interleave: what repeat_kv does), for one and several
// query positions, masks with padding, fp32 and bf16.
#include <gtest/gtest.h>

#include <cmath>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>

#include "cuset/model/decode_attention.h"
#include "tensor_check.h"

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
        // fp32 against fp64 (u = 2^-24), first-order worst cases: a score is a sum of E products,
        // |ds| <= E u scale max sum_e |q_e k_e|, which moves each probability by at most 2 |ds|
        // relative (its own score and the normaliser): 2 |ds| max|v| on the output; the output is
        // a sum of L terms p v, (L + 1) u max|v| with its rounding. (About 1e-4 here; a wrong
        // head, mask or scale is O(1).)
        const int64_t g = c.h / c.kh;
        const at::Tensor kd = k.to(at::kDouble).repeat_interleave(g, 1), vd = v.to(at::kDouble);
        const double u32 = std::ldexp(1.0, -24), v_max = vd.abs().max().item<double>();
        const double mag_s = (at::matmul(q.to(at::kDouble).abs(), kd.abs().transpose(2, 3)) * scale).max().item<double>();
        const double bound32 = (2 * c.e * u32 * mag_s + (c.len + 1) * u32) * v_max;
        at::Tensor o = cuset::decode_attention(q, k, v, mask, scale);
        ASSERT_EQ(o.sizes(), q.sizes());
        CUSET_EXPECT_WITHIN(cuset::test::max_abs_diff(o, reference(q, k, v, mask, scale)), bound32)
            << c.h << "/" << c.kh << " heads, T " << c.t;
        // bf16 against fp64 on the same bf16 inputs. bf16 keeps 8 significant bits: one rounding
        // is at most u = 2^-8 relative. On the CPU the raw scores q.k are rounded to bf16 (an
        // absolute error u |s| after scaling), which moves each probability by at most
        // 2 u max|s| relative (its own score and the normaliser); the probabilities are rounded
        // (u), and so is the output (u |o| <= u max|v|); the fp32 accumulations add bound32's
        // size. So |err| <= (2 max|s| + 2) u max|v|, first order, max|s| over the scaled scores.
        at::Tensor qb = q.to(at::kBFloat16), kb = k.to(at::kBFloat16), vb = v.to(at::kBFloat16);
        at::Tensor ob = cuset::decode_attention(qb, kb, vb, mask, scale);
        ASSERT_EQ(ob.scalar_type(), at::kBFloat16);
        const at::Tensor sb = at::matmul(qb.to(at::kDouble), kb.to(at::kDouble).repeat_interleave(g, 1).transpose(2, 3));
        const double s_max = (sb * scale).abs().max().item<double>();
        const double bound = (2 * s_max + 2) * std::ldexp(1.0, -8) * vb.abs().max().item<double>() + bound32;
        CUSET_EXPECT_WITHIN(cuset::test::max_abs_diff(ob, reference(qb, kb, vb, mask, scale)), bound)
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
