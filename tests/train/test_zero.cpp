// ZeRO stages 1-3 (train/zero.h) in process: 2 and 4 Gloo ranks in threads of this process (each
// with its own process group over a loopback TCPStore) run K optimizer steps of the demo model
// (data/tiny-coder, fp32) through the real train_step, and must reach the losses and weights of
// stage 0 in one process on the same global batch. Also: ranks with different numbers of
// micro-batches (stage 3 runs passes without data to keep the collectives in step), the state
// layout written by one world size read back by another, the resident bytes per rank against
// the arithmetic of zero_plan(), and the memory plan built on it (train/memory_plan.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

#include "cuset/core/config.h"
#include "cuset/core/error.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "cuset/train/comm.h"
#include "cuset/train/distributed.h"
#include "cuset/train/memory_plan.h"
#include "cuset/train/optim.h"
#include "cuset/train/train_step.h"
#include "cuset/train/zero.h"
#include "gloo_ranks.h"
#include "tensor_check.h"

namespace {

constexpr int kSteps = 3;
constexpr int64_t kRows = 8, kLen = 40;

std::string demo_model() { return std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder"; }


// The global batch of step s: kRows right-padded rows of random tokens (lengths 12..kLen), the
// first third of each row a prompt (no target), a random quarter of targets CUDA-sensitive.
struct Rows {
    at::Tensor ids, mask, labels, sensitive;  // [kRows, kLen]
};

Rows global_batch(int step, int64_t vocab) {
    at::Generator g = at::detail::createCPUGenerator(1000 + step);
    Rows r;
    r.ids = at::randint(3, vocab, {kRows, kLen}, g, at::kLong);
    at::Tensor len = at::randint(12, kLen + 1, {kRows}, g, at::kLong);  // [kRows]
    at::Tensor t = at::arange(kLen).unsqueeze(0);                       // [1, kLen]
    r.mask = t < len.unsqueeze(1);
    r.ids = at::where(r.mask, r.ids, at::zeros_like(r.ids));
    at::Tensor next = at::cat({r.ids.narrow(1, 1, kLen - 1), at::zeros({kRows, 1}, at::kLong)}, 1);
    at::Tensor valid = (t >= kLen / 3).logical_and(t + 1 < len.unsqueeze(1));
    r.labels = at::where(valid, next, at::full({}, cuset::kIgnoreIndex, at::kLong));
    r.sensitive = (at::rand({kRows, kLen}, g) < 0.25).logical_and(valid);
    return r;
}

cuset::MicroBatch micro_batch(const Rows& r, int64_t lo, int64_t hi) {
    cuset::MicroBatch mb;
    const int64_t b = hi - lo;
    mb.input_ids = r.ids.narrow(0, lo, b).contiguous();
    mb.attention_mask = r.mask.narrow(0, lo, b).contiguous();
    mb.labels = r.labels.narrow(0, lo, b).contiguous();
    mb.sensitive = r.sensitive.narrow(0, lo, b).contiguous();
    mb.sample_index = at::where(mb.labels != cuset::kIgnoreIndex, at::arange(b).unsqueeze(1).expand({b, kLen}),
                                at::full({}, -1, at::kLong));  // [B, T]
    for (int64_t i = lo; i < hi; ++i) mb.sample_ids.push_back("row" + std::to_string(i));
    mb.n_tokens = mb.attention_mask.sum().item<int64_t>();
    mb.n_targets = (mb.labels != cuset::kIgnoreIndex).sum().item<int64_t>();
    return mb;
}

// Rank r's rows of the global batch ([r * kRows / W, (r + 1) * kRows / W), as the trainer's
// step_rows_for_rank), in micro-batches of `mbs` rows.
std::vector<cuset::MicroBatch> rank_micro(const Rows& rows, int64_t rank, int64_t world, int64_t mbs) {
    std::vector<cuset::MicroBatch> out;
    const int64_t lo = rank * kRows / world, hi = (rank + 1) * kRows / world;
    for (int64_t b = lo; b < hi; b += mbs) out.push_back(micro_batch(rows, b, std::min(hi, b + mbs)));
    return out;
}

cuset::Objective objective(const std::string& method) {
    cuset::ObjectiveOptions o;
    o.method = method == "sft" ? cuset::Method::kSft : cuset::Method::kCuset;
    if (method == "cuset-batch") o.threshold_mode = cuset::ThresholdMode::kBatchQuantile;  // two passes
    o.window = 8;
    o.chunk_size = 64;
    return cuset::Objective(o);
}

std::vector<cuset::OptimParam> params_of(cuset::Decoder& model) {
    return cuset::optim_params_of(model->trainable_parameters());
}

cuset::AdamWOptions adam() {
    cuset::AdamWOptions o;
    o.beta2 = 0.95;
    o.eps = 1e-3;  // see the tolerance note below
    o.weight_decay = 0.1;
    return o;
}

// The trainer's optimizer (cuset::make_optimizer): AdamW over replicas at stage 0, ZeroAdamW otherwise.
std::unique_ptr<cuset::Optimizer> make_optimizer(cuset::Decoder& model, const cuset::Comm& comm, int64_t stage,
                                                 int64_t bucket_bytes, bool offload = false) {
    cuset::ZeroOptions zo;
    zo.stage = stage;
    zo.bucket_bytes = bucket_bytes;
    zo.offload = offload;
    return cuset::make_optimizer(params_of(model), adam(), zo, comm, model);
}

struct RunResult {
    std::vector<double> loss, grad_norm;
    std::vector<std::pair<std::string, at::Tensor>> weights;  // after the last step
    std::vector<std::pair<std::string, at::Tensor>> state;    // the optimizer's state_tensors()
    cuset::ShardBytes resident;                               // between steps (after the last)
};

// K steps on one rank of `comm` at `stage` (0: AdamW over replicas).
RunResult train(const cuset::Comm& comm, int64_t stage, const std::string& method, int64_t mbs, int steps = kSteps,
          const std::function<void(cuset::Optimizer&)>& before = nullptr) {
    at::set_num_threads(1);
    cuset::Decoder model = cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU));
    // Stage 3 with recomputation, and without it on 3 ranks (weights saved for backward are
    // freed after the forward and refilled before the backward).
    model->set_activation_checkpointing(stage == 3 && comm.world != 3);
    // 64 KiB buckets: several, some splitting a parameter between ranks; stage 2 on 4 ranks through
    // the offload update path (here the device is the CPU too).
    std::unique_ptr<cuset::Optimizer> opt = make_optimizer(model, comm, stage, 64 << 10, stage == 2 && comm.world == 4);
    if (before) before(*opt);
    const cuset::Objective obj = objective(method);
    RunResult run;
    for (int s = 0; s < steps; ++s) {
        cuset::TrainStepOptions so;
        so.lr = 2e-3;
        so.grad_clip = 0.5;  // the tiny model's norm is ~1-3: clipping is active
        so.step = s;
        const Rows rows = global_batch(s, model->config().vocab_size);
        cuset::TrainStepResult r = cuset::train_step(model, obj, *opt, comm, rank_micro(rows, comm.rank, comm.world, mbs), so);
        EXPECT_TRUE(r.applied) << "step " << s << " stage " << stage;
        run.loss.push_back(r.loss);
        run.grad_norm.push_back(r.grad_norm);
    }
    if (auto* z = dynamic_cast<cuset::ZeroAdamW*>(opt.get())) {
        run.resident = z->resident();
        z->gather_all();
    }
    for (const auto& [name, p] : model->trainable_parameters()) run.weights.emplace_back(name, p.detach().clone());
    for (const auto& [name, t] : opt->state_tensors()) run.state.emplace_back(name, t.clone());
    if (auto* z = dynamic_cast<cuset::ZeroAdamW*>(opt.get())) z->release_all();
    return run;
}

