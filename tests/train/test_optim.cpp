// AdamW against torch.optim.AdamW, clipping against torch.nn.utils.clip_grad_norm_ (golden values
// from tests/golden/optim.py), and the learning-rate schedules against hand-worked values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "cuset/train/optim.h"
#include "tensor_check.h"

using nlohmann::json;

namespace {

json golden() {
    std::ifstream f(std::string(CUSET_TEST_WORK) + "/golden/optim/optim.json");
    EXPECT_TRUE(f.good()) << "golden file missing: run ctest (fixture golden_optim)";
    json j;
    f >> j;
    return j;
}

at::Tensor tensor_of(const json& values, const json& shape, at::ScalarType dtype) {
    std::vector<double> v = values.get<std::vector<double>>();
    std::vector<int64_t> s = shape.get<std::vector<int64_t>>();
    return at::tensor(v, at::kDouble).reshape(s).to(dtype);
}

using cuset::test::max_abs_diff;

// The largest differences to the reference after the case's steps, over all its parameters, and
// the largest magnitudes of the reference's values (the scales the roundings are relative to).
struct AdamWDiff {
    double param = 0, exp_avg = 0, exp_avg_sq = 0;
    double param_max = 0, exp_avg_max = 0, exp_avg_sq_max = 0;
    int64_t steps = 0;
};

AdamWDiff run_adamw_case(const json& c, at::ScalarType dtype) {
    std::vector<cuset::OptimParam> params;
    for (size_t i = 0; i < c["shapes"].size(); ++i) {
        at::Tensor p = tensor_of(c["init"][i], c["shapes"][i], dtype).requires_grad_(true);
        params.push_back({"p" + std::to_string(i), p, c["decay"][i].get<bool>()});
    }
    cuset::AdamWOptions o;
    o.beta1 = c["betas"][0];
    o.beta2 = c["betas"][1];
    o.eps = c["eps"];
    o.weight_decay = c["weight_decay"];
    cuset::AdamW opt(params, o);
    const auto& lrs = c["lrs"];
    for (size_t s = 0; s < lrs.size(); ++s) {
        for (size_t i = 0; i < params.size(); ++i)
            params[i].param.mutable_grad() = tensor_of(c["grads"][s][i], c["shapes"][i], dtype);
        opt.step(lrs[s].get<double>());
    }
    auto state = opt.state_tensors();
    AdamWDiff d;
    for (size_t i = 0; i < params.size(); ++i) {
        at::Tensor want = tensor_of(c["final"][i], c["shapes"][i], dtype);
        d.param = std::max(d.param, max_abs_diff(params[i].param.detach(), want));
        d.param_max = std::max(d.param_max, want.abs().max().item<double>());
        at::Tensor m, v;
        for (auto& kv : state) {
            if (kv.first == params[i].name + ".exp_avg") m = kv.second;
            if (kv.first == params[i].name + ".exp_avg_sq") v = kv.second;
        }
        EXPECT_TRUE(m.defined() && v.defined()) << "param " << i;
        if (!m.defined() || !v.defined()) continue;
        const at::Tensor m_ref = tensor_of(c["exp_avg"][i], c["shapes"][i], at::kFloat);
        const at::Tensor v_ref = tensor_of(c["exp_avg_sq"][i], c["shapes"][i], at::kFloat);
        d.exp_avg = std::max(d.exp_avg, max_abs_diff(m, m_ref));
        d.exp_avg_sq = std::max(d.exp_avg_sq, max_abs_diff(v, v_ref));
        d.exp_avg_max = std::max(d.exp_avg_max, m_ref.abs().max().item<double>());
        d.exp_avg_sq_max = std::max(d.exp_avg_sq_max, v_ref.abs().max().item<double>());
    }
    EXPECT_EQ(opt.step_count(), static_cast<int64_t>(lrs.size()));
    d.steps = static_cast<int64_t>(lrs.size());
    return d;
}

}  // namespace

