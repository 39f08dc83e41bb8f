// rl/grpo: the policy-gradient loss, its gradient and its clip and KL statistics equal TRL's
// GRPOTrainer._compute_loss on fixed tensors (tests/golden/grpo.py: every loss_type, with and
// without the KL term, token- and sequence-level ratios, asymmetric and two-sided clipping,
// accumulation, dapo's generation-batch normaliser); the advantages against hand-worked groups.
#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/model/safetensors_torch.h"
#include "cuset/rl/grpo.h"
#include "tensor_check.h"
#include "test_util.h"

using namespace cuset;

namespace {

const nlohmann::json& golden() {
    static const nlohmann::json j = nlohmann::json::parse(
        std::ifstream(std::string(CUSET_TEST_WORK) + "/golden/grpo/grpo.json"));
    return j;
}

at::Tensor tensor_of(const nlohmann::json& v, int64_t b, int64_t t) {
    std::vector<float> x = v.get<std::vector<float>>();
    return at::tensor(x).view({b, t}).clone();
}

constexpr double kU = 5.9604644775390625e-08;  // fp32 unit roundoff, 2^-24

}  // namespace

// Bounds. Both sides compute in fp32 from the same fp32 inputs, in other orders. The mask keeps
// n = 14 tokens; each per-token term is a weight times |A| <= 1.9 plus beta times a k3 term (< 1):
// the weight is a ratio exp(d) with |d| < 1.5 (< 4.5), cispo's capped ratio (<= 1.2) times a
// log-probability (|logp| < 3.05: < 3.7), or sapo's gate sigmoid(.) 4 / tau (< 4 / 0.5 = 8), so
// |x| < 8 x 1.9 + 0.04 < 15.3 and sum |x| < 214. Reordering an fp32 sum moves it by at most
// n u sum|x| = 1.8e-4, and the per-term exp, sigmoid and products by a few u each: the loss bound
// is kLossTol = 1.9e-4 (a worst case; every loss divides by a count >= 1, which only shrinks it).
// The gradient of a token is one product of a few factors divided by a count, no sum: 16 u
// relative, plus 1e-6 absolute for the terms that are exactly 0 on one side (a clipped token).
// The clip fractions are ratios of small integer counts (exact); the KL is a masked mean of 14
// k3 terms < 1: 14 u x 14 / 14 < 1e-6, bound 4e-5.
constexpr double kLossTol = 1.9e-4;

TEST(GrpoLoss, EqualsTrlForEveryLossType) {
    const nlohmann::json& g = golden();
    const int64_t B = g["B"], T = g["T"];
    const at::Tensor mask = tensor_of(g["mask"], B, T);
    const at::Tensor logps0 = tensor_of(g["logps"], B, T);
    const at::Tensor old = tensor_of(g["old"], B, T);
    const at::Tensor ref = tensor_of(g["ref"], B, T);
    const at::Tensor adv = at::tensor(g["adv"].get<std::vector<float>>());
    ASSERT_EQ(g["cases"].size(), 26u);
    ASSERT_EQ(mask.sum().item<double>(), 14) << "the bounds' premises";
    ASSERT_LT(((logps0 - old) * mask).abs().max().item<double>(), 1.5) << "the bounds' premises";
    ASSERT_LE(adv.abs().max().item<double>(), 1.9) << "the bounds' premises";
    ASSERT_LT((logps0 * mask).abs().max().item<double>(), 3.05) << "the bounds' premises";
    for (const nlohmann::json& c : g["cases"]) {
        const std::string name = c["loss_type"].get<std::string>() + " beta " + std::to_string(c["beta"].get<double>()) +
                                 " " + c["importance_sampling_level"].get<std::string>() +
                                 (c["delta"].is_null() ? "" : " delta") + " accum " + std::to_string(c["grad_accum"].get<int>());
        SCOPED_TRACE(name);
        GrpoOptions o;
        o.loss_type = grpo_loss_type_from(c["loss_type"], "loss_type");
        o.beta = c["beta"];
        o.epsilon = c["epsilon"];
        o.epsilon_high = c["epsilon_high"].get<double>();
        if (!c["delta"].is_null()) o.delta = c["delta"].get<double>();
        o.importance_sampling = importance_sampling_from(c["importance_sampling_level"], "importance_sampling_level");
        o.max_completion_length = c["max_completion_length"];
        o.sapo_temperature_pos = c.value("sapo_temperature_pos", 1.0);
        o.sapo_temperature_neg = c.value("sapo_temperature_neg", 1.05);
        GrpoNormalizer n;
        n.grad_accum = c["grad_accum"];
        n.steps_per_generation = c["steps_per_generation"];
        n.num_items_in_batch = c["num_items_in_batch"];
        GrpoBatch b;
        b.logps = logps0.clone().requires_grad_(true);
        b.old_logps = old;
        b.ref_logps = ref;
        b.advantages = adv;
        b.mask = mask;
        GrpoStats s;
        at::Tensor loss = grpo_loss(b, o, n, &s);
        loss.backward();
        CUSET_EXPECT_NEAR(loss.item<double>(), c["loss"].get<double>(), kLossTol);
        const at::Tensor want = tensor_of(c["grad"], B, T);
        CUSET_EXPECT_ALLCLOSE(b.logps.grad(), want, 16 * kU, 1e-6, "d loss / d logps");
        EXPECT_EQ(b.logps.grad().masked_select(mask == 0).abs().max().item<float>(), 0.f) << "padding gets no gradient";
        CUSET_EXPECT_NEAR(s.clipped_low / s.clip_units, c["clip_low"].get<double>(), 4e-5);
        CUSET_EXPECT_NEAR(s.clipped_high / s.clip_units, c["clip_high"].get<double>(), 4e-5);
        CUSET_EXPECT_NEAR(s.clipped_region / s.clip_units, c["clip_region"].get<double>(), 4e-5);
        if (o.beta != 0) {
            CUSET_EXPECT_NEAR(s.kl / s.tokens, c["kl"].get<double>(), 4e-5);
        }
        if (o.loss_type == GrpoLossType::kSapo)
            EXPECT_EQ(s.clipped_low + s.clipped_high + s.clipped_region, 0) << "sapo's gate clips nothing";
        else
            EXPECT_GT(s.clipped_low + s.clipped_high, 0) << "the case exercises clipping";
    }
}

