// The CuSeT objective (docs/method.md sec. 1-5): hand-worked examples with known
// probabilities, golden values from PyTorch/numpy (tests/golden/objective.py), chunked vs full
// logits, split invariance of a step, and the edge cases. All on the CPU.
//
// Tolerances: float64 cases compare at 1e-10 or tighter. Every value is a short chain of fp64
// operations (a log-sum-exp over <= 17 logits, sums of <= 40 terms of magnitude <= ~10), so the
// worst-case rounding is ~40 x 10 x 2^-53 ~ 4e-14; 1e-10 leaves room for any summation order and
// still catches any wrong formula, whose errors are >= 1e-3 here. Quantities formed by
// cancellation (gradients, KL terms, scores l - l_ref) get absolute bounds. float32 and bfloat16
// cases state theirs where they are made. Every check is measured (test_util.h).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/train/objective.h"
#include "tensor_check.h"

using cuset::Method;
using cuset::MicroBatchTargets;
using cuset::Objective;
using cuset::ObjectiveOptions;
using cuset::ObjectiveOutput;
using cuset::ThresholdMode;
using nlohmann::json;

namespace {

constexpr double kIgn = -1.0;  // "ignored position" in the hand-worked rows below

const at::TensorOptions kF64 = at::TensorOptions().dtype(at::kDouble);
const at::TensorOptions kI64 = at::TensorOptions().dtype(at::kLong);

at::Tensor tensor_f64(const std::vector<double>& v, at::IntArrayRef shape) {
    return at::tensor(v, kF64).reshape(shape);
}
at::Tensor tensor_from_json(const json& j, at::IntArrayRef shape) {
    return tensor_f64(j.get<std::vector<double>>(), shape);
}
at::Tensor labels_from_json(const json& j, at::IntArrayRef shape) {
    return at::tensor(j.get<std::vector<int64_t>>(), kI64).reshape(shape);
}

const json& golden() {
    static const json g = [] {
        std::ifstream f(CUSET_TEST_WORK "/golden/objective/objective.json");
        if (!f) throw std::runtime_error("golden objective.json missing: run ctest (fixture golden_objective)");
        return json::parse(f);
    }();
    return g;
}

// at::allclose(actual, expected, rtol, atol) at the caller's line, measured.
#define expect_close(actual, expected, rtol, atol, what) CUSET_EXPECT_ALLCLOSE(actual, expected, rtol, atol, what)

// ------------------------------------------------------------------ hand-worked micro-batches

// With lm_head = I (V = D = 4), hidden = log p gives softmax = p exactly, so the confidence of a
// target is the probability written in the test: p[y] = c, the other three (1 - c) / 3.
struct Hand {
    at::Tensor hidden;  // [B, T, 4] fp64
    at::Tensor lm_head; // [4, 4] fp64 identity
    MicroBatchTargets t;
};

Hand hand_batch(const std::vector<std::vector<double>>& conf, const std::vector<std::vector<int>>& sens) {
    const int64_t B = conf.size(), T = conf[0].size();
    std::vector<double> h;
    std::vector<int64_t> y;
    std::vector<uint8_t> s;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T; ++t) {
            const double c = conf[b][t] == kIgn ? 0.25 : conf[b][t];
            const int64_t label = (b + t) % 4;
            for (int64_t v = 0; v < 4; ++v) h.push_back(std::log(v == label ? c : (1 - c) / 3));
            y.push_back(conf[b][t] == kIgn ? cuset::kIgnoreIndex : label);
            s.push_back(sens[b][t]);
        }
    Hand hb;
    hb.hidden = tensor_f64(h, {B, T, 4});
    hb.lm_head = at::eye(4, kF64);
    hb.t.labels = at::tensor(y, kI64).reshape({B, T});
    hb.t.sensitive = at::tensor(std::vector<int64_t>(s.begin(), s.end()), kI64).reshape({B, T}).to(at::kBool);
    return hb;
}

// Sample 0 (row 0): c = 0.9 0.2 0.6 0.1 0.8, the 0.1 is CUDA-sensitive; position 5 is padding.
// Sample 1 (row 1): a prompt token, then c = 0.5 0.05 0.7 0.3, then padding.
Hand hand_example() {
    return hand_batch({{0.9, 0.2, 0.6, 0.1, 0.8, kIgn}, {kIgn, 0.5, 0.05, 0.7, 0.3, kIgn}},
                      {{0, 0, 0, 1, 0, 0}, {1, 0, 0, 0, 0, 0}});
}
double L(double c) { return -std::log(c); }

ObjectiveOptions cuset_options(int64_t chunk) {
    ObjectiveOptions o;
    o.method = Method::kCuset;
    o.q = 0.25;
    o.window = 2;
    o.alpha = 1.0;
    o.chunk_size = chunk;
    return o;
}

ObjectiveOutput run(const ObjectiveOptions& o, const Hand& hb, std::optional<double> batch_tau = std::nullopt) {
    return Objective(o).compute(hb.hidden, hb.lm_head, hb.t, batch_tau);
}

// The hand-worked micro-batches (fp64, V = 4, <= 9 tokens): c = exp(-(lse - log c)) round trips
// to ~1e-16 and every value below is at most a sum of 9 such terms of magnitude <= 2 ln 20 ~ 6.
constexpr double kHandTol = 1e-12;      // one O(1) value or mean (tau, w, window mean, a gradient element): worst case ~1e-15
constexpr double kHandSumTol = 1e-11;   // a sum of <= 9 O(1) terms (losses, weights): worst case 9 x 6 x 2^-53 ~ 6e-15
constexpr double kHandWSumTol = 1e-10;  // a sum of <= 9 terms w l (w <= 2) and the exponentials behind l: ~2e-14

// Chunk sizes that walk every path: 0 = full-logits reference; 1, 2, 3 make both samples longer
// than a chunk (loss pass + recompute pass); 4 fits sample 1 only; 1024 one group.
class HandChunks : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(Chunks, HandChunks, ::testing::Values(0, 1, 2, 3, 4, 1024));

TEST_P(HandChunks, CusetMaskWeightsLossAndStats) {
    // Sample 0: sorted c = .1 .2 .6 .8 .9, (n-1) q = 4 * .25 = 1 -> tau = .2. c >= .2 keeps all
    //   but the .1, which is sensitive: kept only because sensitive. Windows of 2: means .55 .4
    //   .35 .45 -> hardest [2, 4) at .35, w = 1 + (1 - .35) = 1.65.
    // Sample 1: sorted c = .05 .3 .5 .7, (n-1) q = .75 -> tau = .05 + .75 (.3 - .05) = .2375, so
    //   the .05 is dropped. Windows: .275 .375 .5 -> [0, 2), w = 1.725.
    ObjectiveOutput out = run(cuset_options(GetParam()), hand_example());
    const double num0 = L(.9) + L(.2) + L(.6) + L(.1) + L(.8), num1 = L(.5) + L(.7) + L(.3);
    CUSET_EXPECT_NEAR(out.numerator.item<double>(), 1.65 * num0 + 1.725 * num1, kHandWSumTol);
    CUSET_EXPECT_NEAR(out.denominator, 1.65 * 5 + 1.725 * 3, kHandSumTol);
    ASSERT_EQ(out.samples.size(), 2u);
    CUSET_EXPECT_NEAR(out.samples[0].tau, 0.2, kHandTol);
    CUSET_EXPECT_NEAR(out.samples[1].tau, 0.2375, kHandTol);
    CUSET_EXPECT_NEAR(out.samples[0].weight, 1.65, kHandTol);
    CUSET_EXPECT_NEAR(out.samples[1].weight, 1.725, kHandTol);
    EXPECT_EQ(out.samples[0].win_begin, 2);
    EXPECT_EQ(out.samples[0].win_end, 4);
    CUSET_EXPECT_NEAR(out.samples[0].win_mean, 0.35, kHandTol);
    EXPECT_EQ(out.samples[1].win_begin, 0);
    EXPECT_EQ(out.samples[1].win_end, 2);
    CUSET_EXPECT_NEAR(out.samples[1].win_mean, 0.275, kHandTol);
    EXPECT_EQ(out.samples[0].n_valid, 5);
    EXPECT_EQ(out.samples[1].n_valid, 4);

    const cuset::ObjectiveStats& s = out.stats;
    EXPECT_EQ(s.n_valid, 9);
    EXPECT_EQ(s.n_kept, 8);
    EXPECT_EQ(s.n_sensitive, 1);  // the prompt token of row 1 is flagged but not valid
    EXPECT_EQ(s.n_kept_only_sensitive, 1);
    EXPECT_EQ(s.n_samples, 2);
    CUSET_EXPECT_NEAR(s.mean_tau(), (0.2 + 0.2375) / 2, kHandTol);
    CUSET_EXPECT_NEAR(s.w_min, 1.65, kHandTol);
    CUSET_EXPECT_NEAR(s.w_max, 1.725, kHandTol);
    CUSET_EXPECT_NEAR(s.w_mean(), (1.65 + 1.725) / 2, kHandTol);
    CUSET_EXPECT_NEAR(s.conf_mean_sensitive(), 0.1, kHandTol);
    CUSET_EXPECT_NEAR(s.conf_mean_plain(), (0.9 + 0.2 + 0.6 + 0.8 + 0.5 + 0.05 + 0.7 + 0.3) / 8, kHandTol);
    CUSET_EXPECT_NEAR(s.nll_mean(), (num0 + num1 + L(.05)) / 9, kHandTol);
    CUSET_EXPECT_NEAR(s.kept_fraction(), 8.0 / 9, kHandTol);
    CUSET_EXPECT_NEAR(s.sensitive_fraction(), 1.0 / 9, kHandTol);
    CUSET_EXPECT_NEAR(s.kept_only_sensitive_fraction(), 1.0 / 9, kHandTol);
}