// body(comm) on `world` ranks at once (threads; a collective waits up to 120 s).
void on_ranks(int world, int port, const std::function<void(const cuset::Comm&)>& body) {
    cuset::test::on_gloo_ranks(world, port, 120, body);
}

using cuset::test::max_abs_diff;

// The reference: stage 0, one process, the whole global batch in micro-batches of 2.
const RunResult& reference(const std::string& method) {
    static std::map<std::string, RunResult> cache;
    auto it = cache.find(method);
    if (it == cache.end()) it = cache.emplace(method, train(cuset::Comm{}, 0, method, 2)).first;
    return it->second;
}

// fp32 throughout (u = 2^-24). Stage 0 and ZeRO differ in the order of fp32 sums (the micro-
// batches, the gradient reduction over ranks and buckets) and in the global norm. Bounds:
//  - loss (a mean of per-token NLLs lse - z_y, |l| ~ ln 4096 ~ 8): per run a logit's length-D
//    dot product (D = 256: D u relative to |z| <~ 1) and the log-softmax ((ln V + log2 V) u, as in
//    test_distributed's kl_mean_atol) move a token's NLL by ~280 u, 2e-6 of the loss; two runs,
//    and the step sums' own log2(N) u: kLossRtol 5e-6 relative (seen: 1e-7).
//  - norm: stage 0 takes it, as torch.nn.utils.clip_grad_norm_, from fp32 per-tensor norms: each
//    vector lane accumulates ~n/8 squares in sequence, whose roundings add like a random walk,
//    ~sqrt(n) u relative (6e-5 over the 1M-element embedding, the worst case n u being 6%); ZeRO
//    sums the shards' squares in fp64. Ten times the random walk of the largest tensor:
//    kNormRtol 10 sqrt(n) u (6e-4; seen: 5.5e-5).
//  - weights: with clipping active (norm ~5, clip 0.5) the norm's error moves the clip
//    coefficient; AdamW is scale invariant but for eps: the update lr m / (sqrt(v) + eps) moves by
//    at most lr dc / 4 for a relative change dc of the gradient (dc <= kNormRtol: 3 x 3e-7 over
//    three steps), and by at most (lr / eps) dg for an absolute gradient error dg, the ~50 u
//    relative rounding of the gradient's terms (|g| <~ 0.1 per element after clipping): eps 1e-3
//    (not 1e-6, let alone 1e-8, where gradients ~0 become updates of up to +-lr that the rounding
//    decides) keeps lr / eps = 2: 3 steps x 2 x 3e-7 = 2e-6; together 1e-5 absolute. A ZeRO slip
//    (a shard or moment at the wrong offset, a bucket summed twice) moves a weight by ~lr = 2e-3.
//  - loss from step 1 on: the runs' weights differ too (by at most kWeightTol, checked below) and
//    the loss moves with them, to first order |dl| <= ||g||_2 ||dw||_2 <= grad_norm sqrt(N) kWeightTol
//    over the N trainable elements (Cauchy-Schwarz). A loose bound (seen: 1.3e-5 absolute at a
//    loss of ~11, against kLossRtol's 5.5e-5 alone): from step 1 on the weights' own check carries
//    the precision.
constexpr double kLossRtol = 5e-6;
constexpr double kWeightTol = 1e-5;
struct TrainableSizes {
    double largest = 0, total = 0;  // elements of the largest trainable tensor, of all of them
};
TrainableSizes trainable_sizes() {
    TrainableSizes t;
    cuset::Decoder m = cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU));
    for (const auto& [name, p] : m->trainable_parameters()) {
        t.largest = std::max(t.largest, static_cast<double>(p.numel()));
        t.total += static_cast<double>(p.numel());
    }
    return t;
}
void expect_matches_reference(const RunResult& got, const RunResult& ref, const std::string& what) {
    ASSERT_EQ(got.loss.size(), ref.loss.size());
    static const TrainableSizes kSizes = trainable_sizes();
    static const double kNormRtol = 10 * std::sqrt(kSizes.largest) * std::ldexp(1.0, -24);
    for (size_t s = 0; s < got.loss.size(); ++s) {
        const double drift = s == 0 ? 0.0 : ref.grad_norm[s] * std::sqrt(kSizes.total) * kWeightTol;
        CUSET_EXPECT_NEAR(got.loss[s], ref.loss[s], kLossRtol * std::abs(ref.loss[s]) + drift)
            << what << " loss at step " << s;
        CUSET_EXPECT_NEAR(got.grad_norm[s], ref.grad_norm[s], kNormRtol * std::abs(ref.grad_norm[s]))
            << what << " norm at step " << s;
    }
    ASSERT_EQ(got.weights.size(), ref.weights.size());
    double worst = 0;
    for (size_t i = 0; i < got.weights.size(); ++i) {
        EXPECT_EQ(got.weights[i].first, ref.weights[i].first);
        worst = std::max(worst, max_abs_diff(got.weights[i].second, ref.weights[i].second));
    }
    CUSET_EXPECT_WITHIN(worst, kWeightTol) << what << ": largest weight difference to stage 0";
}

