// The training step in process: K optimizer steps of the demo model (data/tiny-coder, fp32) with
// `sft` through train_step, against transformers + torch.optim.AdamW doing the same steps on the
// same micro-batches (tests/golden/train_step.py): a regression anywhere in the step (forward,
// objective, backward, normalisation, clipping, AdamW, weight decay groups) fails here. Also the
// step's invariants that need no reference: a split of the same rows into other micro-batches
// gives the same step.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include <ATen/ATen.h>

#include "cuset/model/model.h"
#include "cuset/model/safetensors_torch.h"
#include "cuset/train/optim.h"
#include "cuset/train/train_step.h"

namespace {

constexpr int kSteps = 4, kMicro = 2;

std::string golden_file() { return std::string(CUSET_TEST_WORK) + "/golden/train_step/train_step.safetensors"; }
std::string demo_model() { return std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder"; }

// A right-padded micro-batch as make_micro_batch builds it (one sample per row, no mask:
// MicroBatch::causal_mask() is undefined without packing).
cuset::MicroBatch micro_batch(const at::Tensor& ids, const at::Tensor& mask, const at::Tensor& labels) {
    cuset::MicroBatch mb;
    mb.input_ids = ids;        // [B, T] int64
    mb.attention_mask = mask.to(at::kBool);  // [B, T]
    mb.labels = labels;        // [B, T] int64
    mb.sensitive = at::zeros(ids.sizes(), at::kBool);
    const int64_t b = ids.size(0), t = ids.size(1);
    mb.sample_index = at::where(labels != cuset::kIgnoreIndex, at::arange(b).unsqueeze(1).expand({b, t}),
                                at::full({}, -1, at::kLong));  // [B, T]
    for (int64_t r = 0; r < b; ++r) mb.sample_ids.push_back("row" + std::to_string(r));
    mb.n_tokens = mask.sum().item<int64_t>();
    mb.n_targets = (labels != cuset::kIgnoreIndex).sum().item<int64_t>();
    return mb;
}

struct Run {
    cuset::Decoder model = nullptr;
    std::unique_ptr<cuset::AdamW> optim;
};

// The optimizer as the trainer builds it (decay on matrices, not norms), with the golden's settings.
Run make_run() {
    Run r;
    r.model = cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU));
    std::vector<cuset::OptimParam> ps;
    for (auto& [name, p] : r.model->trainable_parameters()) {
        p.set_requires_grad(true);
        ps.push_back({name, p, cuset::decays_by_default(name, p)});
    }
    cuset::AdamWOptions o;
    o.beta1 = 0.9;
    o.beta2 = 0.95;
    o.eps = 1e-8;
    o.weight_decay = 0.1;
    r.optim = std::make_unique<cuset::AdamW>(std::move(ps), o);
    return r;
}

cuset::Objective sft() {
    cuset::ObjectiveOptions o;
    o.method = cuset::Method::kSft;
    o.chunk_size = 64;  // several chunks per micro-batch: the chunked path, not full logits
    return cuset::Objective(o);
}

}  // namespace

// fp32 on both sides; the two differ in summation order (chunked logits, fused backward), which
// moves a loss by ~1e-7 relative and, through AdamW's m / sqrt(v), a weight by at most a few
// 1e-7 after four steps of lr 1e-3: 2e-6 relative on losses, 1e-5 absolute on weights.
TEST(TrainStep, SftStepsEqualTransformersAndTorchAdamW) {
    std::map<std::string, at::Tensor> g = cuset::safetensors_load(golden_file(), c10::Device(c10::kCPU));
    Run run = make_run();
    cuset::Objective objective = sft();
    cuset::TrainStepOptions so;
    so.lr = 1e-3;
    so.grad_clip = 1.0;
    at::Tensor want_loss = g.at("loss");  // [K] fp64
    ASSERT_EQ(want_loss.numel(), kSteps);
    for (int s = 0; s < kSteps; ++s) {
        std::vector<cuset::MicroBatch> micro;
        for (int m = 0; m < kMicro; ++m) {
            std::string k = "s" + std::to_string(s) + "m" + std::to_string(m);
            micro.push_back(micro_batch(g.at(k + ".input_ids"), g.at(k + ".attention_mask"), g.at(k + ".labels")));
        }
        so.step = s;
        cuset::TrainStepResult r = cuset::train_step(run.model, objective, *run.optim, cuset::Comm(), micro, so);
        ASSERT_TRUE(r.applied) << "step " << s;
        const double want = want_loss[s].item<double>();
        EXPECT_NEAR(r.loss, want, 2e-6 * std::abs(want)) << "step " << s;
        EXPECT_GT(r.grad_norm, 0.0);
    }
    int64_t n_checked = 0;
    for (const auto& [name, p] : run.model->trainable_parameters()) {
        auto it = g.find("w." + name);
        ASSERT_NE(it, g.end()) << name << " is missing from the reference";
        double err = (p.detach() - it->second).abs().max().item<double>();
        EXPECT_LE(err, 1e-5) << name;
        ++n_checked;
    }
    EXPECT_EQ(n_checked, static_cast<int64_t>(g.size()) - 1 - 3 * kSteps * kMicro);  // every weight compared
}