TEST_P(HandChunks, DropWeightKeepsASmallShare) {
    ObjectiveOptions o = cuset_options(GetParam());
    o.drop_weight = 0.1;  // the dropped .05 of sample 1 now counts 0.1
    ObjectiveOutput out = run(o, hand_example());
    const double num0 = L(.9) + L(.2) + L(.6) + L(.1) + L(.8), num1 = L(.5) + L(.7) + L(.3);
    CUSET_EXPECT_NEAR(out.numerator.item<double>(), 1.65 * num0 + 1.725 * (num1 + 0.1 * L(.05)), kHandWSumTol);
    CUSET_EXPECT_NEAR(out.denominator, 1.65 * 5 + 1.725 * 3.1, kHandSumTol);
    EXPECT_EQ(out.stats.n_kept, 8);
}

TEST_P(HandChunks, AblationSwitches) {
    const double num0 = L(.9) + L(.2) + L(.6) + L(.1) + L(.8), num1 = L(.5) + L(.7) + L(.3);
    {  // no sensitivity rescue: sample 0's .1 (< tau .2) is dropped too
        ObjectiveOptions o = cuset_options(GetParam());
        o.mask_sensitivity = false;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.numerator.item<double>(), 1.65 * (num0 - L(.1)) + 1.725 * num1, kHandWSumTol);
        CUSET_EXPECT_NEAR(out.denominator, 1.65 * 4 + 1.725 * 3, kHandSumTol);
        EXPECT_EQ(out.stats.n_kept, 7);
        EXPECT_EQ(out.stats.n_kept_only_sensitive, 0);
    }
    {  // no confidence mask: every valid token, still region-weighted
        ObjectiveOptions o = cuset_options(GetParam());
        o.mask_confidence = false;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.numerator.item<double>(), 1.65 * num0 + 1.725 * (num1 + L(.05)), kHandWSumTol);
        CUSET_EXPECT_NEAR(out.denominator, 1.65 * 5 + 1.725 * 4, kHandSumTol);
        EXPECT_EQ(out.stats.n_kept, 9);
        EXPECT_TRUE(std::isnan(out.samples[0].tau));
        EXPECT_TRUE(std::isnan(out.stats.mean_tau()));
    }
    {  // no region weights: w = 1, the mask stays
        ObjectiveOptions o = cuset_options(GetParam());
        o.region_enabled = false;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.numerator.item<double>(), num0 + num1, kHandSumTol);
        EXPECT_DOUBLE_EQ(out.denominator, 8.0);
        EXPECT_EQ(out.samples[0].weight, 1.0);
        EXPECT_EQ(out.samples[0].win_begin, -1);
    }
    {  // fixed threshold .45: sample 0 drops the .2 (the .1 is rescued), sample 1 the .05 and .3
        ObjectiveOptions o = cuset_options(GetParam());
        o.threshold_mode = ThresholdMode::kFixed;
        o.threshold_value = 0.45;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.numerator.item<double>(),
                    1.65 * (L(.9) + L(.6) + L(.1) + L(.8)) + 1.725 * (L(.5) + L(.7)), kHandWSumTol);
        CUSET_EXPECT_NEAR(out.denominator, 1.65 * 4 + 1.725 * 2, kHandSumTol);
        EXPECT_EQ(out.samples[1].tau, 0.45);
    }
    {  // batch_quantile: the caller's step threshold .55 for both samples (c = .5 is dropped)
        ObjectiveOptions o = cuset_options(GetParam());
        o.threshold_mode = ThresholdMode::kBatchQuantile;
        ObjectiveOutput out = run(o, hand_example(), 0.55);
        CUSET_EXPECT_NEAR(out.numerator.item<double>(),
                    1.65 * (L(.9) + L(.6) + L(.1) + L(.8)) + 1.725 * L(.7), kHandWSumTol);
        CUSET_EXPECT_NEAR(out.denominator, 1.65 * 4 + 1.725 * 1, kHandSumTol);
        EXPECT_EQ(out.samples[0].tau, 0.55);
    }
}

TEST_P(HandChunks, BaselineMethods) {
    const std::vector<double> c = {.9, .2, .6, .1, .8, .5, .05, .7, .3};
    double sft = 0, dft = 0, focal = 0;
    for (double x : c) {
        sft += L(x);
        dft += x * L(x);                         // DFT: weight c (the detached probability)
        focal += std::pow(1 - x, 1.5) * L(x);    // focal, gamma 1.5
    }
    for (auto [method, expected] : {std::pair{Method::kSft, sft}, std::pair{Method::kDft, dft},
                                    std::pair{Method::kFocal, focal}}) {
        ObjectiveOptions o = cuset_options(GetParam());
        o.method = method;
        o.focal_gamma = 1.5;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.numerator.item<double>(), expected, kHandSumTol) << cuset::method_name(method);
        EXPECT_DOUBLE_EQ(out.denominator, 9.0) << cuset::method_name(method);  // m = valid, w = 1
        EXPECT_EQ(out.stats.n_kept, 9);
        EXPECT_EQ(out.stats.w_min, 1.0);
        EXPECT_TRUE(std::isnan(out.samples[0].tau));
    }
}

// EAFT: weight sg((H_topk / ln k)^alpha). Each hand token has p = c at the target and
// q = (1 - c) / 3 at the other three logits.
//   k = 4 (>= V): H = -(c ln c + 3 q ln q); c = .9: q = 1/30, H = .09482 + .34012 = .43494,
//     / ln 4 = .31375. c = .2 (q = .2667): nearly uniform, .99495.
//   k = 2, alpha = 2: the top two renormalised; c = .9: {.9, 1/30} / .93333 -> H = .14633,
//     (/ ln 2)^2 = .04941; c < .25: the top two are q, q -> H = ln 2 -> weight exactly 1.
TEST_P(HandChunks, EaftWeightIsTheTopKEntropy) {
    const std::vector<double> c = {.9, .2, .6, .1, .8, .5, .05, .7, .3};
    const std::vector<double> w4 = {0.3137459218306984, 0.9949490477321438, 0.8024677973715657,
                                    0.9477309221191609, 0.5194602975157967, 0.8962406251802891,
                                    0.8960556664005274, 0.6783898247235198, 0.9953823248677509};
    const std::vector<double> w2a2 = {0.049410545952964964, 1.0, 0.4679085814315073, 1.0, 0.15307152608131933,
                                      0.6581721952259282, 1.0, 0.2954623039108873, 0.9775265199500249};
    for (auto [k, alpha, want] : {std::tuple{int64_t{20}, 1.0, w4}, std::tuple{int64_t{2}, 2.0, w2a2}}) {
        ObjectiveOptions o = cuset_options(GetParam());
        o.method = Method::kEaft;
        o.eaft_k = k;
        o.eaft_alpha = alpha;
        double num = 0, wsum = 0;
        for (size_t i = 0; i < c.size(); ++i) {
            num += want[i] * L(c[i]);
            wsum += want[i];
        }
        Hand hb = hand_example();
        at::Tensor h = hb.hidden.clone().requires_grad_();
        ObjectiveOutput out = Objective(o).compute(h, hb.lm_head, hb.t);
        CUSET_EXPECT_NEAR(out.numerator.item<double>(), num, kHandSumTol) << "k " << k;
        EXPECT_DOUBLE_EQ(out.denominator, 9.0);
        CUSET_EXPECT_NEAR(out.stats.tok_w_sum, wsum, kHandSumTol) << "k " << k;
        EXPECT_EQ(out.stats.n_kept, 9);
        // The weight is detached: d/dz of w l = w (softmax - onehot). Row 0, t 0: c = .9, label 0.
        out.numerator.backward();
        at::Tensor g = h.grad()[0][0];
        CUSET_EXPECT_NEAR(g[0].item<double>(), want[0] * (0.9 - 1.0), kHandTol);
        CUSET_EXPECT_NEAR(g[1].item<double>(), want[0] * (0.1 / 3), kHandTol);
    }
}

