// The training step in process: K optimizer steps of the demo model (data/tiny-coder, fp32) with
// `sft` through train_step, against transformers + torch.optim.AdamW doing the same steps on the
// same micro-batches (tests/golden/train_step.py): a regression anywhere in the step (forward,
// objective, backward, normalisation, clipping, AdamW, weight decay groups) fails here. Also the
// step's invariants that need no reference: a split of the same rows into other micro-batches
// gives the same step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <ATen/ATen.h>

#include "cuset/model/model.h"
#include "cuset/model/safetensors_torch.h"
#include "cuset/train/optim.h"
#include "cuset/train/train_step.h"
#include "tensor_check.h"

using cuset::test::max_abs_diff;

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

struct TrainedModel {
    cuset::Decoder model = nullptr;
    std::unique_ptr<cuset::AdamW> optim;
};

// The optimizer as the trainer builds it (decay on matrices, not norms), with the golden's settings.
TrainedModel make_run() {
    TrainedModel r;
    r.model = cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU));
    std::vector<cuset::OptimParam> ps = cuset::optim_params_of(r.model->trainable_parameters());
    cuset::AdamWOptions o;
    o.beta1 = 0.9;
    o.beta2 = 0.95;
    o.eps = 1e-3;  // as the reference (see the tolerance note below)
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

// fp32 on both sides (u = 2^-24); the two differ in summation order (chunked logits, fused
// backward, SDPA against eager attention). A loss is a mean of per-token NLLs lse - z_y
// (|l| ~ ln 4096 ~ 8): per side a logit's length-D dot product (D = 256: D u relative to
// |z| <~ 1) and the log-softmax ((ln V + log2 V) u) move a token's NLL by ~280 u, 2e-6 of the
// loss, so 2 sides 4e-6 (seen: 1e-7 relative). AdamW divides by sqrt(v) + eps, so an absolute
// gradient error dg (the ~50 u relative rounding of the gradient's terms, |g| <~ 0.1 after
// clipping at 1: dg <~ 3e-7) moves an update by up to (lr / eps) dg: with eps 1e-8 an element
// whose gradient is itself ~1e-8 turns its rounding into a sizeable share of its update (seen:
// 8e-5 after four steps), and with eps 1e-6 still into 5e-6. Both sides use eps 1e-3, which keeps
// every update smooth in the gradient: lr / eps = 1, four steps x 3e-7 ~ 1e-6; 1e-5 absolute on
// the weights. A regression in the step (a normalisation, a clipping or weight-decay group)
// moves a loss by 1e-3 relative or a weight by ~lr.
TEST(TrainStep, SftStepsEqualTransformersAndTorchAdamW) {
    std::map<std::string, at::Tensor> g = cuset::safetensors_load(golden_file(), c10::Device(c10::kCPU));
    TrainedModel run = make_run();
    cuset::Objective objective = sft();
    cuset::TrainStepOptions so;
    so.lr = 1e-3;
    so.grad_clip = 1.0;
    at::Tensor want_loss = g.at("loss");  // [K] fp64
    ASSERT_EQ(want_loss.numel(), kSteps);
    for (int s = 0; s < kSteps; ++s) {
        std::vector<cuset::MicroBatch> micro;
        for (int m = 0; m < kMicro; ++m) {
            std::string k = "s";  // "s<step>m<micro>" (built by appends: GCC 12's -Wrestrict misfires on "s" + ...)
            k += std::to_string(s);
            k += 'm';
            k += std::to_string(m);
            micro.push_back(micro_batch(g.at(k + ".input_ids"), g.at(k + ".attention_mask"), g.at(k + ".labels")));
        }
        so.step = s;
        cuset::TrainStepResult r = cuset::train_step(run.model, objective, *run.optim, cuset::Comm(), micro, so);
        ASSERT_TRUE(r.applied) << "step " << s;
        const double want = want_loss[s].item<double>();
        CUSET_EXPECT_NEAR(r.loss, want, 4e-6 * std::abs(want)) << "step " << s;
        EXPECT_GT(r.grad_norm, 0.0);
    }
    int64_t n_checked = 0;
    double worst = 0.0;
    for (const auto& [name, p] : run.model->trainable_parameters()) {
        auto it = g.find("w." + name);
        ASSERT_NE(it, g.end()) << name << " is missing from the reference";
        double err = max_abs_diff(p.detach(), it->second);
        CUSET_EXPECT_WITHIN(err, 1e-5) << name;
        worst = std::max(worst, err);
        ++n_checked;
    }
    std::printf("[train step vs transformers] %d steps, %lld weights: max abs weight error %.2e\n", kSteps,
                (long long)n_checked, worst);
    EXPECT_EQ(n_checked, static_cast<int64_t>(g.size()) - 1 - 3 * kSteps * kMicro);  // every weight compared
}