// A state after K fp32 steps in another operation order: each step rounds each value once more
// (at most u = 2^-24 of its magnitude; the update's own few roundings are u of lr |m / sqrt(v)|
// <= u lr, far smaller), and a rounding carried into the next step decays (beta < 1) or is added
// once (the parameter): |err| <= 2 K u max|value|.
double adamw_tol(int64_t steps, double magnitude) { return 2.0 * static_cast<double>(steps) * std::ldexp(1.0, -24) * magnitude; }

TEST(AdamW, MatchesTorchFp32) {
    // Same operation order as torch's single-tensor AdamW on the same CPU kernels: results agree
    // to fp32 rounding (seen: bit for bit); adamw_tol allows any order of the same operations.
    const AdamWDiff d = run_adamw_case(golden()["adamw_fp32"], at::kFloat);
    CUSET_EXPECT_WITHIN(d.param, adamw_tol(d.steps, d.param_max));
    CUSET_EXPECT_WITHIN(d.exp_avg, adamw_tol(d.steps, d.exp_avg_max));
    CUSET_EXPECT_WITHIN(d.exp_avg_sq, adamw_tol(d.steps, d.exp_avg_sq_max));
}

TEST(AdamW, Bf16ParamsUpdateThroughFp32Master) {
    // The reference runs AdamW on fp32 copies and casts to bf16; our master copies are the same
    // fp32 values, so the bf16 parameters agree up to one bf16 rounding step (an ulp: at most
    // 2^-7 of the value, 8 significant bits) in the rare case the fp32 values straddle a rounding
    // boundary, plus the fp32 masters' adamw_tol; the fp32 moments agree to adamw_tol.
    const AdamWDiff d = run_adamw_case(golden()["adamw_bf16"], at::kBFloat16);
    CUSET_EXPECT_WITHIN(d.param, std::ldexp(1.0, -7) * d.param_max + adamw_tol(d.steps, d.param_max));
    CUSET_EXPECT_WITHIN(d.exp_avg, adamw_tol(d.steps, d.exp_avg_max));
    CUSET_EXPECT_WITHIN(d.exp_avg_sq, adamw_tol(d.steps, d.exp_avg_sq_max));
}

TEST(AdamW, StateRoundTrip) {
    at::Tensor p = at::ones({3}, at::kBFloat16).requires_grad_(true);
    cuset::AdamW a({{"w", p, true}}, {});
    p.mutable_grad() = at::full({3}, 0.5, at::kBFloat16);
    a.step(0.1);
    auto st = a.state_tensors();
    ASSERT_EQ(st.size(), 3u);  // exp_avg, exp_avg_sq, master (bf16 parameter)
    at::Tensor q = at::ones({3}, at::kBFloat16).requires_grad_(true);
    cuset::AdamW b({{"w", q, true}}, {});
    b.load_state(st, a.step_count());
    EXPECT_TRUE(at::equal(q.detach(), p.detach()));
    p.mutable_grad() = at::full({3}, -0.25, at::kBFloat16);
    q.mutable_grad() = at::full({3}, -0.25, at::kBFloat16);
    a.step(0.1);
    b.step(0.1);
    EXPECT_TRUE(at::equal(q.detach(), p.detach()));
}

TEST(Clip, MatchesTorchClipGradNorm) {
    json g = golden();
    for (const char* name : {"clip_active", "clip_inactive"}) {
        const json& c = g[name];
        std::vector<at::Tensor> ps;
        for (size_t i = 0; i < c["shapes"].size(); ++i) {
            at::Tensor p = at::zeros(c["shapes"][i].get<std::vector<int64_t>>()).requires_grad_(true);
            p.mutable_grad() = tensor_of(c["grads"][i], c["shapes"][i], at::kFloat);
            ps.push_back(p);
        }
        double norm = cuset::gradients_clip(ps, c["max_norm"].get<double>());
        // A sum of 16 fp32 squares: at most 16 u relative in any order (1e-6), halved by the
        // square root; 1e-5 relative.
        CUSET_EXPECT_NEAR(norm, c["norm"].get<double>(), 1e-5 * c["norm"].get<double>()) << name;
        // The clipped gradients g max_norm / norm: the norm's 8 u, the division's and the
        // product's roundings, ~10 u of |g c| <= 1 (6e-7); unclipped ones are unchanged. 1e-6.
        for (size_t i = 0; i < ps.size(); ++i)
            CUSET_EXPECT_WITHIN(max_abs_diff(ps[i].grad(), tensor_of(c["clipped"][i], c["shapes"][i], at::kFloat)),
                                1e-6)
                << name;
    }
}