// ASFT: c l + alpha KL(pi_ref || pi_theta) with a uniform reference (hidden 0, lm_head I):
// KL = sum_v 1/4 (ln 1/4 - ln p_v) = -ln 4 - (ln c + 3 ln q) / 4; c = .9: -1.38629 + 2.57724 =
// 1.19094; c = .2: .00738. Gradient on z: c (softmax - onehot) + alpha (softmax - 1/4).
TEST_P(HandChunks, AsftIsDftPlusKlToTheReference) {
    const std::vector<double> c = {.9, .2, .6, .1, .8, .5, .05, .7, .3};
    // 1.190944 .007382 .252589 .092332 .700529 | .130812 .225068 .429813 .006164, here in fp64.
    std::vector<double> kl;
    for (double x : c) kl.push_back(-std::log(4.0) - (std::log(x) + 3 * std::log((1 - x) / 3)) / 4);
    ObjectiveOptions o = cuset_options(GetParam());
    o.method = Method::kAsft;
    o.asft_alpha = 0.5;
    Hand hb = hand_example();
    const cuset::ReferenceForward ref{at::zeros_like(hb.hidden), hb.lm_head};
    double num = 0, klsum = 0, dft = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        num += c[i] * L(c[i]) + 0.5 * kl[i];
        klsum += kl[i];
        dft += c[i];
    }
    at::Tensor h = hb.hidden.clone().requires_grad_();
    ObjectiveOutput out = Objective(o).compute(h, hb.lm_head, hb.t, std::nullopt, &ref);
    // Each KL is a difference of O(1) logs (as small as .006): absolute bounds, sums of 9 terms.
    CUSET_EXPECT_NEAR(out.numerator.item<double>(), num, kHandSumTol);
    CUSET_EXPECT_NEAR(out.stats.kl_sum, klsum, kHandSumTol);
    CUSET_EXPECT_NEAR(out.stats.tok_w_sum, dft, kHandSumTol);  // the DFT weights c
    EXPECT_DOUBLE_EQ(out.denominator, 9.0);
    out.numerator.backward();
    at::Tensor g = h.grad()[0][0];  // c = .9 at label 0
    CUSET_EXPECT_NEAR(g[0].item<double>(), 0.9 * (0.9 - 1.0) + 0.5 * (0.9 - 0.25), kHandTol);
    CUSET_EXPECT_NEAR(g[2].item<double>(), 0.9 * (0.1 / 3) + 0.5 * (0.1 / 3 - 0.25), kHandTol);
    EXPECT_THROW(Objective(o).compute(h, hb.lm_head, hb.t), cuset::RuntimeFailure);  // no reference
}

// Rho-1: score = l - l_ref = ln(p_ref / c). With p_ref = .9 .5 .3 .5 .2 | .5 .05 .9 .3 the scores
// are 0, .916, -.693, 1.609, -1.386 | 0, 0, .251, 0; keep 1/3 of 9 = 3: c = .1, .2 and .7 (the .05
// token is hard for the reference too: score 0, dropped). Loss = their mean l.
TEST_P(HandChunks, Rho1KeepsTheTopScoredTokens) {
    Hand hb = hand_example();
    hb.t.reference_prob = at::tensor(std::vector<double>{.9, .5, .3, .5, .2, .5, .5, .5, .05, .9, .3, .5},
                                     kF64).reshape({2, 6}).to(at::kFloat);  // row 1 starts at t = 1
    ObjectiveOptions o = cuset_options(GetParam());
    o.method = Method::kRho1;
    o.rho1_keep_fraction = 1.0 / 3;
    Objective obj(o);
    at::Tensor scores = obj.step_scores(hb.hidden, hb.lm_head, hb.t);
    // 0, ln 2.5, ln .5, ln 5, ln .25 | 0, 0, ln(.9 / .7), 0, from the fp32-rounded p_ref the
    // objective reads (an fp32 .9 is .9 - 2.4e-8), so that only fp64 rounding remains.
    const std::vector<double> c = {.9, .2, .6, .1, .8, .5, .05, .7, .3};
    const std::vector<float> p_ref = {.9f, .5f, .3f, .5f, .2f, .5f, .05f, .9f, .3f};
    std::vector<double> want;
    for (size_t i = 0; i < c.size(); ++i) want.push_back(std::log(static_cast<double>(p_ref[i]) / c[i]));
    // Scores l - l_ref are differences of O(1) logs (zero for four tokens): absolute bound.
    expect_close(scores, at::tensor(want, kF64), 0, kHandTol, "rho1 scores");
    const double tau = obj.step_threshold(scores);
    CUSET_EXPECT_NEAR(tau, want[7], kHandTol);  // ln(.9 / .7), the third largest
    EXPECT_THROW(obj.compute(hb.hidden, hb.lm_head, hb.t), cuset::RuntimeFailure);  // no threshold
    ObjectiveOutput out = obj.compute(hb.hidden, hb.lm_head, hb.t, tau);
    CUSET_EXPECT_NEAR(out.numerator.item<double>(), L(.1) + L(.2) + L(.7), kHandSumTol);
    EXPECT_DOUBLE_EQ(out.denominator, 3.0);
    EXPECT_EQ(out.stats.n_kept, 3);
    CUSET_EXPECT_NEAR(out.stats.tok_w_sum, 3.0, kHandTol);
    o.rho1_keep_fraction = 1.0;  // everything: the sft step
    Objective all(o);
    ObjectiveOutput everything = all.compute(hb.hidden, hb.lm_head, hb.t, all.step_threshold(scores));
    EXPECT_DOUBLE_EQ(everything.denominator, 9.0);
    MicroBatchTargets no_ref = hb.t;
    no_ref.reference_prob = at::Tensor();
    EXPECT_THROW(obj.step_scores(hb.hidden, hb.lm_head, no_ref), cuset::RuntimeFailure);
}

TEST_P(HandChunks, QuantileAndWindowExtremes) {
    {  // q = 0: tau = the smallest c, nothing is dropped
        ObjectiveOptions o = cuset_options(GetParam());
        o.q = 0.0;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.samples[0].tau, 0.1, kHandTol);
        CUSET_EXPECT_NEAR(out.samples[1].tau, 0.05, kHandTol);
        EXPECT_EQ(out.stats.n_kept, 9);
        EXPECT_EQ(out.stats.n_kept_only_sensitive, 0);
    }
    {  // q = 1: tau = the largest c: only the .9 and .7 pass, plus the sensitive .1
        ObjectiveOptions o = cuset_options(GetParam());
        o.q = 1.0;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.samples[0].tau, 0.9, kHandTol);
        CUSET_EXPECT_NEAR(out.samples[1].tau, 0.7, kHandTol);
        EXPECT_EQ(out.stats.n_kept, 3);
        EXPECT_EQ(out.stats.n_kept_only_sensitive, 1);
        CUSET_EXPECT_NEAR(out.numerator.item<double>(), 1.65 * (L(.9) + L(.1)) + 1.725 * L(.7), kHandWSumTol);
    }
    {  // window 1: the single least confident token; w = 2 - min c
        ObjectiveOptions o = cuset_options(GetParam());
        o.window = 1;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.samples[0].weight, 1.9, kHandTol);
        EXPECT_EQ(out.samples[0].win_begin, 3);
        EXPECT_EQ(out.samples[0].win_end, 4);
        CUSET_EXPECT_NEAR(out.samples[1].weight, 1.95, kHandTol);
        EXPECT_EQ(out.samples[1].win_begin, 1);
    }
    {  // fewer tokens than the window: one window over all of them
        ObjectiveOptions o = cuset_options(GetParam());
        o.window = 256;
        o.alpha = 0.5;
        ObjectiveOutput out = run(o, hand_example());
        CUSET_EXPECT_NEAR(out.samples[0].win_mean, 2.6 / 5, kHandTol);
        CUSET_EXPECT_NEAR(out.samples[0].weight, 1 + 0.5 * (1 - 2.6 / 5), kHandTol);
        EXPECT_EQ(out.samples[0].win_begin, 0);
        EXPECT_EQ(out.samples[0].win_end, 5);
        CUSET_EXPECT_NEAR(out.samples[1].weight, 1 + 0.5 * (1 - 1.55 / 4), kHandTol);
        EXPECT_EQ(out.samples[1].win_end, 4);
    }
}

// Cached confidences are used as given (exact binary fractions here), so windows tie exactly.
TEST_P(HandChunks, CachedConfidenceAndEarliestTie) {
    Hand hb = hand_batch({{.9, .9, .9, .9, .9, .9}, {.9, .9, .9, .9, .9, kIgn}},
                         {{0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}});
    // Sample 0 window sums (2): .75 .5 .75 .75 .5 -> the first .5, [1, 3); sample 1: all .75 ->
    // [0, 2). The model's own confidence (.9 everywhere) must not be used.
    hb.t.confidence = at::tensor(std::vector<float>{.5f, .25f, .25f, .5f, .25f, .25f,  //
                                                    .5f, .25f, .5f, .25f, .5f, .7f})
                          .reshape({2, 6});
    ObjectiveOptions o = cuset_options(GetParam());
    o.cached_confidence = true;
    o.q = 0.5;
    ObjectiveOutput out = run(o, hb);
    EXPECT_EQ(out.samples[0].win_begin, 1);
    EXPECT_EQ(out.samples[0].win_mean, 0.25);
    EXPECT_EQ(out.samples[1].win_begin, 0);
    EXPECT_EQ(out.samples[1].win_mean, 0.375);
    EXPECT_EQ(out.samples[0].tau, 0.25);   // median of .25 .25 .25 .25 .5 .5
    EXPECT_EQ(out.samples[1].tau, 0.5);    // median of .25 .25 .5 .5 .5
    EXPECT_EQ(out.stats.n_kept, 6 + 3);
    EXPECT_EQ(out.stats.conf_sum_plain, 2.0 + 2.0);  // the valid cached values, no sensitive one
    // The loss itself still comes from the model: -log .9 per kept token.
    CUSET_EXPECT_NEAR(out.numerator.item<double>(), (1.75 * 6 + 1.625 * 3) * L(.9), kHandWSumTol);

    hb.t.confidence.index_put_({0, 2}, 1.5f);
    EXPECT_THROW(run(o, hb), cuset::InputError);
}

