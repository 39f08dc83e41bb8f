// rl/grpo_step: one GRPO optimizer step on the demo model (data/tiny-coder, fp32) from fixed
// completions and rewards. Invariants that need no reference (the loss and its gradient are
// checked against transformers + TRL in test_grpo.cpp): steps raise the log-probability of the
// rewarded completions and lower that of the others; groups whose rewards are all equal carry no
// signal and leave the weights bit for bit as they were; the micro-batch split does not change a
// dapo step; under LoRA the reference is the base itself, the adapters switched off.
#include <map>
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "cuset/rl/grpo_step.h"
#include "cuset/train/optim.h"
#include "tensor_check.h"
#include "test_util.h"

using namespace cuset;

namespace {

constexpr int64_t kG = 4, kPrompts = 2, kP = 6, kT = 5;

Decoder demo_model() {
    return model_load(std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder", at::kFloat, c10::Device(c10::kCPU));
}

std::unique_ptr<AdamW> adamw(Decoder& m, double eps = 1e-8) {
    AdamWOptions o;
    o.beta1 = 0.9;
    o.beta2 = 0.95;
    o.eps = eps;
    o.weight_decay = 0.0;  // a zero gradient is then exactly no update
    return std::make_unique<AdamW>(optim_params_of(m->trainable_parameters()), o);
}

// Two prompts (the second left-padded by 2), four completions each (two right-padded).
GrpoRollout rollout(const std::vector<float>& rewards) {
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(20261202);
    GrpoRollout r;
    at::Tensor prompts = at::randint(1, 4000, {kPrompts, kP}, gen, at::kLong);  // [2, P]
    at::Tensor pmask = at::ones({kPrompts, kP}, at::kLong);
    pmask[1].narrow(0, 0, 2).zero_();
    prompts = prompts * pmask;
    r.prompt_ids = prompts.repeat_interleave(kG, 0);  // [8, P]
    r.prompt_mask = pmask.repeat_interleave(kG, 0);
    r.completion_ids = at::randint(1, 4000, {kPrompts * kG, kT}, gen, at::kLong);  // [8, T]
    r.completion_mask = at::ones({kPrompts * kG, kT}, at::kLong);
    r.completion_mask[2].narrow(0, 3, 2).zero_();
    r.completion_mask[5].narrow(0, 1, 4).zero_();
    r.completion_ids = r.completion_ids * r.completion_mask;
    r.rewards = at::tensor(rewards);
    return r;
}

// Each completion's summed log-probability [8] under the model, no gradient.
at::Tensor sequence_logps(Decoder& m, const GrpoRollout& r, double temperature) {
    at::NoGradGuard no_grad;
    return completion_logps(m, r.prompt_ids, r.prompt_mask, r.completion_ids, r.completion_mask, temperature, 64).sum(1);
}

GrpoStepOptions step_options() {
    GrpoStepOptions o;
    o.num_generations = kG;
    o.temperature = 0.8;
    o.micro_batch = 3;  // 8 completions: micro-batches of 3, 3, 2 (groups span micro-batches)
    o.chunk_size = 64;
    o.lr = 2e-3;
    o.grad_clip = 1.0;
    return o;
}

}  // namespace

TEST(GrpoStep, RaisesTheRewardedCompletionsAndLowersTheOthers) {
    Decoder m = demo_model();
    auto opt = adamw(m);
    const std::vector<float> rewards = {1, 1, 0, 0, 0, 1, 0, 0};
    GrpoRollout r = rollout(rewards);
    GrpoStepOptions o = step_options();
    at::Tensor before = sequence_logps(m, r, o.temperature);  // [8]
    for (int s = 0; s < 4; ++s) {
        GrpoStepResult res = grpo_step(m, *opt, Comm(), r, o);
        ASSERT_TRUE(res.applied) << "step " << s;
        EXPECT_EQ(res.completions, 8);
        EXPECT_EQ(res.zero_std, 0);
        EXPECT_DOUBLE_EQ(res.reward_mean, 3.0 / 8.0);
        EXPECT_GT(res.grad_norm, 0.0);
    }
    at::Tensor delta = sequence_logps(m, r, o.temperature) - before;  // [8]
    for (int64_t i = 0; i < 8; ++i) {
        // 4 AdamW steps of lr 2e-3 move a 5-token completion's log-probability by O(0.1-1) nats;
        // 0.05 nats is far above fp32 noise (~1e-5) and far below what the steps do.
        if (rewards[static_cast<size_t>(i)] > 0)
            EXPECT_GT(delta[i].item<double>(), 0.05) << "rewarded completion " << i;
        else
            EXPECT_LT(delta[i].item<double>(), -0.05) << "unrewarded completion " << i;
    }
}

TEST(GrpoStep, GroupsWithoutSignalLeaveTheWeightsUnchanged) {
    Decoder m = demo_model();
    auto opt = adamw(m);
    std::map<std::string, at::Tensor> w0;
    for (const auto& [name, p] : m->trainable_parameters()) w0[name] = p.detach().clone();
    GrpoRollout r = rollout({1, 1, 1, 1, 0, 0, 0, 0});  // each group's rewards are equal: A = 0
    GrpoStepResult res = grpo_step(m, *opt, Comm(), r, step_options());
    EXPECT_EQ(res.zero_std, 8);
    EXPECT_EQ(res.grad_norm, 0.0);
    for (const auto& [name, p] : m->trainable_parameters()) EXPECT_TRUE(at::equal(p.detach(), w0.at(name))) << name;
}

// dapo divides the token sum by the generation batch's tokens: the same step for any split, up to
// fp32 summation order (gradients summed over 1 or 3 micro-batches, each a sum over the chunked LM
// head and the layers: ~8 u relative, |g| <= 1 after clipping, dg <= 5e-7). AdamW's first update
// is lr g / (|g| + eps): with eps 1e-8 an element whose gradient is ~1e-8 turns its rounding into
// its whole update (seen: 2e-5), so this test uses eps 1e-3 (as test_train_step.cpp does), where
// the update moves by at most (lr / eps) dg = 2 x 5e-7 = 1e-6; the new weight (|w| <= 2: the
// norms' weights are ~1) is rounded once more, 1 ulp = 2.4e-7 per side: bound 2e-6 absolute.
TEST(GrpoStep, TheMicroBatchSplitDoesNotChangeADapoStep) {
    GrpoRollout r = rollout({1, 0, 0.5, 0, 0.2, 1, 0, 0.7});
    std::map<std::string, at::Tensor> weights[2];
    for (int k = 0; k < 2; ++k) {
        Decoder m = demo_model();
        auto opt = adamw(m, 1e-3);
        GrpoStepOptions o = step_options();
        o.micro_batch = k == 0 ? 8 : 3;
        ASSERT_TRUE(grpo_step(m, *opt, Comm(), r, o).applied);
        for (const auto& [name, p] : m->trainable_parameters()) weights[k][name] = p.detach().clone();
    }
    for (const auto& [name, w] : weights[0])
        CUSET_EXPECT_WITHIN(cuset::test::max_abs_diff(w, weights[1].at(name)), 2e-6) << name;
}

TEST(GrpoStep, Refusals) {
    Decoder m = demo_model();
    auto opt = adamw(m);
    GrpoStepOptions o = step_options();
    o.num_generations = 3;  // 8 completions are not whole groups of 3
    EXPECT_THROW(grpo_step(m, *opt, Comm(), rollout({1, 0, 0, 0, 0, 0, 0, 0}), o), UsageError);
    o = step_options();
    o.loss.beta = 0.04;  // no reference model
    EXPECT_THROW(grpo_step(m, *opt, Comm(), rollout({1, 0, 0, 0, 0, 0, 0, 0}), o), UsageError);
}

namespace {

// The demo model with a rank-4 adapter on every projection whose B is drawn (not PEFT's zero
// init), so that the adapted policy differs from its base.
Decoder demo_model_with_adapter() {
    Decoder m = demo_model();
    LoraOptions lo;
    lo.r = 4;
    lo.alpha = 8;
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(7);
    lora_attach(m, lo, gen);
    at::NoGradGuard no_grad;
    for (auto& [name, a] : lora_adapters(m)) a->B.copy_(at::randn(a->B.sizes(), gen) * 0.05);
    return m;
}

}  // namespace

TEST(GrpoStep, UnderLoraTheReferenceIsTheBaseWithTheAdaptersOff) {
    Decoder base = demo_model();
    Decoder m = demo_model_with_adapter();
    const GrpoRollout r = rollout({1, 0, 0, 0, 0, 1, 0, 0});
    const at::Tensor lp_base = sequence_logps(base, r, 0.8);  // [8]
    const at::Tensor lp_adapted = sequence_logps(m, r, 0.8);
    {
        LoraDisabled off(m);
        // Off, every projection takes the branch the base takes: the same kernels on the same
        // weights, so the same bits (no tolerance).
        EXPECT_TRUE(at::equal(sequence_logps(m, r, 0.8), lp_base));
    }
    // The adapter moves the policy (sequence log-probabilities of 5 tokens differ by far more
    // than fp32 rounding), and the guard switched it back on.
    EXPECT_GT((lp_adapted - lp_base).abs().max().item<double>(), 1e-3);
    EXPECT_TRUE(at::equal(sequence_logps(m, r, 0.8), lp_adapted));

    // One step with the KL term: the base as reference through the switch, and a twin model
    // with the base loaded a second time as its reference, give the same step.
    Decoder twin = demo_model_with_adapter();
    GrpoStepOptions o = step_options();
    o.loss.beta = 0.04;
    o.reference_is_base = true;
    auto opt = adamw(m);
    const GrpoStepResult a = grpo_step(m, *opt, Comm(), r, o);
    o.reference_is_base = false;
    o.reference = &base;
    auto opt_twin = adamw(twin);
    const GrpoStepResult b = grpo_step(twin, *opt_twin, Comm(), r, o);
    ASSERT_TRUE(a.applied);
    ASSERT_TRUE(b.applied);
    EXPECT_GT(a.stats.kl, 0.0);  // the adapted policy is not its reference
    // Identical computations on identical inputs in the same order: equal to the bit.
    EXPECT_EQ(a.stats.kl, b.stats.kl);
    EXPECT_EQ(a.loss, b.loss);
    EXPECT_EQ(a.grad_norm, b.grad_norm);
    for (auto& [name, ad] : lora_adapters(m)) EXPECT_TRUE(ad->enabled) << name;

    // A reference taken as the base needs adapters.
    Decoder plain = demo_model();
    auto opt_plain = adamw(plain);
    o.reference = nullptr;
    o.reference_is_base = true;
    EXPECT_THROW(grpo_step(plain, *opt_plain, Comm(), r, o), UsageError);
}

// A generation batch used again (num_iterations > 1) brings the sampling policy's
// log-probabilities: given the current policy's own, the step is the step without them up to
// rounding (the ratio is exp(0) in both, but the old log-probabilities here come from one batch
// of 8 without gradient, the step's from micro-batches of 3, 3, 2: fp32 log-probabilities of
// magnitude ~10 then differ by a few ulp, ~1e-6, so the ratio by ~1e-6 and the loss, a sum of
// |A| <= 2 times ratios over 8 completions' token means, by at most ~2e-5; the gradient norm
// (~9) moves relatively as much); given a policy the ratio moved far from, the clipped
// fractions are no longer zero.
TEST(GrpoStep, OldLogProbabilitiesSetTheImportanceRatio) {
    const GrpoRollout r0 = rollout({1, 0, 0, 0, 0, 1, 0, 0});
    GrpoStepOptions o = step_options();
    Decoder a = demo_model(), b = demo_model(), c = demo_model();
    GrpoRollout r1 = r0;
    {
        at::NoGradGuard no_grad;
        r1.old_logps = completion_logps(b, r0.prompt_ids, r0.prompt_mask, r0.completion_ids, r0.completion_mask,
                                        o.temperature, o.chunk_size);  // [8, T]
    }
    auto opt_a = adamw(a), opt_b = adamw(b), opt_c = adamw(c);
    const GrpoStepResult ra = grpo_step(a, *opt_a, Comm(), r0, o);
    const GrpoStepResult rb = grpo_step(b, *opt_b, Comm(), r1, o);
    ASSERT_TRUE(ra.applied);
    ASSERT_TRUE(rb.applied);
    CUSET_EXPECT_NEAR(ra.loss, rb.loss, 2e-5);
    CUSET_EXPECT_NEAR(ra.grad_norm, rb.grad_norm, 2e-5 * ra.grad_norm);
    EXPECT_EQ(rb.stats.clipped_region, 0.0);

    GrpoRollout r2 = r1;
    r2.old_logps = r1.old_logps - 1.0;  // ratio e on every token: above 1 + epsilon = 1.2
    const GrpoStepResult rc = grpo_step(c, *opt_c, Comm(), r2, o);
    ASSERT_TRUE(rc.applied);
    // Every token of a positive-advantage completion is clipped above (A > 0, ratio > 1.2).
    EXPECT_GT(rc.stats.clipped_high, 0.0);
    EXPECT_NE(rc.loss, rb.loss);

    GrpoRollout bad = r1;
    bad.old_logps = r1.old_logps.narrow(1, 0, kT - 1);
    EXPECT_THROW(grpo_step(c, *opt_c, Comm(), bad, o), UsageError);
}