// Split invariance through the step the trainer calls: the same rows as 1 micro-batch or as 2
// give the same loss and the same updated weights (fp32: summation order only, 1e-6).
TEST(TrainStep, MicroBatchSplitDoesNotChangeTheStep) {
    std::map<std::string, at::Tensor> g = cuset::safetensors_load(golden_file(), c10::Device(c10::kCPU));
    const at::Tensor ids = g.at("s0m0.input_ids"), mask = g.at("s0m0.attention_mask"), labels = g.at("s0m0.labels");
    cuset::ObjectiveOptions oo;  // cuset: per-sample weights, sample-quantile thresholds
    oo.method = cuset::Method::kCuset;
    oo.chunk_size = 64;
    cuset::Objective objective(oo);
    cuset::TrainStepOptions so;
    so.lr = 1e-3;
    Run whole = make_run(), split = make_run();
    cuset::TrainStepResult a =
        cuset::train_step(whole.model, objective, *whole.optim, cuset::Comm(), {micro_batch(ids, mask, labels)}, so);
    std::vector<cuset::MicroBatch> parts;
    for (int64_t r = 0; r < ids.size(0); ++r)
        parts.push_back(micro_batch(ids.narrow(0, r, 1), mask.narrow(0, r, 1), labels.narrow(0, r, 1)));
    cuset::TrainStepResult b = cuset::train_step(split.model, objective, *split.optim, cuset::Comm(), parts, so);
    ASSERT_TRUE(a.applied && b.applied);
    EXPECT_NEAR(a.loss, b.loss, 1e-6 * std::abs(a.loss));
    EXPECT_EQ(a.targets, b.targets);
    auto pa = whole.model->trainable_parameters(), pb = split.model->trainable_parameters();
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t i = 0; i < pa.size(); ++i)
        EXPECT_LE((pa[i].second - pb[i].second).abs().max().item<double>(), 1e-6) << pa[i].first;
}

// A non-finite loss skips the step: weights untouched, gradients cleared.
TEST(TrainStep, NonFiniteStepIsSkippedAndLeavesTheWeights) {
    std::map<std::string, at::Tensor> g = cuset::safetensors_load(golden_file(), c10::Device(c10::kCPU));
    Run run = make_run();
    at::Tensor before = run.model->embed_tokens.detach().clone();
    {
        at::NoGradGuard no_grad;
        run.model->norm->weight.fill_(std::numeric_limits<float>::quiet_NaN());
    }
    cuset::Objective objective = sft();
    cuset::TrainStepOptions so;
    so.lr = 1e-3;
    cuset::TrainStepResult r = cuset::train_step(
        run.model, objective, *run.optim, cuset::Comm(),
        {micro_batch(g.at("s0m0.input_ids"), g.at("s0m0.attention_mask"), g.at("s0m0.labels"))}, so);
    EXPECT_TRUE(r.non_finite);
    EXPECT_FALSE(r.applied);
    EXPECT_TRUE(at::equal(before, run.model->embed_tokens.detach()));
    for (const auto& p : run.optim->params())
        EXPECT_TRUE(!p.param.grad().defined() || p.param.grad().abs().sum().item<double>() == 0.0) << p.name;
}