// ------------------------------------------------------------------ golden: PyTorch and numpy

TEST(ObjectiveGolden, QuantileMatchesNumpy) {
    for (const json& c : golden()["quantile"]) {
        at::Tensor v = at::tensor(c["values"].get<std::vector<double>>(), kF64);
        const double q = c["q"], expected = c["expected"];
        // numpy's lerp reproduced operation for operation: equal to the last bit.
        EXPECT_EQ(cuset::quantile_linear(v, q), expected) << "n=" << v.numel() << " q=" << q;
        EXPECT_EQ(cuset::quantile_linear(v.flip(0), q), expected) << "order must not matter";
    }
}

TEST(ObjectiveGolden, TokenNllChunkedAndFullMatchTorch) {
    const json& g = golden()["nll"];
    const int64_t N = g["N"], D = g["D"], V = g["V"];
    at::Tensor labels = labels_from_json(g["labels"], {N});
    at::Tensor up = tensor_from_json(g["g"], {N});
    for (int64_t chunk : {0, 1, 2, 4, 5, 10, 13, 1024}) {
        at::Tensor h = tensor_from_json(g["hidden"], {N, D}).requires_grad_();
        at::Tensor w = tensor_from_json(g["weight"], {V, D}).requires_grad_();
        at::Tensor nll = cuset::token_nll(h, w, labels, chunk);
        EXPECT_EQ(nll.scalar_type(), at::kDouble);
        (nll * up).sum().backward();
        const std::string what = "chunk " + std::to_string(chunk);
        // fp64 against PyTorch's fp64: a log-sum-exp over V and sums over D and N of O(1) terms,
        // worst case (V + D + N) 2^-53 ~ 1e-14 of the terms' scale, far inside these bounds
        // (the gradients' atol covers elements near 0, differences of O(1) terms).
        expect_close(nll, tensor_from_json(g["nll"], {N}), 1e-12, 1e-14, what + " nll");
        expect_close(h.grad(), tensor_from_json(g["grad_hidden"], {N, D}), 1e-11, 1e-13, what + " grad hidden");
        expect_close(w.grad(), tensor_from_json(g["grad_weight"], {V, D}), 1e-11, 1e-13, what + " grad weight");
    }
}

// sft over a step of two micro-batches is PyTorch's mean cross-entropy over the step's response
// tokens, gradients included, whatever the chunking.
TEST(ObjectiveGolden, SftStepIsTorchMeanCrossEntropy) {
    const json& g = golden()["sft_step"];
    const int64_t D = g["D"], V = g["V"];
    for (int64_t chunk : {0, 3, 1024}) {
        ObjectiveOptions o;
        o.method = Method::kSft;
        o.chunk_size = chunk;
        Objective obj(o);
        at::Tensor w = tensor_from_json(g["weight"], {V, D}).requires_grad_();
        std::vector<at::Tensor> hs;
        double num = 0, den = 0;
        for (const json& mb : g["micro_batches"]) {
            const int64_t B = mb["B"], T = mb["T"];
            at::Tensor h = tensor_from_json(mb["hidden"], {B, T, D}).requires_grad_();
            MicroBatchTargets t;
            t.labels = labels_from_json(mb["labels"], {B, T});
            ObjectiveOutput out = obj.compute(h, w, t);
            out.numerator.backward();
            num += out.numerator.item<double>();
            den += out.denominator;
            hs.push_back(h);
        }
        const double step_den = den;
        std::vector<at::Tensor> params = hs;
        params.push_back(w);
        cuset::gradients_scale(params, 1.0 / step_den);
        const std::string what = "chunk " + std::to_string(chunk);
        // fp64 against PyTorch's fp64 (the file's note): ~1e-15 of O(1) values.
        CUSET_EXPECT_NEAR(num / step_den, g["loss"].get<double>(), 1e-12) << what;
        expect_close(w.grad(), tensor_from_json(g["grad_weight"], {V, D}), 1e-10, 1e-13, what + " grad weight");
        for (size_t i = 0; i < hs.size(); ++i) {
            const json& mb = g["micro_batches"][i];
            expect_close(hs[i].grad(), tensor_from_json(mb["grad_hidden"], {mb["B"], mb["T"], D}), 1e-10,
                         1e-13, what + " grad hidden " + std::to_string(i));
        }
    }
}

ObjectiveOptions options_from_json(const json& j, int64_t chunk) {
    ObjectiveOptions o;
    const std::string m = j["method"];
    o.method = m == "sft" ? Method::kSft : m == "dft" ? Method::kDft : m == "focal" ? Method::kFocal
             : m == "eaft" ? Method::kEaft : m == "asft" ? Method::kAsft : m == "rho1" ? Method::kRho1
                                                                          : Method::kCuset;
    o.cached_confidence = j["cached"];
    o.mask_confidence = j["mask_confidence"];
    o.mask_sensitivity = j["mask_sensitivity"];
    o.drop_weight = j["drop_weight"];
    const std::string mode = j["mode"];
    o.threshold_mode = mode == "fixed" ? ThresholdMode::kFixed
                       : mode == "batch_quantile" ? ThresholdMode::kBatchQuantile
                                                  : ThresholdMode::kSampleQuantile;
    o.q = j["q"];
    o.threshold_value = j["value"];
    o.region_enabled = j["region"];
    o.window = j["window"];
    o.alpha = j["alpha"];
    o.focal_gamma = j["gamma"];
    o.eaft_alpha = j["eaft_alpha"];
    o.eaft_k = j["eaft_k"];
    o.asft_alpha = j["asft_alpha"];
    o.rho1_keep_fraction = j["keep_fraction"];
    o.chunk_size = chunk;
    return o;
}