// Split invariance through the step the trainer calls: the same four rows as 4 micro-batches of
// 1, 2 of 2 or 1 of 4 give the same loss and the same updated weights, for every method (fp32:
// summation order only; the bounds of SftStepsEqualTransformersAndTorchAdamW for one step: losses
// 4e-6 relative, weights (lr / eps) dg = 3e-7 after one step of lr 1e-3, 2e-6 absolute).
namespace {

struct RowData {
    at::Tensor ids, labels;  // [T] int64
    int64_t len = 0;         // real tokens
    at::Tensor ref_prob;     // [T] fp32 a reference model's p(target) (rho1)
};

// Right-pads rows to the longest (pad 0, no target), as make_micro_batch does.
cuset::MicroBatch micro_batch_of(const std::vector<RowData>& rows) {
    int64_t t = 0;
    for (const RowData& r : rows) t = std::max<int64_t>(t, r.ids.size(0));
    const int64_t b = static_cast<int64_t>(rows.size());
    at::Tensor ids = at::zeros({b, t}, at::kLong), labels = at::full({b, t}, cuset::kIgnoreIndex, at::kLong);
    at::Tensor mask = at::zeros({b, t}, at::kLong);
    at::Tensor ref = at::full({b, t}, 0.5f, at::kFloat);
    for (int64_t i = 0; i < b; ++i) {
        const int64_t n = rows[i].ids.size(0);
        ids[i].narrow(0, 0, n).copy_(rows[i].ids);
        labels[i].narrow(0, 0, n).copy_(rows[i].labels);
        mask[i].narrow(0, 0, rows[i].len).fill_(1);
        if (rows[i].ref_prob.defined()) ref[i].narrow(0, 0, n).copy_(rows[i].ref_prob);
    }
    cuset::MicroBatch mb = micro_batch(ids, mask, labels);
    mb.reference_prob = ref;
    return mb;
}

}  // namespace

TEST(TrainStep, MicroBatchSplitDoesNotChangeTheStep) {
    std::map<std::string, at::Tensor> g = cuset::safetensors_load(golden_file(), c10::Device(c10::kCPU));
    std::vector<RowData> rows;
    at::manual_seed(3);
    for (const char* k : {"s0m0", "s0m1"}) {
        at::Tensor ids = g.at(std::string(k) + ".input_ids"), labels = g.at(std::string(k) + ".labels");
        at::Tensor mask = g.at(std::string(k) + ".attention_mask");
        for (int64_t r = 0; r < ids.size(0); ++r)
            rows.push_back({ids[r], labels[r], mask[r].sum().item<int64_t>(),
                            (at::rand({ids.size(1)}, at::kDouble) * 0.9 + 0.05).to(at::kFloat)});
    }
    ASSERT_EQ(rows.size(), 4u);
    std::vector<std::pair<std::string, cuset::ObjectiveOptions>> methods;
    for (cuset::Method m : {cuset::Method::kSft, cuset::Method::kCuset, cuset::Method::kDft, cuset::Method::kFocal,
                            cuset::Method::kEaft, cuset::Method::kAsft, cuset::Method::kRho1}) {
        cuset::ObjectiveOptions o;
        o.method = m;
        o.chunk_size = 64;
        o.window = 16;
        methods.push_back({cuset::method_name(m), o});
    }
    cuset::ObjectiveOptions bq = methods[1].second;
    bq.threshold_mode = cuset::ThresholdMode::kBatchQuantile;
    methods.push_back({"cuset batch_quantile", bq});
    // asft's frozen reference: the demo model with its norms scaled, so that KL > 0.
    cuset::Decoder reference = cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU));
    {
        at::NoGradGuard no_grad;
        for (auto& [name, p] : reference->trainable_parameters())
            if (name.find("norm") != std::string::npos) p.mul_(1.1);
    }
    cuset::TrainStepOptions so;
    so.lr = 1e-3;
    so.reference = &reference;
    for (const auto& [name, opts] : methods) {
        SCOPED_TRACE(name);
        cuset::Objective objective(opts);
        std::vector<double> losses;
        std::vector<std::vector<std::pair<std::string, at::Tensor>>> weights;
        for (int per : {1, 2, 4}) {
            std::vector<cuset::MicroBatch> micro;
            for (size_t i = 0; i < rows.size(); i += per)
                micro.push_back(micro_batch_of(std::vector<RowData>(rows.begin() + i, rows.begin() + i + per)));
            TrainedModel run = make_run();
            cuset::TrainStepResult r = cuset::train_step(run.model, objective, *run.optim, cuset::Comm(), micro, so);
            ASSERT_TRUE(r.applied) << per << " rows per micro-batch";
            if (opts.method == cuset::Method::kAsft) {
                EXPECT_GT(r.stats.kl_mean(), 0.0);
            }
            if (opts.method == cuset::Method::kRho1) {
                // ceil(0.6 n) of the step's n scored tokens are kept (ties aside): 0.6 up to the
                // granularity 1/n of a count, not a rounding bound (not measured).
                EXPECT_NEAR(r.stats.kept_fraction(), 0.6, 0.02);
            }
            losses.push_back(r.loss);
            weights.push_back(run.model->trainable_parameters());
        }
        for (size_t k = 1; k < losses.size(); ++k) {
            CUSET_EXPECT_NEAR(losses[k], losses[0], 4e-6 * std::abs(losses[0])) << "split " << k;
            for (size_t i = 0; i < weights[0].size(); ++i)
                CUSET_EXPECT_WITHIN(max_abs_diff(weights[k][i].second, weights[0][i].second), 2e-6)
                    << weights[0][i].first << ", split " << k;
        }
    }
}

// A non-finite loss skips the step: weights untouched, gradients cleared.
TEST(TrainStep, NonFiniteStepIsSkippedAndLeavesTheWeights) {
    std::map<std::string, at::Tensor> g = cuset::safetensors_load(golden_file(), c10::Device(c10::kCPU));
    TrainedModel run = make_run();
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