TEST(Schedule, WarmupThenCosineAndLinear) {
    cuset::ScheduleOptions s{"cosine", /*warmup_steps=*/2, /*total_steps=*/6, /*min_lr_ratio=*/0.1};
    // warmup: (step+1)/2
    EXPECT_DOUBLE_EQ(cuset::lr_multiplier(s, 0), 0.5);
    EXPECT_DOUBLE_EQ(cuset::lr_multiplier(s, 1), 1.0);
    // decay over steps 2..5, progress (step-2)/3: 0, 1/3, 2/3, 1. Each value is a few fp64
    // operations on O(1) numbers, written here in another order (progress 1/3 against pi / 3,
    // cos(pi / 3) = 0.5 from libm, which rounds within an ulp): an ulp or two apart; kUlps16
    // = 16 ulps of 1 (3.6e-15) allows any order, libm or contraction into an FMA, and still
    // catches a wrong phase or floor (>= 1e-2).
    const double kUlps16 = 16 * std::ldexp(1.0, -52);
    EXPECT_DOUBLE_EQ(cuset::lr_multiplier(s, 2), 1.0);
    CUSET_EXPECT_NEAR(cuset::lr_multiplier(s, 3), 0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI / 3)), kUlps16);  // 0.775
    CUSET_EXPECT_NEAR(cuset::lr_multiplier(s, 4), 0.1 + 0.9 * 0.25, kUlps16);                            // 0.325
    CUSET_EXPECT_NEAR(cuset::lr_multiplier(s, 5), 0.1, kUlps16);
    s.kind = "linear";
    CUSET_EXPECT_NEAR(cuset::lr_multiplier(s, 3), 1.0 - 0.9 / 3, kUlps16);
    CUSET_EXPECT_NEAR(cuset::lr_multiplier(s, 5), 0.1, kUlps16);
    s.kind = "constant";
    EXPECT_DOUBLE_EQ(cuset::lr_multiplier(s, 4), 1.0);
    EXPECT_DOUBLE_EQ(cuset::lr_multiplier(s, 0), 0.5);
}

TEST(Decay, NormsAndBiasesExcludedByDefault) {
    EXPECT_TRUE(cuset::decays_by_default("model.layers.0.mlp.up_proj.weight", at::zeros({4, 4})));
    EXPECT_FALSE(cuset::decays_by_default("model.layers.0.self_attn.q_proj.bias", at::zeros({4})));
    EXPECT_FALSE(cuset::decays_by_default("model.norm.weight", at::zeros({4})));
    EXPECT_FALSE(cuset::decays_by_default("model.layers.0.self_attn.q_norm.weight", at::zeros({4})));
}

TEST(Decay, OptimParamsOfRequireGradientsAndDecayByDefaultOrAll) {
    const std::vector<std::pair<std::string, at::Tensor>> named{{"model.layers.0.mlp.up_proj.weight", at::zeros({4, 4})},
                                                                {"model.norm.weight", at::zeros({4})}};
    std::vector<cuset::OptimParam> ps = cuset::optim_params_of(named);
    ASSERT_EQ(ps.size(), 2u);
    EXPECT_EQ(ps[0].name, "model.layers.0.mlp.up_proj.weight");
    EXPECT_TRUE(ps[0].decay);
    EXPECT_FALSE(ps[1].decay);
    EXPECT_TRUE(ps[0].param.requires_grad() && named[1].second.requires_grad());  // the model's own tensors
    std::vector<cuset::OptimParam> all = cuset::optim_params_of(named, /*decay_all=*/true);
    EXPECT_TRUE(all[0].decay && all[1].decay);
}