// A packed micro-batch (3 rows, 5 samples, one without tokens) against the naive Python
// implementation of docs/method.md, every method and switch, every path (chunk 0 = full logits,
// 4 and 7 split samples and groups differently, 1024 = one group).
TEST(ObjectiveGolden, MatchesNaiveImplementation) {
    const json& g = golden()["naive"];
    const int64_t B = g["B"], T = g["T"], D = g["D"], V = g["V"];
    MicroBatchTargets t;
    t.labels = labels_from_json(g["labels"], {B, T});
    t.sensitive = labels_from_json(g["sensitive"], {B, T}).to(at::kBool);
    t.sample_index = labels_from_json(g["sample_index"], {B, T});
    t.sample_ids = g["sample_ids"].get<std::vector<std::string>>();
    t.confidence = tensor_from_json(g["confidence"], {B, T}).to(at::kFloat);
    t.reference_prob = tensor_from_json(g["ref_prob"], {B, T}).to(at::kFloat);
    const cuset::ReferenceForward ref{tensor_from_json(g["ref_hidden"], {B, T, D}),
                                      tensor_from_json(g["ref_weight"], {V, D})};
    for (const json& c : g["cases"]) {
        const json& e = c["expected"];
        for (int64_t chunk : {0, 4, 7, 1024}) {
            const std::string what = c["name"].get<std::string>() + " chunk " + std::to_string(chunk);
            Objective obj(options_from_json(c["options"], chunk));
            at::Tensor h = tensor_from_json(g["hidden"], {B, T, D}).requires_grad_();
            at::Tensor w = tensor_from_json(g["weight"], {V, D}).requires_grad_();
            // fp64 against the naive fp64 implementation (the file's note): O(1) values and sums
            // of <= 40 terms, worst case ~4e-14; absolute bounds throughout (kl_sum, scores and
            // gradient elements are differences of O(1) terms).
            std::optional<double> batch_tau;
            if (obj.needs_two_passes()) {  // pass 1, as the trainer does it
                batch_tau = obj.step_threshold(obj.step_scores(h, w, t));
                CUSET_EXPECT_NEAR(*batch_tau, e["batch_tau"].get<double>(), 1e-12) << what;
            }
            ObjectiveOutput out = obj.compute(h, w, t, batch_tau, obj.needs_reference_model() ? &ref : nullptr);
            out.numerator.backward();
            CUSET_EXPECT_NEAR(out.numerator.item<double>(), e["numerator"].get<double>(), 1e-10) << what;
            CUSET_EXPECT_NEAR(out.denominator, e["denominator"].get<double>(), 1e-10) << what;
            expect_close(h.grad(), tensor_from_json(e["grad_hidden"], {B, T, D}), 1e-10, 1e-12, what + " grad hidden");
            expect_close(w.grad(), tensor_from_json(e["grad_weight"], {V, D}), 1e-10, 1e-12, what + " grad weight");
            ASSERT_EQ(out.samples.size(), e["samples"].size()) << what;
            for (size_t s = 0; s < out.samples.size(); ++s) {
                const json& es = e["samples"][s];
                const cuset::SampleWeight& sw = out.samples[s];
                EXPECT_EQ(sw.id, t.sample_ids[s]);
                EXPECT_EQ(sw.n_valid, es["n_valid"].get<int64_t>()) << what << " sample " << s;
                CUSET_EXPECT_NEAR(sw.weight, es["weight"].get<double>(), 1e-12) << what << " sample " << s;
                EXPECT_EQ(sw.win_begin, es["win_begin"].get<int64_t>()) << what << " sample " << s;
                EXPECT_EQ(sw.win_end, es["win_end"].get<int64_t>()) << what << " sample " << s;
                if (es["tau"].is_null()) EXPECT_TRUE(std::isnan(sw.tau)) << what << " sample " << s;
                else CUSET_EXPECT_NEAR(sw.tau, es["tau"].get<double>(), 1e-12) << what << " sample " << s;
            }
            const json& es = e["stats"];
            EXPECT_EQ(out.stats.n_kept, es["n_kept"].get<int64_t>()) << what;
            EXPECT_EQ(out.stats.n_sensitive, es["n_sensitive"].get<int64_t>()) << what;
            EXPECT_EQ(out.stats.n_kept_only_sensitive, es["n_kept_only_sensitive"].get<int64_t>()) << what;
            CUSET_EXPECT_NEAR(out.stats.conf_sum_sensitive, es["conf_sum_sensitive"].get<double>(), 1e-12) << what;
            CUSET_EXPECT_NEAR(out.stats.conf_sum_plain, es["conf_sum_plain"].get<double>(), 1e-12) << what;
            CUSET_EXPECT_NEAR(out.stats.nll_sum_valid, es["nll_sum_valid"].get<double>(), 1e-10) << what;
            CUSET_EXPECT_NEAR(out.stats.tok_w_sum, es["tok_w_sum"].get<double>(), 1e-10) << what;
            CUSET_EXPECT_NEAR(out.stats.kl_sum, es["kl_sum"].get<double>(), 1e-10) << what;
            EXPECT_EQ(out.stats.n_samples, 4) << what;  // s4 has no token
        }
    }
}

// ------------------------------------------------------------------ chunked vs full logits

// First-order rounding bounds for two computations of the per-token NLL of logits z = h W^T
// ([N, D] hidden states, a [V, D] head) and of its gradients, each path with unit roundoff u
// (2^-24 for fp32). A logit is a length-D dot product: |dz| <= D u max sum_d |h_d W_vd| (mag_z);
// the log-sum-exp adds its own reduction, log2(V) levels of a vectorised sum of exponentials
// (log2(V) u relative in the sum, absolute in lse), and carries dz. So, both paths together:
//   a token's nll lse - z_y:   dl <= 2 (2 dz + log2(V) u + u |l|)
//   a probability exp(z - lse): dp <= 2 (2 dz + log2(V) u + 2 u) relative
// The gradients are GEMMs over V (hidden) and over the tokens (head) of the terms up (p - y) W and
// up (p - y) h: elementwise, dp times the sum of |up p W| (resp. |up p h|), plus each path's
// sequential K u of the sum of the terms' magnitudes (K = V, resp. the number of tokens), plus the
// result's own rounding. Only cancellation-free magnitudes enter, so every bound is absolute.
struct NllRounding {
    double dl = 0, dp = 0, l_max = 0;  // l_max: the largest |lse - z_v|
    at::Tensor gh, gw;              // [N, D], [V, D], for upstream weights `up` per token
    at::Tensor gh_terms, gw_terms;  // sum of |up (p - y) W|, resp. |up (p - y) h|: the terms' size
    at::Tensor gh_p, gw_p;          // sum of |up p W|, resp. |up p h|: what a relative error of p moves
    at::Tensor gh_ref, gw_ref;      // the exact gradients (fp64)
};

NllRounding nll_rounding(const at::Tensor& h, const at::Tensor& w, const at::Tensor& labels, const at::Tensor& up,
                         double u) {
    const at::Tensor hd = h.detach().to(at::kDouble).reshape({-1, h.size(-1)}), wd = w.detach().to(at::kDouble);
    const at::Tensor y = labels.reshape({-1}), valid = (y != cuset::kIgnoreIndex).to(at::kDouble).unsqueeze(1);
    const double D = static_cast<double>(hd.size(1)), V = static_cast<double>(wd.size(0));
    const at::Tensor z = at::matmul(hd, wd.t());
    const double dz = D * u * at::matmul(hd.abs(), wd.abs().t()).max().item<double>();
    const at::Tensor lse = at::logsumexp(z, -1);
    const double l_max = (lse.unsqueeze(1) - z).abs().max().item<double>();
    NllRounding r;
    r.l_max = l_max;
    r.dl = 2 * (2 * dz + std::log2(V) * u + u * l_max);
    r.dp = 2 * (2 * dz + std::log2(V) * u + 2 * u);
    const at::Tensor p = at::softmax(z, -1) * valid * up.detach().to(at::kDouble).reshape({-1, 1}).abs();
    const at::Tensor onehot = at::zeros_like(z).scatter_(1, y.clamp_min(0).unsqueeze(1), 1.0) * valid *
                              up.detach().to(at::kDouble).reshape({-1, 1}).abs();
    const at::Tensor g = (p - onehot).abs();  // |up (p - y)|
    const double n_tok = valid.sum().item<double>();
    const at::Tensor gh = at::matmul(p - onehot, wd), gw = at::matmul((p - onehot).t(), hd);
    r.gh_terms = at::matmul(g, wd.abs()).reshape(h.sizes());
    r.gw_terms = at::matmul(g.t(), hd.abs());
    r.gh_p = at::matmul(p, wd.abs()).reshape(h.sizes());
    r.gw_p = at::matmul(p.t(), hd.abs());
    r.gh_ref = gh.reshape(h.sizes());
    r.gw_ref = gw;
    r.gh = r.dp * r.gh_p + 2 * V * u * r.gh_terms + 2 * u * r.gh_ref.abs();
    r.gw = r.dp * r.gw_p + 2 * n_tok * u * r.gw_terms + 2 * u * gw.abs();
    return r;
}

// float32, bigger vocabulary: chunked (fused and recomputing) vs full logits, values and grads.
TEST(ObjectiveChunks, Float32ChunkedMatchesFullLogits) {
    at::manual_seed(7);
    const int64_t B = 3, T = 40, D = 32, V = 1000;
    at::Tensor h0 = at::randn({B, T, D}) * 0.5, w0 = at::randn({V, D}) * 0.5;
    MicroBatchTargets t;
    t.labels = at::randint(0, V, {B, T}, kI64);
    t.labels.narrow(1, 0, 5).fill_(cuset::kIgnoreIndex);
    t.sensitive = at::rand({B, T}) < 0.3;
    auto grads = [&](int64_t chunk) {
        ObjectiveOptions o;
        o.window = 8;
        o.chunk_size = chunk;
        at::Tensor h = h0.clone().requires_grad_(), w = w0.clone().requires_grad_();
        ObjectiveOutput out = Objective(o).compute(h, w, t);
        out.numerator.backward();
        return std::tuple{out.numerator.detach(), h.grad(), w.grad(), out.denominator};
    };
    auto [n0, gh0, gw0, d0] = grads(0);
    // fp32: logits ~N(0, 2) (|z| <= ~10), sums over V = 1e3 exponentials and over ~100 tokens.
    // The bounds are nll_rounding's, with the region weights w = 1 + alpha (1 - window mean of c)
    // <= 2 as the upstream weights; w itself moves by alpha times a confidence's error (<= dp,
    // c <= 1), which adds dw |l| per token to the numerator, dw per token to the denominator and
    // dw |p - y| to the gradient terms. (The masks must be the same: a confidence within dp of
    // its sample's threshold would flip one; none is on these data.) A wrong coefficient or a
    // missed row moves these values by > 1e-2 relative.
    const at::Tensor w_max = at::full({B * T}, 1.0 + ObjectiveOptions{}.alpha);
    const NllRounding r = nll_rounding(h0, w0, t.labels, w_max, std::ldexp(1.0, -24));
    const double dw = ObjectiveOptions{}.alpha * r.dp;
    const NllRounding rw = nll_rounding(h0, w0, t.labels, at::full({B * T}, dw), std::ldexp(1.0, -24));
    const double n_tok = (t.labels != cuset::kIgnoreIndex).sum().item<double>();
    const double num_tol = n_tok * (w_max[0].item<double>() * r.dl + dw * r.l_max), den_tol = n_tok * dw;
    const at::Tensor gh_tol = r.gh + rw.gh_terms, gw_tol = r.gw + rw.gw_terms;
    for (int64_t chunk : {16, 50, 1024}) {
        auto [n1, gh1, gw1, d1] = grads(chunk);
        const std::string what = "chunk " + std::to_string(chunk);
        expect_close(n1, n0, 0.0, num_tol, what + " numerator");
        CUSET_EXPECT_NEAR(d1, d0, den_tol) << what;  // same masks; weights from fp32 confidences
        CUSET_EXPECT_ELEMENTWISE(gh1, gh0, gh_tol, what + " grad hidden");
        CUSET_EXPECT_ELEMENTWISE(gw1, gw0, gw_tol, what + " grad weight");
    }
    // token_nll's own chunked path (backward recomputes) against the full one.
    at::Tensor y = t.labels.reshape({-1});
    at::Tensor hf = h0.reshape({-1, D}).clone().requires_grad_(), wf = w0.clone().requires_grad_();
    at::Tensor hc = hf.detach().clone().requires_grad_(), wc = wf.detach().clone().requires_grad_();
    at::Tensor up = at::rand({B * T});
    at::Tensor lf = cuset::token_nll(hf, wf, y, 0), lc = cuset::token_nll(hc, wc, y, 17);
    (lf * up).sum().backward();
    (lc * up).sum().backward();
    EXPECT_EQ(lc.scalar_type(), at::kFloat);
    // nll_rounding's bounds with the upstream weights `up` (no region weights here).
    const NllRounding rt = nll_rounding(hf, wf, y, up, std::ldexp(1.0, -24));
    expect_close(lc, lf, 0.0, rt.dl, "token_nll");
    CUSET_EXPECT_ELEMENTWISE(hc.grad(), hf.grad(), rt.gh, "token_nll grad hidden");
    CUSET_EXPECT_ELEMENTWISE(wc.grad(), wf.grad(), rt.gw, "token_nll grad weight");
}