void expect_stage_matches(int64_t stage, int world, const std::string& method, int64_t mbs, int port) {
    const RunResult& ref = reference(method);
    std::vector<RunResult> runs(world);
    on_ranks(world, port, [&](const cuset::Comm& c) { runs[c.rank] = train(c, stage, method, mbs); });
    for (int r = 0; r < world; ++r)
        expect_matches_reference(runs[r], ref, "stage " + std::to_string(stage) + ", rank " + std::to_string(r) + " of " +
                                                   std::to_string(world) + ", " + method);
}

}  // namespace

TEST(Zero, Stage1MatchesStage0) {
    expect_stage_matches(1, 2, "sft", 2, cuset::test::free_port(0));
    expect_stage_matches(1, 4, "cuset", 1, cuset::test::free_port(10));
}

TEST(Zero, Stage2MatchesStage0) {
    expect_stage_matches(2, 2, "cuset", 2, cuset::test::free_port(20));
    expect_stage_matches(2, 4, "sft", 2, cuset::test::free_port(30));
}

TEST(Zero, Stage3MatchesStage0) {
    expect_stage_matches(3, 2, "sft", 2, cuset::test::free_port(40));
    expect_stage_matches(3, 4, "cuset", 1, cuset::test::free_port(50));
}

TEST(Zero, Stage3WithUnevenMicroBatchesAndTwoPasses) {
    // 3 ranks over 8 rows: 2, 3 and 3 rows in micro-batches of 2 -> 1, 2 and 2 passes; the first
    // rank runs one pass without data in each of the step's loops (the two-pass threshold
    // method's confidence pass and the training pass).
    expect_stage_matches(3, 3, "cuset-batch", 2, cuset::test::free_port(60));
}