// The model case: data/tiny-coder (fp32) scores fixed completions after left-padded prompts at
// temperature 0.7, and TRL's loss (dapo, beta 0.04) on those log-probabilities is backpropagated
// into the model; cuset's completion_logps + grpo_loss + backward give the same log-probabilities,
// loss and gradient of every parameter as transformers + TRL.
// Bounds (fp32, u = 2^-24; the sides differ in summation order: chunked LM head, SDPA against
// eager attention, other GEMM blockings). A logit z / tau (|z / tau| <= 15.5 on these inputs)
// is the end of 4 layers of reductions of ~1024 terms (attention and projections over D = 256,
// the MLP over 768) and the LM head's 256: with rounding errors that add up like a random walk,
// sqrt(4 x 1024 + 256) u = 66 u relative, 6e-5 absolute per side; log_softmax = z_y - lse(z)
// at most doubles it, and two sides: 2.4e-4, bound 2.5e-4 per log-probability (the worst case,
// n u, is 4e-3; a wrong temperature or position moves them by > 1e-2). The loss is a mean over
// the 12 scored tokens of ratio (< 4.5) x |A| (< 1.25) terms whose ratios carry that relative
// error: 4.5 x 1.25 x 2.5e-4 = 1.4e-3, bound 1.5e-3 (beta k3 adds 0.04 of that). A gradient
// element sums the 12 tokens' paths through length-D and length-V (4096) reductions of the
// backward: V u = 2.4e-4 relative per reduction, a few chained: 1e-3 of the parameter's largest
// gradient element.
TEST(GrpoLoss, ModelGradientsEqualTransformersAndTrl) {
    std::map<std::string, at::Tensor> g =
        cuset::safetensors_load(std::string(CUSET_TEST_WORK) + "/golden/grpo/grpo_model.safetensors", c10::Device(c10::kCPU));
    cuset::Decoder model =
        cuset::model_load(std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder", at::kFloat, c10::Device(c10::kCPU));
    const double temperature = g.at("temperature").item<double>();
    ASSERT_EQ(temperature, 0.7);
    at::Tensor logps = completion_logps(model, g.at("prompt_ids"), g.at("prompt_mask"), g.at("completion_ids"),
                                        g.at("completion_mask"), temperature, /*chunk_size=*/4);  // [3, 6]
    const at::Tensor cmask = g.at("completion_mask").to(at::kFloat);
    ASSERT_EQ(cmask.sum().item<double>(), 12) << "the bounds' premise";
    CUSET_EXPECT_ALLCLOSE(logps.detach() * cmask, g.at("logps") * cmask, 0.0, 2.5e-4, "completion log-probabilities");
    EXPECT_EQ(logps.detach().masked_select(cmask == 0).abs().max().item<float>(), 0.f) << "0 at padding";
    GrpoOptions o;  // the golden's: dapo, beta 0.04, epsilon 0.2 / 0.28
    o.beta = 0.04;
    o.epsilon_high = 0.28;
    o.max_completion_length = 6;
    GrpoNormalizer n;
    n.num_items_in_batch = 12;
    GrpoBatch b;
    b.logps = logps;
    b.old_logps = g.at("old");
    b.ref_logps = g.at("ref");
    b.advantages = g.at("adv");
    b.mask = cmask;
    ASSERT_LE(b.advantages.abs().max().item<double>(), 1.25) << "the bounds' premise";
    at::Tensor loss = grpo_loss(b, o, n, nullptr);
    loss.backward();
    CUSET_EXPECT_NEAR(loss.item<double>(), g.at("loss").item<double>(), 1.5e-3);
    int64_t checked = 0;
    for (const auto& [name, p] : model->trainable_parameters()) {
        auto it = g.find("g." + name);
        ASSERT_NE(it, g.end()) << name << " has no reference gradient";
        ASSERT_TRUE(p.grad().defined()) << name;
        const double scale = it->second.abs().max().item<double>();
        CUSET_EXPECT_WITHIN(cuset::test::max_abs_diff(p.grad(), it->second), 1e-3 * scale + 1e-12) << name;
        ++checked;
    }
    int64_t want = 0;
    for (const auto& [k, v] : g) want += k.rfind("g.", 0) == 0;
    EXPECT_EQ(checked, want) << "every parameter compared";
}

// Hand-worked groups of G = 4 (unbiased std, n - 1):
//   [1, 0, 0, 1]: mean 0.5, std sqrt(4 * 0.25 / 3) = 0.57735; A = +-0.5 / (0.57735 + 1e-4).
//   [2, 2, 2, 2]: std 0, A = 0 (a group without signal; counted as zero_std).
//   [3, NaN, 1, 2]: the unscorable completion is left out: mean 2, std 1; A = (1, 0, -1, 0) / (1 + 1e-4).
TEST(GrpoAdvantages, HandWorkedGroups) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    at::Tensor r = at::tensor(std::vector<float>{1, 0, 0, 1, 2, 2, 2, 2, 3, nan, 1, 2});
    GrpoAdvantages a = grpo_advantages(r, 4, RewardScaling::kGroup);
    const double s1 = std::sqrt(1.0 / 3.0) + 1e-4, s3 = 1.0 + 1e-4;
    const std::vector<double> want = {0.5 / s1, -0.5 / s1, -0.5 / s1, 0.5 / s1, 0, 0, 0, 0, 1 / s3, 0, -1 / s3, 0};
    for (size_t i = 0; i < want.size(); ++i)  // a few fp32 operations on numbers <= 3: 8 u relative
        CUSET_EXPECT_NEAR(a.advantages[i].item<double>(), want[i], 8 * kU * 3) << i;
    EXPECT_EQ(a.zero_std, 4);
    // Not scaled: A = r - mean.
    GrpoAdvantages none = grpo_advantages(r, 4, RewardScaling::kNone);
    const std::vector<double> plain = {0.5, -0.5, -0.5, 0.5, 0, 0, 0, 0, 1, 0, -1, 0};
    for (size_t i = 0; i < plain.size(); ++i) CUSET_EXPECT_NEAR(none.advantages[i].item<double>(), plain[i], 8 * kU * 3) << i;
    // Batch scaling: group means, the batch's std over the 11 scored rewards. Their mean is
    // 16/11, their squares sum to 32, so the squared deviations sum to 32 - 256/11 = 8.72727 and
    // std = sqrt(8.72727 / 10) = 0.93420.
    GrpoAdvantages batch = grpo_advantages(r, 4, RewardScaling::kBatch);
    const double sb = std::sqrt((32.0 - 256.0 / 11.0) / 10.0) + 1e-4;
    for (size_t i = 0; i < plain.size(); ++i)
        CUSET_EXPECT_NEAR(batch.advantages[i].item<double>(), plain[i] / sb, 8 * kU * 3) << i;
    EXPECT_EQ(batch.zero_std, 0);
    EXPECT_THROW(grpo_advantages(r, 5, RewardScaling::kGroup), UsageError);
    EXPECT_THROW(grpo_advantages(r, 1, RewardScaling::kGroup), UsageError);
}

TEST(GrpoLoss, NamesAndRefusals) {
    EXPECT_EQ(grpo_loss_type_from("dr_grpo", "k"), GrpoLossType::kDrGrpo);
    try {
        grpo_loss_type_from("ppo", "objective.grpo.loss_type");
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(), "key 'objective.grpo.loss_type' must be grpo, bnpo, dr_grpo, dapo, cispo, sapo or luspo, got 'ppo'");
    }
    GrpoBatch b;
    b.logps = at::zeros({1, 2});
    b.advantages = at::zeros({1});
    b.mask = at::ones({1, 2});
    GrpoOptions o;
    o.beta = 0.1;  // a KL term needs the reference's log-probabilities
    EXPECT_THROW(grpo_loss(b, o, {}, nullptr), UsageError);
}