// A bfloat16 model: the loss is fp32, close to the fp32 computation on the same (bf16) values.
TEST(ObjectiveChunks, Bfloat16ModelGivesFloat32Loss) {
    at::manual_seed(3);
    const int64_t N = 24, D = 16, V = 300;
    at::Tensor h16 = (at::randn({N, D}) * 0.5).to(at::kBFloat16), w16 = (at::randn({V, D}) * 0.5).to(at::kBFloat16);
    at::Tensor y = at::randint(0, V, {N}, kI64);
    at::Tensor hb = h16.clone().requires_grad_(), wb = w16.clone().requires_grad_();
    at::Tensor hf = h16.to(at::kFloat).requires_grad_(), wf = w16.to(at::kFloat).requires_grad_();
    at::Tensor lb = cuset::token_nll(hb, wb, y, 8), lf = cuset::token_nll(hf, wf, y, 0);
    EXPECT_EQ(lb.scalar_type(), at::kFloat);
    lb.sum().backward();
    lf.sum().backward();
    EXPECT_EQ(hb.grad().scalar_type(), at::kBFloat16);
    EXPECT_EQ(wb.grad().scalar_type(), at::kBFloat16);
    // On the CPU the logits are rounded to bf16 (8 significant bits, u = 2^-8 relative): with
    // |z| < 8 a logit is off by < 8 u = .031, so the loss (lse - z_y) by < 2 x 8 u = .0625 and
    // each probability by < 2 x 8 u relative; the backward rounds p - y (u) and its results
    // (u |g|) to bf16. Elementwise, on the terms' magnitudes (nll_rounding's, fp32 terms added):
    //   |dg| <= 16 u sum |p W| + u sum |(p - y) W| + u |g|   (and the same over tokens for W).
    // A wrong formula is off by O(|W|) ~ 1.
    const double ub = std::ldexp(1.0, -8), z_cap = 8.0;
    const NllRounding r = nll_rounding(hf, wf, y, at::ones({N}), std::ldexp(1.0, -24));
    ASSERT_LT(at::matmul(hf.detach(), wf.detach().t()).abs().max().item<double>(), z_cap);
    expect_close(lb, lf, 0.0, 2 * z_cap * ub + r.dl, "bf16 nll");
    CUSET_EXPECT_ELEMENTWISE(hb.grad(), hf.grad(), 2 * z_cap * ub * r.gh_p + ub * r.gh_terms + ub * r.gh_ref.abs() + r.gh,
                             "bf16 grad hidden");
    // The weight's gradient is the fp32 sum of the chunks' parts (3 chunks of 8 tokens), each
    // rounded to bf16 first (u |g_c|), then the sum once more (u |g|): the parts' roundings are
    // relative to the parts, which may cancel, not to their sum. A part is a bf16 product over the
    // chunk's 8 tokens, and the CPU's bf16 matrix product need not accumulate in fp32 (it does
    // only where oneDNN's bf16 kernels run): a length-8 sum then errs by up to 8 u sum |terms|.
    at::Tensor parts_abs = at::zeros_like(wf);  // [V, D] sum over chunks c of |g_c|, fp32 parts
    for (int64_t a = 0; a < N; a += 8) {
        at::Tensor wc = wf.detach().clone().requires_grad_();
        cuset::token_nll(hf.detach().narrow(0, a, 8), wc, y.narrow(0, a, 8), 0).sum().backward();
        parts_abs += wc.grad().abs();
    }
    CUSET_EXPECT_ELEMENTWISE(wb.grad(), wf.grad(),
                             2 * z_cap * ub * r.gw_p + 8 * ub * r.gw_terms + ub * (r.gw_ref.abs() + parts_abs) + r.gw,
                             "bf16 grad weight");
}

// ------------------------------------------------------------------ split invariance

// A step of 4 samples through a tiny linear model (hidden = X A) gives the same gradient for
// micro-batch 4 x accumulation 1, 2 x 2 and 1 x 4 (fp64; only summation order differs, ~1e-15,
// checked at 1e-11). The classic per-micro-batch mean would miss by ~10%.
struct Step {
    at::Tensor X;       // [4, T, D0] fp64
    at::Tensor labels;  // [4, T]
    at::Tensor sens;    // [4, T]
    at::Tensor ref_prob;  // [4, T] fp32 reference p(target) (rho1)
};

Step make_step() {
    at::manual_seed(11);
    const int64_t T = 14, D0 = 3, V = 9;
    Step s;
    s.X = at::randn({4, T, D0}, kF64);
    s.labels = at::randint(0, V, {4, T}, kI64);
    const int64_t prompt[4] = {2, 5, 1, 3}, len[4] = {10, 14, 4, 9};  // valid: 8, 9, 3, 6
    for (int64_t i = 0; i < 4; ++i) {
        s.labels[i].narrow(0, 0, prompt[i]).fill_(cuset::kIgnoreIndex);
        if (len[i] < T) s.labels[i].narrow(0, len[i], T - len[i]).fill_(cuset::kIgnoreIndex);
    }
    s.sens = at::rand({4, T}, kF64) < 0.3;
    s.ref_prob = (at::rand({4, T}, kF64) * 0.9 + 0.05).to(at::kFloat);
    return s;
}

std::pair<at::Tensor, at::Tensor> step_grads(const Step& s, const ObjectiveOptions& o, int64_t micro,
                                             double* loss) {
    at::manual_seed(5);
    at::Tensor A = at::randn({3, 5}, kF64).requires_grad_(), W = at::randn({9, 5}, kF64).requires_grad_();
    // asft's frozen reference model: another linear model, no gradients
    at::Tensor A_ref = A.detach() + 0.3 * at::randn({3, 5}, kF64), W_ref = W.detach() + 0.3 * at::randn({9, 5}, kF64);
    Objective obj(o);
    auto targets = [&](int64_t b) {
        MicroBatchTargets t;
        t.labels = s.labels.narrow(0, b, micro);
        t.sensitive = s.sens.narrow(0, b, micro);
        t.reference_prob = s.ref_prob.narrow(0, b, micro);
        return t;
    };
    std::optional<double> batch_tau;
    if (obj.needs_two_passes()) {
        std::vector<at::Tensor> all;
        for (int64_t b = 0; b < 4; b += micro) {
            at::NoGradGuard no_grad;
            all.push_back(obj.step_scores(at::matmul(s.X.narrow(0, b, micro), A), W, targets(b)));
        }
        batch_tau = obj.step_threshold(at::cat(all));
    }
    double num = 0, den = 0;
    for (int64_t b = 0; b < 4; b += micro) {
        MicroBatchTargets t = targets(b);
        const cuset::ReferenceForward ref{at::matmul(s.X.narrow(0, b, micro), A_ref), W_ref};
        ObjectiveOutput out = obj.compute(at::matmul(s.X.narrow(0, b, micro), A), W, t, batch_tau, &ref);
        out.numerator.backward();
        num += out.numerator.item<double>();
        den += out.denominator;
    }
    // The step's denominator over all micro-batches (train_step sums it over ranks as well; the
    // step-level split test through train_step is tests/train/test_train_step.cpp).
    const double D = den;
    cuset::gradients_scale({A, W}, 1.0 / D);
    *loss = num / D;
    return {A.grad(), W.grad()};
}