TEST(Zero, OneProcessIsStage0) {
    // World size 1: the shard is everything, and the step is stage 0's.
    for (int64_t stage : {1, 2, 3}) expect_matches_reference(train(cuset::Comm{}, stage, "sft", 2), reference("sft"), "world 1");
}

TEST(Zero, StateWrittenOnFourRanksResumesOnTwoAndOnOne) {
    // Two steps at stage 2 on 4 ranks; every rank's state_tensors() (what its shard file holds)
    // and the weights (what the checkpoint's model folder holds). Loaded by 2 ranks at stage 1
    // (another bucket layout) and by one process at stage 0, one more step equals the third step
    // of the same 4-rank run uninterrupted.
    std::vector<RunResult> two_steps(4), three_steps(4);
    std::vector<std::pair<std::string, at::Tensor>> shards;
    std::mutex mu;
    on_ranks(4, cuset::test::free_port(70), [&](const cuset::Comm& c) {
        two_steps[c.rank] = train(c, 2, "cuset", 1, 2);
        std::lock_guard<std::mutex> lock(mu);
        for (auto& kv : two_steps[c.rank].state) shards.push_back(kv);
    });
    on_ranks(4, cuset::test::free_port(80), [&](const cuset::Comm& c) { three_steps[c.rank] = train(c, 2, "cuset", 1, 3); });
    const cuset::StateReader read = cuset::state_reader_of(shards);
    auto continued = [&](const cuset::Comm& c, int64_t stage) {
        at::set_num_threads(1);
        cuset::Decoder model = cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU));
        {
            at::NoGradGuard no_grad;
            size_t i = 0;
            for (auto& [name, p] : model->trainable_parameters()) {
                ASSERT_EQ(name, two_steps[0].weights[i].first);
                p.copy_(two_steps[0].weights[i++].second);
            }
        }
        std::unique_ptr<cuset::Optimizer> opt = make_optimizer(model, c, stage, 40 << 10);  // another layout than the writer's
        opt->load_state(read, 2);  // fp32: no masters in the files, the weights are their own
        cuset::TrainStepOptions so;
        so.lr = 2e-3;
        so.grad_clip = 0.5;
        so.step = 2;
        const Rows rows = global_batch(2, model->config().vocab_size);
        const int64_t mbs = c.world == 1 ? 2 : 1;
        cuset::TrainStepResult r = cuset::train_step(model, objective("cuset"), *opt, c, rank_micro(rows, c.rank, c.world, mbs), so);
        EXPECT_TRUE(r.applied);
        CUSET_EXPECT_NEAR(r.loss, three_steps[0].loss[2], kLossRtol * std::abs(three_steps[0].loss[2]));  // as above
        double worst = 0;
        size_t i = 0;
        for (const auto& [name, p] : model->trainable_parameters())
            worst = std::max(worst, max_abs_diff(p.detach(), three_steps[0].weights[i++].second));
        CUSET_EXPECT_WITHIN(worst, 1e-5) << "resumed at stage " << stage << " on " << c.world << " rank(s)";  // as above
    };
    on_ranks(2, cuset::test::free_port(90), [&](const cuset::Comm& c) { continued(c, 1); });
    continued(cuset::Comm{}, 0);
}

