// AdamW against torch.optim.AdamW, clipping against torch.nn.utils.clip_grad_norm_ (golden values
// from tests/golden/optim.py), and the learning-rate schedules against hand-worked values.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "cuset/train/optim.h"

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

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
    return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

void run_adamw_case(const json& c, at::ScalarType dtype, double tol_param, double tol_state) {
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
    for (size_t i = 0; i < params.size(); ++i) {
        at::Tensor want = tensor_of(c["final"][i], c["shapes"][i], dtype);
        EXPECT_LE(max_abs_diff(params[i].param.detach(), want), tol_param) << "param " << i;
        at::Tensor m, v;
        for (auto& kv : state) {
            if (kv.first == params[i].name + ".exp_avg") m = kv.second;
            if (kv.first == params[i].name + ".exp_avg_sq") v = kv.second;
        }
        EXPECT_LE(max_abs_diff(m, tensor_of(c["exp_avg"][i], c["shapes"][i], at::kFloat)), tol_state);
        EXPECT_LE(max_abs_diff(v, tensor_of(c["exp_avg_sq"][i], c["shapes"][i], at::kFloat)), tol_state);
    }
    EXPECT_EQ(opt.step_count(), static_cast<int64_t>(lrs.size()));
}

}  // namespace

TEST(AdamW, MatchesTorchFp32) {
    // Same operation order as torch's single-tensor AdamW on the same CPU kernels: results agree
    // to fp32 rounding; 1e-6 absolute on O(1) values allows a few ulps of reordering.
    run_adamw_case(golden()["adamw_fp32"], at::kFloat, 1e-6, 1e-6);
}

TEST(AdamW, Bf16ParamsUpdateThroughFp32Master) {
    // The reference runs AdamW on fp32 copies and casts to bf16; our master copies are the same
    // fp32 values, so the bf16 parameters agree up to one bf16 rounding step of the O(1) values
    // (2^-8 relative => 8e-3 absolute at |p| <= 2) in the rare case the fp32 values straddle a
    // rounding boundary; the fp32 moments agree to 1e-6.
    run_adamw_case(golden()["adamw_bf16"], at::kBFloat16, 8e-3, 1e-6);
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
        // fp32 sums of squares: 1e-5 relative.
        EXPECT_NEAR(norm, c["norm"].get<double>(), 1e-5 * c["norm"].get<double>()) << name;
        for (size_t i = 0; i < ps.size(); ++i)
            EXPECT_LE(max_abs_diff(ps[i].grad(), tensor_of(c["clipped"][i], c["shapes"][i], at::kFloat)),
                      1e-6)
                << name;
    }
}

TEST(Schedule, WarmupThenCosineAndLinear) {
    cuset::ScheduleOptions s{"cosine", /*warmup_steps=*/2, /*total_steps=*/6, /*min_lr_ratio=*/0.1};
    // warmup: (step+1)/2
    EXPECT_DOUBLE_EQ(cuset::lr_multiplier(s, 0), 0.5);
    EXPECT_DOUBLE_EQ(cuset::lr_multiplier(s, 1), 1.0);
    // decay over steps 2..5, progress (step-2)/3: 0, 1/3, 2/3, 1
    EXPECT_DOUBLE_EQ(cuset::lr_multiplier(s, 2), 1.0);
    EXPECT_NEAR(cuset::lr_multiplier(s, 3), 0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI / 3)), 1e-15);  // 0.775
    EXPECT_NEAR(cuset::lr_multiplier(s, 4), 0.1 + 0.9 * 0.25, 1e-15);                            // 0.325
    EXPECT_NEAR(cuset::lr_multiplier(s, 5), 0.1, 1e-15);
    s.kind = "linear";
    EXPECT_NEAR(cuset::lr_multiplier(s, 3), 1.0 - 0.9 / 3, 1e-15);
    EXPECT_NEAR(cuset::lr_multiplier(s, 5), 0.1, 1e-15);
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