TEST(ObjectiveSplit, GradientIndependentOfMicroBatching) {
    Step s = make_step();
    std::vector<std::pair<std::string, ObjectiveOptions>> cases;
    for (int64_t chunk : {0, 4, 1024}) {
        ObjectiveOptions o;
        o.window = 4;
        o.chunk_size = chunk;
        const std::string c = " chunk " + std::to_string(chunk);
        cases.push_back({"cuset" + c, o});
        ObjectiveOptions sft = o;
        sft.method = Method::kSft;
        cases.push_back({"sft" + c, sft});
        ObjectiveOptions dft = o;
        dft.method = Method::kDft;
        cases.push_back({"dft" + c, dft});
        ObjectiveOptions focal = o;
        focal.method = Method::kFocal;
        cases.push_back({"focal" + c, focal});
        ObjectiveOptions eaft = o;
        eaft.method = Method::kEaft;
        eaft.eaft_k = 4;
        cases.push_back({"eaft" + c, eaft});
        ObjectiveOptions asft = o;
        asft.method = Method::kAsft;
        asft.asft_alpha = 0.7;
        cases.push_back({"asft" + c, asft});
        ObjectiveOptions rho1 = o;
        rho1.method = Method::kRho1;
        rho1.rho1_keep_fraction = 0.4;  // ceil(10.4) = 11 of the step's 26 tokens, whatever the split
        cases.push_back({"rho1" + c, rho1});
        ObjectiveOptions bq = o;
        bq.threshold_mode = ThresholdMode::kBatchQuantile;
        bq.drop_weight = 0.2;
        cases.push_back({"cuset batch_quantile" + c, bq});
    }
    for (const auto& [name, o] : cases) {
        double loss4 = 0, loss2 = 0, loss1 = 0;
        auto [a4, w4] = step_grads(s, o, 4, &loss4);
        auto [a2, w2] = step_grads(s, o, 2, &loss2);
        auto [a1, w1] = step_grads(s, o, 1, &loss1);
        // fp64, the order of summation only (the header's ~1e-15): a loss is a ratio of positive
        // sums (relative); the gradient elements of A (3 x 5) and W (9 x 5) are sums over the
        // step's 26 tokens of O(1) / 26 terms, |err| <~ 26 x 2^-53, hence the absolute 1e-14.
        CUSET_EXPECT_NEAR(loss2, loss4, 1e-12 * std::abs(loss4)) << name;
        CUSET_EXPECT_NEAR(loss1, loss4, 1e-12 * std::abs(loss4)) << name;
        expect_close(a2, a4, 1e-11, 1e-14, name + " grad A, 2 x 2");
        expect_close(a1, a4, 1e-11, 1e-14, name + " grad A, 1 x 4");
        expect_close(w2, w4, 1e-11, 1e-14, name + " grad W, 2 x 2");
        expect_close(w1, w4, 1e-11, 1e-14, name + " grad W, 1 x 4");
    }
    // The test can fail: a per-micro-batch mean (the gradient-accumulation bug) differs.
    ObjectiveOptions o;
    o.method = Method::kSft;
    at::manual_seed(5);
    at::Tensor A = at::randn({3, 5}, kF64).requires_grad_(), W = at::randn({9, 5}, kF64).requires_grad_();
    for (int64_t b = 0; b < 4; ++b) {
        MicroBatchTargets t;
        t.labels = s.labels.narrow(0, b, 1);
        ObjectiveOutput out = Objective(o).compute(at::matmul(s.X.narrow(0, b, 1), A), W, t);
        (out.numerator / out.denominator / 4).backward();
    }
    double loss = 0;
    auto [a4, w4] = step_grads(s, o, 4, &loss);
    EXPECT_GT((A.grad() - a4).abs().max().item<double>(), 1e-3);
}

// ------------------------------------------------------------------ edge cases and the API

TEST(ObjectiveEdges, NoValidTokenIsAZeroStep) {
    Hand hb = hand_batch({{kIgn, kIgn, kIgn}}, {{1, 0, 0}});
    for (int64_t chunk : {0, 2}) {
        at::Tensor h = hb.hidden.clone().requires_grad_();
        ObjectiveOptions o = cuset_options(chunk);
        ObjectiveOutput out = Objective(o).compute(h, hb.lm_head, hb.t);
        EXPECT_EQ(out.numerator.item<double>(), 0.0);
        EXPECT_EQ(out.denominator, 0.0);
        EXPECT_EQ(out.stats.n_valid, 0);
        EXPECT_EQ(out.stats.n_samples, 0);
        EXPECT_NO_THROW(out.numerator.backward());
        EXPECT_FALSE(h.grad().defined());  // nothing reached the model
        EXPECT_EQ(out.denominator, 0.0);
        EXPECT_THROW(cuset::gradients_scale({h}, 1.0 / out.denominator), cuset::RuntimeFailure);
    }
}

TEST(ObjectiveEdges, NonFiniteLogitIsAClearError) {
    for (int64_t chunk : {0, 2, 1024}) {
        Hand hb = hand_example();
        hb.hidden.index_put_({1, 3, 2}, std::nan(""));
        EXPECT_THROW(run(cuset_options(chunk), hb), cuset::RuntimeFailure) << chunk;
        hb = hand_example();
        hb.lm_head.index_put_({1, 1}, INFINITY);
        EXPECT_THROW(run(cuset_options(chunk), hb), cuset::RuntimeFailure) << chunk;
        hb = hand_example();
        hb.hidden.index_put_({0, 0, 3}, -INFINITY);  // not the target's logit: still an error
        EXPECT_THROW(run(cuset_options(chunk), hb), cuset::RuntimeFailure) << chunk;
        try {
            at::Tensor w = hand_example().lm_head.clone();
            w.index_put_({0, 0}, std::nan(""));
            cuset::token_nll(hb.hidden.reshape({-1, 4}), w, hb.t.labels.reshape({-1}), chunk);
            ADD_FAILURE() << "no error";
        } catch (const cuset::RuntimeFailure& e) {
            EXPECT_NE(std::string(e.what()).find("non-finite logits"), std::string::npos) << e.what();
        }
        // A NaN in an ignored position is never computed: ignored targets cost nothing.
        hb = hand_example();
        hb.hidden.index_put_({0, 5, 0}, std::nan(""));
        hb.hidden.index_put_({1, 0, 0}, std::nan(""));
        EXPECT_TRUE(std::isfinite(run(cuset_options(chunk), hb).numerator.item<double>())) << chunk;
    }
}

TEST(ObjectiveEdges, BadInputsAreReported) {
    Hand hb = hand_example();
    hb.t.labels.index_put_({0, 1}, 4);  // V = 4
    EXPECT_THROW(run(cuset_options(0), hb), cuset::InputError);
    EXPECT_THROW(cuset::token_nll(hb.hidden.reshape({-1, 4}), hb.lm_head, hb.t.labels.reshape({-1}), 2),
                 cuset::InputError);
    ObjectiveOptions o = cuset_options(2);
    o.threshold_mode = ThresholdMode::kBatchQuantile;
    EXPECT_THROW(run(o, hand_example()), cuset::RuntimeFailure);  // no batch_tau
    o = cuset_options(2);
    o.cached_confidence = true;
    EXPECT_THROW(run(o, hand_example()), cuset::RuntimeFailure);  // no confidence tensor
    o = cuset_options(2);
    o.window = 0;
    EXPECT_THROW(Objective{o}, cuset::UsageError);
    hb = hand_example();
    EXPECT_THROW(Objective(cuset_options(2)).compute(hb.hidden, hb.lm_head.to(at::kFloat), hb.t),
                 cuset::RuntimeFailure);
}

// Evaluation runs without gradients: same numbers, no graph.
TEST(ObjectiveEdges, NoGradEvaluation) {
    Hand hb = hand_example();
    for (int64_t chunk : {0, 2, 1024}) {
        double with_grad = run(cuset_options(chunk), hb).numerator.item<double>();
        at::NoGradGuard no_grad;
        ObjectiveOutput out = run(cuset_options(chunk), hb);
        EXPECT_FALSE(out.numerator.requires_grad());
        EXPECT_EQ(out.numerator.item<double>(), with_grad);
    }
}