TEST(Zero, ResidentBytesShrinkAsThePlanSays) {
    // Between steps, measured from the storages of weights, gradients, masters and moments, on
    // each of 4 ranks, against zero_plan(); the only difference allowed is the padding of each
    // bucket to a multiple of the world size (under 4 elements of 4 bytes a bucket and state).
    std::vector<std::vector<cuset::ShardBytes>> got(4, std::vector<cuset::ShardBytes>(4));
    double n_params = 0, n_whole = 0;
    {
        cuset::Decoder m = cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU));
        for (const auto& [name, p] : m->trainable_parameters()) {
            n_params += static_cast<double>(p.numel());
            if (name.rfind("model.layers.", 0) != 0) n_whole += static_cast<double>(p.numel());
        }
    }
    for (int64_t stage : {1, 2, 3})
        on_ranks(4, cuset::test::free_port(100 + static_cast<int>(stage)), [&](const cuset::Comm& c) {
            got[stage][c.rank] = train(c, stage, "sft", 2, 1).resident;
        });
    std::printf("resident training state per rank, tiny-coder (%.2fM parameters, fp32), 4 ranks:\n", n_params / 1e6);
    std::printf("  stage  weights MB  gradients MB  masters MB  moments MB  total MB  (plan)\n");
    const cuset::ShardBytes s0 = cuset::zero_plan(n_params, n_whole, 4, 4, 0, false);
    std::printf("  0      %10.2f  %12.2f  %10.2f  %10.2f  %8.2f  (plan; AdamW replicas)\n", s0.weights / 1e6,
                s0.gradients / 1e6, s0.masters / 1e6, s0.moments / 1e6, s0.device_total() / 1e6);
    for (int64_t stage : {1, 2, 3}) {
        const cuset::ShardBytes plan = cuset::zero_plan(n_params, n_whole, 4, 4, stage, false);
        for (int r = 0; r < 4; ++r) {
            const cuset::ShardBytes& s = got[stage][r];
            // Byte counts, not rounding: a structural slack (padding), not a numeric tolerance, so
            // these are not measured.
            const double slack = 64.0 * 4 * 4;  // up to 3 padding elements x 4 B, per bucket, per kind
            EXPECT_NEAR(s.weights, plan.weights, slack * 8) << "stage " << stage << " rank " << r;
            EXPECT_NEAR(s.gradients, plan.gradients, slack * 8) << "stage " << stage << " rank " << r;
            EXPECT_NEAR(s.masters, plan.masters, slack * 8) << "stage " << stage << " rank " << r;
            EXPECT_NEAR(s.moments, plan.moments, slack * 16) << "stage " << stage << " rank " << r;
        }
        const cuset::ShardBytes& s = got[stage][0];
        std::printf("  %lld      %10.2f  %12.2f  %10.2f  %10.2f  %8.2f  (%.2f)\n", (long long)stage, s.weights / 1e6,
                    s.gradients / 1e6, s.masters / 1e6, s.moments / 1e6, s.device_total() / 1e6,
                    plan.device_total() / 1e6);
    }
    // Each stage holds less than the one before.
    EXPECT_LT(got[2][0].device_total(), got[1][0].device_total());
    EXPECT_LT(got[3][0].device_total(), got[2][0].device_total());
    EXPECT_LT(got[1][0].device_total(), s0.device_total());
}