// A frozen lm_head (or frozen hidden states): only the other gradient is made, and it is right.
TEST(ObjectiveEdges, GradientsOnlyWhereRequired) {
    const json& g = golden()["naive"];
    const int64_t B = g["B"], T = g["T"], D = g["D"], V = g["V"];
    MicroBatchTargets t;
    t.labels = labels_from_json(g["labels"], {B, T});
    t.sample_index = labels_from_json(g["sample_index"], {B, T});
    const json& e = g["cases"][0]["expected"];  // cuset; chunk 4 recomputes the longer samples
    ASSERT_EQ(g["cases"][0]["name"], "cuset");
    t.sensitive = labels_from_json(g["sensitive"], {B, T}).to(at::kBool);
    for (int64_t chunk : {4, 1024}) {
        ObjectiveOptions o = options_from_json(g["cases"][0]["options"], chunk);
        at::Tensor h = tensor_from_json(g["hidden"], {B, T, D}).requires_grad_();
        at::Tensor w = tensor_from_json(g["weight"], {V, D});
        Objective(o).compute(h, w, t).numerator.backward();
        // The golden test's fp64 bounds (MatchesNaiveImplementation).
        expect_close(h.grad(), tensor_from_json(e["grad_hidden"], {B, T, D}), 1e-10, 1e-12, "frozen lm_head");
        EXPECT_FALSE(w.grad().defined());
        h = tensor_from_json(g["hidden"], {B, T, D});
        w.requires_grad_();
        Objective(o).compute(h, w, t).numerator.backward();
        expect_close(w.grad(), tensor_from_json(e["grad_weight"], {V, D}), 1e-10, 1e-12, "frozen hidden");
    }
}

TEST(ObjectiveApi, ConfidencesOfValidTargets) {
    Hand hb = hand_example();
    for (int64_t chunk : {0, 3}) {
        at::Tensor c = Objective(cuset_options(chunk)).confidences(hb.hidden, hb.lm_head, hb.t.labels);
        EXPECT_EQ(c.scalar_type(), at::kDouble);
        // fp64 round trip exp(log c - lse): a few ulps relative (kHandTol, relative here).
        expect_close(c, at::tensor(std::vector<double>{.9, .2, .6, .1, .8, .5, .05, .7, .3}), kHandTol, 0,
                     "confidences");
    }
}

// ObjectiveStats through its flat buffer (the sums over ranks, the objective's transfer from the
// device) and back: every field in its place, the counts exact, the infinities of an empty
// merge kept.
TEST(ObjectiveApi, StatsBufferRoundTrip) {
    cuset::ObjectiveStats s;
    s.n_valid = 9007199254740991;  // 2^53 - 1
    s.n_kept = 7;
    s.n_sensitive = 5;
    s.n_kept_only_sensitive = 3;
    s.sum_tau = 0.625;
    s.n_tau = 2;
    s.n_samples = 4;
    s.w_min = 1.25;
    s.w_max = 1.75;
    s.w_sum = 6.0;
    s.conf_sum_sensitive = 2.5;
    s.conf_sum_plain = 1.5;
    s.nll_sum_valid = 11.0;
    s.tok_w_sum = 8.5;
    s.kl_sum = 0.125;
    const std::vector<double> b = s.to_buffer();
    ASSERT_EQ(b.size(), static_cast<size_t>(cuset::ObjectiveStats::kFields));
    EXPECT_EQ(b[cuset::ObjectiveStats::kNValid], 9007199254740991.0);
    EXPECT_EQ(b[cuset::ObjectiveStats::kNKeptOnlySensitive], 3.0);
    EXPECT_EQ(b[cuset::ObjectiveStats::kWMax], 1.75);
    EXPECT_EQ(b[cuset::ObjectiveStats::kKlSum], 0.125);
    const cuset::ObjectiveStats r = cuset::ObjectiveStats::from_buffer(b.data());
    EXPECT_EQ(r.n_valid, s.n_valid);
    EXPECT_EQ(r.n_kept, s.n_kept);
    EXPECT_EQ(r.n_sensitive, s.n_sensitive);
    EXPECT_EQ(r.n_kept_only_sensitive, s.n_kept_only_sensitive);
    EXPECT_EQ(r.sum_tau, s.sum_tau);
    EXPECT_EQ(r.n_tau, s.n_tau);
    EXPECT_EQ(r.n_samples, s.n_samples);
    EXPECT_EQ(r.w_min, s.w_min);
    EXPECT_EQ(r.w_max, s.w_max);
    EXPECT_EQ(r.w_sum, s.w_sum);
    EXPECT_EQ(r.conf_sum_sensitive, s.conf_sum_sensitive);
    EXPECT_EQ(r.conf_sum_plain, s.conf_sum_plain);
    EXPECT_EQ(r.nll_sum_valid, s.nll_sum_valid);
    EXPECT_EQ(r.tok_w_sum, s.tok_w_sum);
    EXPECT_EQ(r.kl_sum, s.kl_sum);
    EXPECT_EQ(r.to_buffer(), b);
    const cuset::ObjectiveStats none = cuset::ObjectiveStats::from_buffer(cuset::ObjectiveStats{}.to_buffer().data());
    EXPECT_EQ(none.w_min, std::numeric_limits<double>::infinity());
    EXPECT_EQ(none.w_max, -std::numeric_limits<double>::infinity());
    EXPECT_EQ(none.n_valid, 0);
    // A micro-batch's statistics come through the same buffer from the device.
    ObjectiveOutput a = run(cuset_options(0), hand_example());
    EXPECT_EQ(cuset::ObjectiveStats::from_buffer(a.stats.to_buffer().data()).to_buffer(), a.stats.to_buffer());
}

TEST(ObjectiveApi, StatsMerge) {
    ObjectiveOutput a = run(cuset_options(0), hand_example());
    cuset::ObjectiveStats s = a.stats;
    s.merge(a.stats);
    EXPECT_EQ(s.n_valid, 18);
    EXPECT_EQ(s.n_kept, 16);
    EXPECT_EQ(s.n_samples, 4);
    CUSET_EXPECT_NEAR(s.w_min, 1.65, kHandTol);
    CUSET_EXPECT_NEAR(s.w_max, 1.725, kHandTol);
    CUSET_EXPECT_NEAR(s.mean_tau(), a.stats.mean_tau(), kHandTol);
    CUSET_EXPECT_NEAR(s.kept_fraction(), 8.0 / 9, kHandTol);
    cuset::ObjectiveStats empty;
    EXPECT_TRUE(std::isnan(empty.kept_fraction()));
}

}  // namespace

// CuSeT's mask and weights of given confidences (GRPO's token_weights: cuset) are those of the
// hand-worked example above, computed by the objective itself: the same two samples, in sequence
// order (sample 0: .9 .2 .6 .1* .8, * sensitive; sample 1: .5 .05 .7 .3), with an empty sequence
// between them. tau 0.2 / 0.2375, w 1.65 / 1.725; the .05 alone is dropped.
TEST(CusetTokenWeights, TheHandWorkedExample) {
    const at::Tensor conf = at::tensor(std::vector<double>{.9, .2, .6, .1, .8, .5, .05, .7, .3}, at::kDouble);
    const at::Tensor sens = at::tensor(std::vector<int64_t>{0, 0, 0, 1, 0, 0, 0, 0, 0}, at::kLong).to(at::kBool);
    const cuset::CusetTokenWeights w = cuset::cuset_token_weights(conf, sens, {5, 0, 4}, cuset_options(0));
    const std::vector<double> want = {1.65, 1.65, 1.65, 1.65, 1.65, 1.725, 0.0, 1.725, 1.725};
    ASSERT_EQ(w.coefficient.numel(), 9);
    for (int64_t i = 0; i < 9; ++i) CUSET_EXPECT_NEAR(w.coefficient[i].item<double>(), want[i], kHandTol) << i;
    for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(w.kept[i].item<bool>(), i != 6) << i;
    ASSERT_EQ(w.weight.numel(), 3);
    CUSET_EXPECT_NEAR(w.weight[0].item<double>(), 1.65, kHandTol);
    EXPECT_EQ(w.weight[1].item<double>(), 1.0) << "a sequence without tokens";
    CUSET_EXPECT_NEAR(w.weight[2].item<double>(), 1.725, kHandTol);

    // A fixed threshold of .5 and no region weight: c >= .5 or sensitive, w = 1; the .2 and .05 and
    // .3 are dropped, the .1 kept because sensitive.
    ObjectiveOptions fixed = cuset_options(0);
    fixed.threshold_mode = ThresholdMode::kFixed;
    fixed.threshold_value = 0.5;
    fixed.region_enabled = false;
    const cuset::CusetTokenWeights f = cuset::cuset_token_weights(conf, sens, {5, 0, 4}, fixed);
    const std::vector<double> kept = {1, 0, 1, 1, 1, 1, 0, 1, 0};
    for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(f.coefficient[i].item<double>(), kept[i]) << i;
    // Every switch off: every token weighs 1, the plain mask.
    ObjectiveOptions off = fixed;
    off.mask_confidence = false;
    const cuset::CusetTokenWeights o = cuset::cuset_token_weights(conf, sens, {5, 0, 4}, off);
    EXPECT_TRUE(at::equal(o.coefficient, at::ones({9}, at::kDouble)));

    ObjectiveOptions batch = cuset_options(0);
    batch.threshold_mode = ThresholdMode::kBatchQuantile;
    EXPECT_THROW(cuset::cuset_token_weights(conf, sens, {5, 0, 4}, batch), cuset::UsageError);
    EXPECT_THROW(cuset::cuset_token_weights(conf, sens, {5, 3}, cuset_options(0)), cuset::RuntimeFailure);
}