// The memory plan the trainer checks and the dry run prints (train/memory_plan.h): a full
// fine-tune's is zero_plan's (plus the asft reference model), its counts from config.json are the
// loaded model's, LoRA's is the frozen base plus 16 bytes an adapter element, and a plan too large
// for the device names the least sharding that fits.
TEST(MemoryPlan, FullFineTuneLoraReferenceAndTheFix) {
    cuset::MemoryCounts n;
    n.trainable = 1e9;
    n.whole = 1e8;
    cuset::MemorySetup s;
    s.dtype = at::kBFloat16;
    s.world = 8;
    const cuset::MemoryPlan p = cuset::memory_plan(n, s);
    EXPECT_DOUBLE_EQ(p.resident, cuset::zero_plan(1e9, 1e8, 2, 8, 0, false).device_total());
    EXPECT_DOUBLE_EQ(p.resident, 16e9);
    s.reference = true;
    EXPECT_DOUBLE_EQ(cuset::memory_plan(n, s).resident, 16e9 + 2e9);
    s.reference = false;
    EXPECT_NO_THROW(cuset::memory_plan_check(p, n, s, 20e9, "cuda:0"));
    EXPECT_NO_THROW(cuset::memory_plan_check(p, n, s, -1, "cpu"));
    try {
        cuset::memory_plan_check(p, n, s, 10e9, "cuda:0");
        ADD_FAILURE() << "no error";
    } catch (const cuset::RuntimeFailure& e) {
        // Stage 1 on 8 ranks: weights 2 + gradients 2 + 0.5 + masters 0.5 + moments 1 = 6 GB.
        EXPECT_NE(std::string(e.what()).find("needs 16.0 GB per rank but cuda:0 has 10.0 GB; set "
                                             "distributed.zero_stage=1 (6.0 GB per rank on 8 rank(s))"),
                  std::string::npos)
            << e.what();
    }
    const std::string text = cuset::memory_plan_text(p, s, 20e9, "cuda:0");
    EXPECT_NE(text.find("resident training state per rank: 16.00 GB"), std::string::npos) << text;
    EXPECT_NE(text.find("of 20.0 GB on cuda:0"), std::string::npos) << text;

    cuset::Decoder m = cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU));
    double trainable = 0, whole = 0;
    for (const auto& [name, t] : m->trainable_parameters()) {
        trainable += static_cast<double>(t.numel());
        if (name.rfind("model.layers.", 0) != 0) whole += static_cast<double>(t.numel());
    }
    const cuset::MemoryCounts c = cuset::memory_counts_of(m->config(), nullptr);
    EXPECT_EQ(c.trainable, trainable);
    EXPECT_EQ(c.whole, whole);
    EXPECT_EQ(c.frozen, 0);
    EXPECT_DOUBLE_EQ(cuset::memory_plan(c, cuset::MemorySetup{}).resident,
                     cuset::training_memory(m->config(), at::kFloat, nullptr).total());

    cuset::LoraOptions lo;
    const cuset::MemoryCounts l = cuset::memory_counts_of(m->config(), &lo);
    EXPECT_EQ(l.frozen, trainable);
    EXPECT_EQ(l.trainable, static_cast<double>(cuset::lora_adapter_numel(m->config(), lo)));
    cuset::MemorySetup ls;
    ls.lora = true;
    ls.reference = true;
    const cuset::MemoryPlan lp = cuset::memory_plan(l, ls);
    EXPECT_DOUBLE_EQ(lp.resident, l.frozen * 4 + l.trainable * 16 + l.frozen * 4);
    ls.reference = false;
    EXPECT_DOUBLE_EQ(cuset::memory_plan(l, ls).resident, cuset::training_memory(m->config(), at::kFloat, &lo).total());
}
