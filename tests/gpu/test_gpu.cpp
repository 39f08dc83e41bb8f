// The GPU path (CTest label `gpu`): the decoder's forward/backward, the chunked objective, the
// training step, SIGTERM + resume, `score` and `generate` on CUDA against the CPU; a one-rank NCCL
// process group; the start-up refusal of a model whose training state cannot fit the GPU.
// Every test skips with a message where CUDA is not available (CI, the development machines), so
// the suite stays green there; bench/gpu-check.sh builds and runs them on a GPU machine.
//
// CUSET_GPU_TESTS_ON_CPU=1 runs the same tests with the CPU as the "device" (CPU against CPU,
// Gloo instead of NCCL; the memory refusal only checks its model folder): a check of the tests'
// own logic on a machine without a GPU, not a GPU result.
//
// Everything runs on the demo model data/tiny-coder (Qwen2: GQA, q/k/v bias, tied embeddings) or
// on random models built here, so no golden fixture (no transformers) is needed.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include "cuset/core/config.h"
#include "cuset/data/score_file.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"
#include "cuset/judge/toolchain.h"
#include "cuset/model/device.h"
#include "cuset/model/model.h"
#include "cuset/model/model_config.h"
#include "cuset/train/distributed.h"
#include "cuset/train/objective.h"
#include "cuset/train/optim.h"
#include "cuset/train/train_step.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

bool on_cpu_mode() {
    const char* e = std::getenv("CUSET_GPU_TESTS_ON_CPU");
    return e != nullptr && std::string(e) == "1";
}

// The device the tests put the work on: cuda:0, or the CPU in the logic-check mode.
c10::Device dut() { return on_cpu_mode() ? c10::Device(c10::kCPU) : c10::Device(c10::kCUDA, 0); }
std::string dut_spec() { return on_cpu_mode() ? "cpu" : "cuda"; }

#define REQUIRE_GPU()                                                                                      \
    do {                                                                                                   \
        if (!on_cpu_mode() && !torch::cuda::is_available())                                                \
            GTEST_SKIP() << "CUDA is not available (no GPU, or a CPU-only LibTorch): GPU test skipped; "   \
                            "bench/gpu-check.sh runs it on a GPU machine";                                \
    } while (0)

std::string demo_model() { return std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder"; }

// ||a - b|| / ||b|| in fp64 (Frobenius norms over every element), both moved to the CPU.
double rel_err(const at::Tensor& a, const at::Tensor& b) {
    at::Tensor x = a.detach().to(at::kCPU, at::kDouble), y = b.detach().to(at::kCPU, at::kDouble);
    const double den = y.norm().item<double>();
    return (x - y).norm().item<double>() / (den > 0 ? den : 1.0);
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
    return (a.detach().to(at::kCPU, at::kDouble) - b.detach().to(at::kCPU, at::kDouble)).abs().max().item<double>();
}

// A copy of `src` (its name table) in `dtype` on `device`.
cuset::Decoder clone_to(const cuset::Decoder& src, c10::ScalarType dtype, c10::Device device) {
    cuset::Decoder d(src->config(), at::TensorOptions().dtype(dtype).device(device));
    auto from = cuset::hf_named_parameters(src), to = cuset::hf_named_parameters(d);
    EXPECT_EQ(from.size(), to.size());
    at::NoGradGuard no_grad;
    for (size_t i = 0; i < from.size() && i < to.size(); ++i) {
        EXPECT_EQ(from[i].first, to[i].first);
        to[i].second.copy_(from[i].second);
    }
    return d;
}

// A random decoder (fp32, CPU) from a config.json text.
cuset::Decoder random_model(const json& j, uint64_t seed) {
    cuset::ModelConfig cfg = cuset::model_config_from_json(j, "test_gpu");
    cuset::Decoder d(cfg, at::TensorOptions().dtype(at::kFloat));
    cuset::decoder_init_weights(d, seed);
    return d;
}

json qwen3_config() {  // q/k norm, head_dim 32 != 64/4, untied head
    return json{{"architectures", {"Qwen3ForCausalLM"}}, {"model_type", "qwen3"}, {"vocab_size", 160},
                {"hidden_size", 64}, {"intermediate_size", 96}, {"num_hidden_layers", 2},
                {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 32},
                {"rms_norm_eps", 1e-6}, {"max_position_embeddings", 128}, {"rope_theta", 1000000.0},
                {"tie_word_embeddings", false}, {"hidden_act", "silu"}, {"torch_dtype", "float32"}};
}

json llama_config() {  // MHA with q/k/v/o bias, llama3 RoPE
    return json{{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"vocab_size", 160},
                {"hidden_size", 64}, {"intermediate_size", 96}, {"num_hidden_layers", 2},
                {"num_attention_heads", 4}, {"num_key_value_heads", 4}, {"rms_norm_eps", 1e-5},
                {"attention_bias", true}, {"max_position_embeddings", 128}, {"rope_theta", 10000.0},
                {"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                                  {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 16}}},
                {"tie_word_embeddings", false}, {"hidden_act", "silu"}, {"torch_dtype", "float32"}};
}

// The inputs of one forward pass, on the CPU: right-padded rows, or packed rows (segments).
struct Inputs {
    std::string name;
    at::Tensor ids, mask, pos, seg;  // [B, T]; pos/seg undefined unless packed
    at::Tensor real;                 // [B, T] bool: positions whose outputs are compared
};

std::vector<Inputs> make_inputs(int64_t vocab) {
    at::manual_seed(11);
    std::vector<Inputs> out;
    {
        Inputs p;
        p.name = "padded";
        const int64_t B = 3, T = 40;
        p.ids = at::randint(3, vocab, {B, T}, at::kLong);
        p.mask = at::ones({B, T}, at::kLong);
        p.mask[1].narrow(0, 29, 11).zero_();
        p.mask[2].narrow(0, 17, 23).zero_();
        p.real = p.mask.to(at::kBool);
        out.push_back(p);
    }
    {
        Inputs p;
        p.name = "packed";
        const int64_t B = 2, T = 36;
        p.ids = at::randint(3, vocab, {B, T}, at::kLong);
        p.seg = at::zeros({B, T}, at::kLong);
        p.pos = at::zeros({B, T}, at::kLong);
        p.mask = at::ones({B, T}, at::kLong);
        const std::vector<std::vector<int64_t>> lens = {{12, 15, 9}, {20, 10}};  // row 1: 6 pads at the end
        for (int64_t b = 0; b < B; ++b) {
            int64_t t = 0, s = 0;
            for (int64_t n : lens[b]) {
                p.seg[b].narrow(0, t, n).fill_(s++);
                p.pos[b].narrow(0, t, n).copy_(at::arange(n, at::kLong));
                t += n;
            }
            if (t < T) {
                p.mask[b].narrow(0, t, T - t).zero_();
                p.seg[b].narrow(0, t, T - t).fill_(s);
            }
        }
        p.real = p.mask.to(at::kBool);
        out.push_back(p);
    }
    return out;
}

struct ForwardResult {
    at::Tensor logits;                                  // [n_real, V] fp32 on the CPU
    std::vector<std::pair<std::string, at::Tensor>> grads;  // d sum(logits * w) / d param, fp32 CPU
};

// Forward + backward of L = sum over real positions of logits * w (w fixed random weights, so
// that every logit's gradient path is exercised, as tests/golden/model.py does).
ForwardResult forward_backward(cuset::Decoder& m, const Inputs& in, const at::Tensor& w) {
    const c10::Device dev = m->embed_tokens.device();
    for (auto& [name, p] : cuset::hf_named_parameters(m)) {
        p.set_requires_grad(true);
        p.mutable_grad() = at::Tensor();
    }
    at::Tensor h = m->forward(in.ids.to(dev), in.mask.to(dev), in.pos.defined() ? in.pos.to(dev) : at::Tensor(),
                              in.seg.defined() ? in.seg.to(dev) : at::Tensor());
    at::Tensor logits = m->logits(h).to(at::kFloat);  // [B, T, V]
    at::Tensor real = in.real.to(dev);
    at::Tensor sel = logits.index({real});  // [n_real, V]
    (sel * w.to(dev).index({real})).sum().backward();
    ForwardResult r;
    r.logits = sel.detach().to(at::kCPU);
    for (auto& [name, p] : cuset::hf_named_parameters(m))
        r.grads.push_back({name, p.grad().defined() ? p.grad().detach().to(at::kCPU, at::kFloat)
                                                    : at::zeros(p.sizes(), at::kFloat)});
    return r;
}

struct Case {
    std::string name;
    cuset::Decoder cpu = nullptr;  // fp32 on the CPU: the reference
};

std::vector<Case> model_cases() {
    std::vector<Case> cs;
    cs.push_back({"tiny-coder (qwen2)", cuset::model_load(demo_model(), at::kFloat, c10::Device(c10::kCPU))});
    cs.push_back({"qwen3 random", random_model(qwen3_config(), 1)});
    cs.push_back({"llama random", random_model(llama_config(), 2)});
    return cs;
}

// Compares the device model in `dtype` with the CPU fp32 reference on every input.
// logits_tol / grad_tol bound the relative (Frobenius) error of the logits and of each parameter's
// gradient, checked (and measured) at the caller's sites; the worst values are printed.
void compare_with_cpu(c10::ScalarType dtype, const cuset::test::Site& logits_site, double logits_tol,
                      const cuset::test::Site& grad_site, double grad_tol) {
    for (Case& c : model_cases()) {
        SCOPED_TRACE(c.name);
        cuset::Decoder dev = clone_to(c.cpu, dtype, dut());
        const auto& mc = c.cpu->config();
        std::printf("[%s %s] attention kernel on %s: %s (causal), %s (masked)\n", c.name.c_str(),
                    cuset::dtype_name(dtype).c_str(), dut().str().c_str(),
                    cuset::sdpa_backend_for(dut(), dtype, mc.n_head, mc.n_head_kv, mc.head_dim, 40, false).c_str(),
                    cuset::sdpa_backend_for(dut(), dtype, mc.n_head, mc.n_head_kv, mc.head_dim, 40, true).c_str());
        for (const Inputs& in : make_inputs(mc.vocab_size)) {
            SCOPED_TRACE(in.name);
            at::manual_seed(5);
            at::Tensor w = at::randn({in.ids.size(0), in.ids.size(1), mc.vocab_size}, at::kFloat);
            ForwardResult ref = forward_backward(c.cpu, in, w);
            ForwardResult got = forward_backward(dev, in, w);
            const double le = rel_err(got.logits, ref.logits);
            CUSET_EXPECT_WITHIN_AT(logits_site, le, logits_tol) << "logits";
            ASSERT_TRUE(at::isfinite(got.logits).all().item<bool>());
            double worst = 0.0;
            std::string worst_name;
            ASSERT_EQ(got.grads.size(), ref.grads.size());
            for (size_t i = 0; i < ref.grads.size(); ++i) {
                const double ge = rel_err(got.grads[i].second, ref.grads[i].second);
                CUSET_EXPECT_WITHIN_AT(grad_site, ge, grad_tol) << ref.grads[i].first;
                if (ge > worst) worst = ge, worst_name = ref.grads[i].first;
            }
            std::printf("[%s %s %s] relative error vs CPU fp32: logits %.2e, worst gradient %.2e (%s)\n",
                        c.name.c_str(), cuset::dtype_name(dtype).c_str(), in.name.c_str(), le, worst,
                        worst_name.c_str());
        }
    }
}

}  // namespace

// fp32 on both sides (TF32 off, LibTorch's default, which the trainer keeps): only the kernels
// differ (cuBLAS vs the CPU's GEMM, the memory-efficient attention vs the CPU's), i.e. the
// summation order, ~1e-7 relative per operation. 2 layers of O(10) operations each: 1e-5 on the
// logits and 1e-4 on every gradient (the backward adds the softmax and norm derivatives) leave a
// factor ~10 of room while catching any real error (a wrong mask or position is O(1)).
TEST(GpuModel, ForwardBackwardFp32MatchesCpu) {
    REQUIRE_GPU();
    ASSERT_FALSE(at::globalContext().allowTF32CuBLAS()) << "TF32 matmuls are on: fp32 is not fp32";
    compare_with_cpu(at::kFloat, CUSET_HERE, 1e-5,  // logits
                     CUSET_HERE, 1e-4);             // each gradient
}

// bf16 on the device (the same weights rounded to bf16) against the fp32 CPU reference: bf16 keeps
// 8 significant bits (relative rounding 2^-9 = 2e-3 per stored value), and activations are
// rounded after every operation, so the errors compound over the layers: a bf16 forward of these
// models is ~1e-2 relative from fp32 (measured with the CPU's own bf16 kernels: logits 4-8e-3,
// gradients up to ~3e-2). Bounds: 3e-2 on the logits, 1e-1 on each gradient: a wrong kernel
// (mask, RoPE, GQA broadcast) is O(1) and still fails.
TEST(GpuModel, ForwardBackwardBf16MatchesCpuFp32) {
    REQUIRE_GPU();
    compare_with_cpu(at::kBFloat16, CUSET_HERE, 3e-2,  // logits
                     CUSET_HERE, 1e-1);                // each gradient
}

// The chunked lm_head + loss on the device against the full-logits reference (chunk_size 0) on the
// device and on the CPU.
TEST(GpuObjective, ChunkedNllMatchesFullLogits) {
    REQUIRE_GPU();
    at::manual_seed(3);
    const int64_t N = 300, D = 256, V = 4096;
    at::Tensor h32 = at::randn({N, D}, at::kFloat), w32 = at::randn({V, D}, at::kFloat) * 0.05;  // CPU fp32
    at::Tensor labels = at::randint(0, V, {N}, at::kLong);
    labels.index_put_({at::rand({N}) < 0.2}, cuset::kIgnoreIndex);
    struct Out {
        at::Tensor nll, gh, gw;
    };
    auto run = [&](c10::ScalarType dt, c10::Device dev, int64_t chunk) {
        at::Tensor h = h32.to(dev, dt).detach().clone().set_requires_grad(true);  // fresh leaves
        at::Tensor w = w32.to(dev, dt).detach().clone().set_requires_grad(true);
        at::Tensor l = cuset::token_nll(h, w, labels.to(dev), chunk);  // [N] fp32
        at::manual_seed(4);
        at::Tensor g = at::rand({N}, at::kFloat).to(dev);  // a weighted sum, as the objective makes
        (l * g).sum().backward();
        return Out{l.detach().cpu(), h.grad().cpu().to(at::kFloat), w.grad().cpu().to(at::kFloat)};
    };
    const c10::Device cpu(c10::kCPU);
    // fp32: the chunked and the full path differ only in summation order (per-chunk logsumexp,
    // the fused backward): 1e-6 relative on the NLL values (O(10) each), 1e-5 on the gradients.
    Out ref = run(at::kFloat, cpu, 0);
    for (int64_t chunk : {64, 1024}) {
        SCOPED_TRACE("fp32 chunk " + std::to_string(chunk));
        Out got = run(at::kFloat, dut(), chunk);
        Out full = run(at::kFloat, dut(), 0);
        CUSET_EXPECT_WITHIN(rel_err(got.nll, full.nll), 1e-6);
        CUSET_EXPECT_WITHIN(rel_err(got.gh, full.gh), 1e-5);
        CUSET_EXPECT_WITHIN(rel_err(got.gw, full.gw), 1e-5);
        CUSET_EXPECT_WITHIN(rel_err(got.nll, ref.nll), 1e-6) << "against the CPU";
        CUSET_EXPECT_WITHIN(rel_err(got.gh, ref.gh), 1e-5) << "against the CPU";
        CUSET_EXPECT_WITHIN(rel_err(got.gw, ref.gw), 1e-5) << "against the CPU";
        EXPECT_TRUE(at::equal(got.nll.index({labels == cuset::kIgnoreIndex}),
                              at::zeros({(labels == cuset::kIgnoreIndex).sum().item<int64_t>()})));
    }
    // bf16 inputs: both paths compute the logits from the same bf16 operands in fp32 (on CUDA the
    // mm accumulates in fp32), so the NLL values agree to fp32 summation order (1e-5); the
    // gradients are returned in bf16, one rounding of 2^-9 relative each: 1e-2.
    {
        SCOPED_TRACE("bf16 chunk 64");
        Out got = run(at::kBFloat16, dut(), 64);
        Out full = run(at::kBFloat16, dut(), 0);
        CUSET_EXPECT_WITHIN(rel_err(got.nll, full.nll), 1e-5);
        CUSET_EXPECT_WITHIN(rel_err(got.gh, full.gh), 1e-2);
        CUSET_EXPECT_WITHIN(rel_err(got.gw, full.gw), 1e-2);
        // Against fp32 of the bf16-rounded inputs on the CPU: on CUDA the logits accumulate in
        // fp32 (no rounding of the logits to bf16), so the values are fp32-close (1e-5); the CPU
        // rounds its bf16 logits (chunk_logits), where 2^-9 of |z| ~ 5 gives 1e-2.
        at::Tensor hb = h32.to(at::kBFloat16).to(at::kFloat), wb = w32.to(at::kBFloat16).to(at::kFloat);
        at::Tensor lref = cuset::token_nll(hb, wb, labels, 0);
        CUSET_EXPECT_WITHIN(rel_err(got.nll, lref), dut().is_cuda() ? 1e-5 : 1e-2);
    }
    // The whole objective (cuset method: confidence mask, sensitivity, region weights) chunked vs
    // full on the device: same numerator (1e-6 relative), the same mask decisions.
    {
        cuset::MicroBatchTargets t;
        at::Tensor lab = labels.reshape({3, 100});
        t.labels = lab.to(dut());
        t.sensitive = (at::rand({3, 100}) < 0.3).to(dut());
        t.sample_index = at::where(lab != cuset::kIgnoreIndex, at::arange(3).unsqueeze(1).expand({3, 100}),
                                   at::full({}, -1, at::kLong)).to(dut());
        cuset::ObjectiveOptions o;
        o.method = cuset::Method::kCuset;
        o.window = 16;
        o.chunk_size = 64;
        cuset::ObjectiveOptions of = o;
        of.chunk_size = 0;
        at::Tensor hid = h32.reshape({3, 100, D}).to(dut()), w = w32.to(dut());
        cuset::ObjectiveOutput a = cuset::Objective(o).compute(hid, w, t);
        cuset::ObjectiveOutput b = cuset::Objective(of).compute(hid, w, t);
        CUSET_EXPECT_NEAR(a.numerator.item<double>(), b.numerator.item<double>(), 1e-6 * std::abs(b.numerator.item<double>()));
        CUSET_EXPECT_NEAR(a.denominator, b.denominator, 1e-6 * std::abs(b.denominator));
        EXPECT_EQ(a.stats.n_kept, b.stats.n_kept);
        EXPECT_EQ(a.stats.n_valid, b.stats.n_valid);
    }
}

// ---------------------------------------------------------------- training steps
namespace {

// A right-padded micro-batch of random tokens of the demo vocabulary, on the CPU: each row is a
// "prompt" (no target) then a "response" (targets, ~30% sensitive), one sample per row.
cuset::MicroBatch random_micro_batch(int64_t b, int64_t t, int64_t vocab, uint64_t seed) {
    at::manual_seed(seed);
    cuset::MicroBatch mb;
    mb.input_ids = at::randint(3, vocab, {b, t}, at::kLong);
    at::Tensor mask = at::zeros({b, t}, at::kBool);
    mb.labels = at::full({b, t}, cuset::kIgnoreIndex, at::kLong);
    for (int64_t r = 0; r < b; ++r) {
        const int64_t len = t - 7 * r, prompt = 5 + 3 * r;  // real tokens, prompt tokens
        mask[r].narrow(0, 0, len).fill_(true);
        mb.labels[r].narrow(0, prompt - 1, len - prompt).copy_(mb.input_ids[r].narrow(0, prompt, len - prompt));
        mb.input_ids[r].narrow(0, len, t - len).zero_();
    }
    mb.attention_mask = mask;
    mb.sensitive = (at::rand({b, t}) < 0.3).logical_and(mb.labels != cuset::kIgnoreIndex);
    mb.label_bits = mb.sensitive.to(at::kInt);
    mb.sample_index = at::where(mb.labels != cuset::kIgnoreIndex, at::arange(b).unsqueeze(1).expand({b, t}),
                                at::full({}, -1, at::kLong));
    for (int64_t r = 0; r < b; ++r) mb.sample_ids.push_back("row" + std::to_string(r));
    mb.n_tokens = mask.sum().item<int64_t>();
    mb.n_targets = (mb.labels != cuset::kIgnoreIndex).sum().item<int64_t>();
    return mb;
}

cuset::MicroBatch micro_to(const cuset::MicroBatch& m, c10::Device d) {
    cuset::MicroBatch o = m;
    for (at::Tensor* t : {&o.input_ids, &o.attention_mask, &o.position_ids, &o.segment_ids, &o.labels, &o.sensitive,
                          &o.label_bits, &o.sample_index, &o.confidence})
        if (t->defined()) *t = t->to(d);
    return o;
}

struct Run {
    cuset::Decoder model = nullptr;
    std::unique_ptr<cuset::AdamW> optim;
};

// The demo model and AdamW as the trainer builds them (decay on matrices), eps 1e-3 as in
// tests/train/test_train_step.cpp (an update moves by at most (lr / eps) dg for a gradient error
// dg: with 1e-8, gradient elements of ~1e-8 turn kernel-order differences of 1e-9 into 10% of
// their update; 1e-3 keeps lr / eps = 1).
Run make_run(c10::Device device) {
    Run r;
    r.model = cuset::model_load(demo_model(), at::kFloat, device);
    std::vector<cuset::OptimParam> ps = cuset::optim_params_of(r.model->trainable_parameters());
    cuset::AdamWOptions o;
    o.beta1 = 0.9;
    o.beta2 = 0.95;
    o.eps = 1e-3;
    o.weight_decay = 0.1;
    r.optim = std::make_unique<cuset::AdamW>(std::move(ps), o);
    return r;
}

std::vector<std::vector<cuset::MicroBatch>> demo_steps(int64_t vocab) {
    std::vector<std::vector<cuset::MicroBatch>> steps;
    for (int s = 0; s < 2; ++s)
        steps.push_back({random_micro_batch(3, 48, vocab, 100 + 2 * s), random_micro_batch(2, 40, vocab, 101 + 2 * s)});
    return steps;
}

struct StepLog {
    std::vector<cuset::TrainStepResult> results;
    std::vector<std::pair<std::string, at::Tensor>> weights;  // after the steps, CPU fp32
};

StepLog run_steps(c10::Device device, const cuset::Objective& objective, const cuset::Comm& comm,
                  const std::vector<std::vector<cuset::MicroBatch>>& steps) {
    Run run = make_run(device);
    StepLog log;
    cuset::TrainStepOptions so;
    so.lr = 1e-3;
    so.grad_clip = 1.0;
    for (size_t s = 0; s < steps.size(); ++s) {
        std::vector<cuset::MicroBatch> micro;
        for (const auto& m : steps[s]) micro.push_back(micro_to(m, device));
        so.step = static_cast<int64_t>(s);
        log.results.push_back(cuset::train_step(run.model, objective, *run.optim, comm, micro, so));
    }
    for (auto& [name, p] : run.model->trainable_parameters()) log.weights.push_back({name, p.detach().to(at::kCPU)});
    return log;
}

}  // namespace

// Two optimizer steps of the demo model (fp32) through train_step, sft and cuset, on the device
// and on the CPU. Different kernels (cuBLAS, the memory-efficient attention, CUDA reductions)
// change only the summation order: losses agree to 1e-5 relative (a token's NLL carries ~280 u
// of reordering per side, test_train_step.cpp) and gradient norms to 10 sqrt(n) u relative, n
// the largest tensor (the CPU's fp32 per-tensor norms accumulate per vector lane, a random walk
// of ~sqrt(n) u; test_zero.cpp); an Adam update is at most ~lr = 1e-3 per element and step, and
// with eps 1e-3 a gradient error dg moves it by at most lr * dg / eps = dg, so after two steps
// the weights agree to 1e-5 absolute (1% of the largest possible change). cuset's mask is a comparison with a per-sample quantile:
// the kept counts must be equal (a token within 1e-6 of its threshold could flip; none is
// expected on 300 tokens, and a flip shows as a kept-count message, not as a tolerance).
TEST(GpuTrainStep, TwoStepsSftAndCusetMatchCpu) {
    REQUIRE_GPU();
    const int64_t vocab = cuset::model_config_load(demo_model()).vocab_size;
    auto steps = demo_steps(vocab);
    for (cuset::Method m : {cuset::Method::kSft, cuset::Method::kCuset}) {
        SCOPED_TRACE(cuset::method_name(m));
        cuset::ObjectiveOptions o;
        o.method = m;
        o.chunk_size = 64;
        o.window = 16;
        cuset::Objective objective(o);
        StepLog cpu = run_steps(c10::Device(c10::kCPU), objective, cuset::Comm(), steps);
        StepLog dev = run_steps(dut(), objective, cuset::Comm(), steps);
        double n_max = 0;
        for (const auto& [name, w] : cpu.weights) n_max = std::max(n_max, static_cast<double>(w.numel()));
        const double norm_rtol = 10 * std::sqrt(n_max) * std::ldexp(1.0, -24);
        for (size_t s = 0; s < steps.size(); ++s) {
            const auto &a = dev.results[s], &b = cpu.results[s];
            ASSERT_TRUE(a.applied && b.applied) << "step " << s;
            CUSET_EXPECT_NEAR(a.loss, b.loss, 1e-5 * std::abs(b.loss)) << "step " << s;
            CUSET_EXPECT_NEAR(a.grad_norm, b.grad_norm, norm_rtol * std::abs(b.grad_norm)) << "step " << s;
            EXPECT_EQ(a.stats.n_kept, b.stats.n_kept) << "step " << s << ": a token's mask decision flipped";
            EXPECT_EQ(a.tokens, b.tokens);
            std::printf("[train step %s %zu] loss %.8f (CPU %.8f), grad norm %.6e (CPU %.6e), kept %lld\n",
                        cuset::method_name(m), s, a.loss, b.loss, a.grad_norm, b.grad_norm, (long long)a.stats.n_kept);
        }
        double worst = 0.0;
        ASSERT_EQ(dev.weights.size(), cpu.weights.size());
        for (size_t i = 0; i < cpu.weights.size(); ++i) {
            const double e = max_abs_diff(dev.weights[i].second, cpu.weights[i].second);
            CUSET_EXPECT_WITHIN(e, 1e-5) << cpu.weights[i].first;
            worst = std::max(worst, e);
        }
        std::printf("[train step %s] max abs weight difference after 2 steps: %.2e\n", cuset::method_name(m), worst);
    }
}

// ---------------------------------------------------------------- one-rank NCCL
// distributed_init refuses world 1, so the process group is built directly: one rank, NCCL on
// cuda:0. Every collective of a one-rank group is the identity (exact: a sum over one rank is a
// copy), and a training step through it equals the step with the default Comm bit for bit.
TEST(GpuDistributed, OneRankNcclCollectives) {
    REQUIRE_GPU();
    cuset::DistEnv env;
    env.rank = 0;
    env.world = 1;
    env.local_rank = 0;
    env.master_port = cuset::test::free_port(0);
    cuset::ProcessGroupOptions pg;
    pg.backend = on_cpu_mode() ? "gloo" : "nccl";
    pg.timeout_s = 60;
    cuset::Distributed dist(env, pg, dut());
    cuset::Comm comm = dist.comm();
    EXPECT_EQ(comm.world, 1);
    EXPECT_TRUE(comm.is_main());

    std::vector<double> v = {1.5, -2.25, 1e-300, 3.0e10};
    EXPECT_EQ(comm.sum_vec(v), v);
    EXPECT_EQ(comm.sum(0.125), 0.125);

    const auto opt = at::TensorOptions().device(dut());
    at::Tensor x = at::arange(12, opt.dtype(at::kFloat)) * 0.5;  // [12]
    at::Tensor y = x.clone();
    comm.sum_tensor(y);
    EXPECT_TRUE(at::equal(y, x)) << "sum_tensor";
    at::Tensor g = comm.all_gather(x);
    EXPECT_EQ(g.device(), x.device());
    EXPECT_TRUE(at::equal(g, x)) << "all_gather";
    at::Tensor bf = at::randn({8}, opt.dtype(at::kBFloat16));
    EXPECT_TRUE(at::equal(comm.all_gather(bf), bf)) << "all_gather bf16";
    at::Tensor rs = comm.reduce_scatter(x);
    EXPECT_EQ(rs.numel(), 12);
    EXPECT_TRUE(at::equal(rs, x)) << "reduce_scatter";
    at::Tensor b = x.clone();
    comm.broadcast(b, 0);
    EXPECT_TRUE(at::equal(b, x)) << "broadcast";
    at::Tensor host = at::arange(5, at::kDouble);  // a CPU tensor through a GPU group
    at::Tensor host2 = host.clone();
    comm.sum_tensor(host2);
    EXPECT_TRUE(at::equal(host2, host)) << "sum_tensor of a CPU tensor";
    comm.barrier();

    // One sft step of the demo model through the group (the bucketed gradient all-reduce
    // overlapped with backward) against the same step with the default one-process Comm.
    const int64_t vocab = cuset::model_config_load(demo_model()).vocab_size;
    std::vector<std::vector<cuset::MicroBatch>> steps = {demo_steps(vocab)[0]};
    cuset::ObjectiveOptions o;
    o.method = cuset::Method::kSft;
    o.chunk_size = 64;
    cuset::Objective objective(o);
    StepLog plain = run_steps(dut(), objective, cuset::Comm(), steps);
    StepLog grouped = run_steps(dut(), objective, comm, steps);
    ASSERT_TRUE(grouped.results[0].applied);
    EXPECT_EQ(grouped.results[0].loss, plain.results[0].loss);
    EXPECT_EQ(grouped.results[0].grad_norm, plain.results[0].grad_norm);
    for (size_t i = 0; i < plain.weights.size(); ++i)
        EXPECT_TRUE(at::equal(grouped.weights[i].second, plain.weights[i].second)) << plain.weights[i].first;
    comm.barrier();
}

// ---------------------------------------------------------------- through the binary
namespace {

// A training config of the demo model on the bundled mini data set, fp32, on `device`.
std::string trainer_config(const std::string& dir, const std::string& device, int max_steps) {
    return cuset::test::write_tiny_run_config(dir + "/c.yaml", dir,
                                              {{"model.path", demo_model()},
                                               {"data.eval", "\"\""},
                                               {"objective.method", "cuset"},
                                               {"objective.chunk_size", "64"},
                                               {"train.device", device},
                                               {"train.max_steps", std::to_string(max_steps)},
                                               {"train.lr", "1.0e-3"}});
}

// Every file of two checkpoint folders byte-identical; config.yaml without its run.name line.
void expect_identical_checkpoints(const std::string& a, const std::string& b) {
    std::vector<std::string> na, nb;
    for (auto& e : fs::directory_iterator(a)) na.push_back(e.path().filename().string());
    for (auto& e : fs::directory_iterator(b)) nb.push_back(e.path().filename().string());
    std::sort(na.begin(), na.end());
    std::sort(nb.begin(), nb.end());
    ASSERT_EQ(na, nb);
    auto without_name = [](const std::string& text) {
        std::string out, line;
        std::istringstream in(text);
        while (std::getline(in, line))
            if (line.find("  name:") != 0) out += line + "\n";
        return out;
    };
    for (const std::string& n : na) {
        std::string x = read_file(a + "/" + n), y = read_file(b + "/" + n);
        if (n == "config.yaml") x = without_name(x), y = without_name(y);
        if (n == "trainer_state.json") {  // save_id: the checkpoint's random identity
            nlohmann::json jx = nlohmann::json::parse(x), jy = nlohmann::json::parse(y);
            jx.erase("save_id"), jy.erase("save_id");
            x = jx.dump(), y = jy.dump();
        }
        if (n.rfind("optimizer", 0) == 0 && n.size() > 12 && n.substr(n.size() - 12) == ".safetensors")
            x = cuset::test::safetensors_without_save_id(a + "/" + n), y = cuset::test::safetensors_without_save_id(b + "/" + n);
        EXPECT_TRUE(x == y) << n << " differs between " << a << " and " << b;
    }
}

std::string ckpt_name(int step) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "checkpoint-%07d", step);
    return buf;
}

}  // namespace

// The precondition of an exact resume on the GPU: two uninterrupted runs of one configuration on
// CUDA write byte-identical checkpoints. If this fails, some CUDA kernel of the step is not
// deterministic (atomics in a backward), and the resume test below cannot pass either.
TEST(GpuTrainer, IdenticalRunsOnCudaWriteIdenticalCheckpoints) {
    REQUIRE_GPU();
    std::string dir = scratch_dir("gpu-trainer-reproducible");
    std::string cfg = trainer_config(dir, dut_spec(), 6);
    for (const char* name : {"one", "two"}) {
        auto r = run_cuset("--config " + cfg + " --run-name " + name);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        if (std::string(name) == "one") {
            EXPECT_NE(read_file(dir + "/one/train.log").find("device " + dut_spec()), std::string::npos)
                << "the run did not train on " << dut_spec();
        }
    }
    expect_identical_checkpoints(dir + "/one/" + ckpt_name(6), dir + "/two/" + ckpt_name(6));
}

// SIGTERM during a CUDA run saves a checkpoint and exits 75; --resume auto then reaches the same
// checkpoint as the uninterrupted CUDA run, byte for byte (weights, AdamW moments, the CPU and
// CUDA generator states, the trainer state).
TEST(GpuTrainer, SigtermThenResumeOnCudaMatchesUninterrupted) {
    REQUIRE_GPU();
    const int steps = on_cpu_mode() ? 40 : 200;
    std::string dir = scratch_dir("gpu-trainer-sigterm");
    std::string cfg = trainer_config(dir, dut_spec(), steps);
    auto full = run_cuset("--config " + cfg + " --run-name full");
    ASSERT_EQ(full.exit_code, 0) << full.err;

    auto cut = cuset::test::run_cuset_then_sigterm(cfg, dir, "cut", 5, 300);
    int status = cut.status;
    ASSERT_TRUE(WIFEXITED(status));
    size_t done = cut.steps;
    if (done >= static_cast<size_t>(steps)) GTEST_SKIP() << "the run finished before the signal arrived";
    ASSERT_EQ(WEXITSTATUS(status), 75) << read_file(dir + "/cut.err");
    auto resumed = run_cuset("--config " + cfg + " --run-name cut --resume auto");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    std::printf("[sigterm] stopped after %zu of %d steps, resumed to the end\n", done, steps);
    expect_identical_checkpoints(dir + "/full/" + ckpt_name(steps), dir + "/cut/" + ckpt_name(steps));
}

// `score` on the device against the CPU (fp32 both): the same tokens and targets, probabilities
// within 1e-5 absolute (p = exp(-nll); the NLL agrees to fp32 summation order, ~1e-6 relative
// of values O(10), so |dp| <= p * |dnll| stays far below 1e-5).
TEST(GpuScore, ProbabilitiesMatchCpu) {
    REQUIRE_GPU();
    std::string dir = scratch_dir("gpu-score");
    std::string cfg = trainer_config(dir, "cpu", 1);
    auto c = run_cuset("score --config " + cfg + " --out " + dir + "/cpu.bin");
    ASSERT_EQ(c.exit_code, 0) << c.err;
    auto g = run_cuset("score --config " + cfg + " --set train.device=" + dut_spec() + " --out " + dir + "/dev.bin");
    ASSERT_EQ(g.exit_code, 0) << g.err;
    cuset::ScoreHeader hc, hg;
    auto a = cuset::score_load_all(dir + "/cpu.bin", &hc);
    auto b = cuset::score_load_all(dir + "/dev.bin", &hg);
    EXPECT_TRUE(hc.key == hg.key);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_GT(a.size(), 0u);
    double worst = 0.0;
    int64_t n = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].id, b[i].id);
        EXPECT_EQ(a[i].ids, b[i].ids);
        EXPECT_EQ(a[i].trainable, b[i].trainable);
        EXPECT_EQ(a[i].tag_bits, b[i].tag_bits);
        ASSERT_EQ(a[i].prob.size(), b[i].prob.size());
        for (size_t t = 0; t < a[i].prob.size(); ++t) {
            if (!std::isfinite(a[i].prob[t]) && !std::isfinite(b[i].prob[t])) continue;
            const double d = std::abs(static_cast<double>(a[i].prob[t]) - b[i].prob[t]);
            worst = std::max(worst, d);
            ++n;
            CUSET_EXPECT_WITHIN(d, 1e-5) << a[i].id << " token " << t;
        }
    }
    std::printf("[score] %lld probabilities, max abs difference device vs CPU %.2e\n", (long long)n, worst);
}

// Greedy generation (fp32, KV cache) on the device and on the CPU: the same text. Greedy picks the
// argmax, so a tie within fp32 summation noise (~1e-6 of a logit) could flip a token; the demo
// model's top-two gaps are far larger on these prompts, so the texts must be equal.
TEST(GpuGenerate, GreedyMatchesCpu) {
    REQUIRE_GPU();
    std::string dir = scratch_dir("gpu-generate");
    write_file(dir + "/gen.yaml", cuset::test::yaml_of({{"model.path", demo_model()},
                                                       {"model.dtype", "float32"},
                                                       {"data.chat_format", "chatml"},
                                                       {"train.device", "cpu"},
                                                       {"train.threads", "2"},
                                                       {"log.progress", "never"},
                                                       {"generate.max_new_tokens", "48"},
                                                       {"generate.batch_size", "3"}}));
    write_file(dir + "/prompts.jsonl",
               R"({"id": "a", "prompt": "Write a CUDA kernel that adds two float arrays."})" "\n"
               R"({"id": "b", "system": "You are a CUDA expert.", "prompt": "Explain warp divergence in one sentence."})" "\n"
               R"({"id": "c", "prompt": "Write a reduction kernel with shared memory."})" "\n");
    auto gen = [&](const std::string& device, const std::string& out) {
        auto r = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + dir + "/prompts.jsonl --temperature 0 "
                           "--set train.device=" + device + " --out " + dir + "/" + out);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::vector<json> lines;
        std::istringstream in(read_file(dir + "/" + out));
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) lines.push_back(json::parse(line));
        return lines;
    };
    auto a = gen("cpu", "cpu.jsonl");
    auto b = gen(dut_spec(), "dev.jsonl");
    ASSERT_EQ(a.size(), 3u);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(b[i]["response"], a[i]["response"]) << a[i]["id"];
        EXPECT_EQ(b[i]["generated_tokens"], a[i]["generated_tokens"]) << a[i]["id"];
        EXPECT_EQ(b[i]["finish_reason"], a[i]["finish_reason"]) << a[i]["id"];
    }
}

// ---------------------------------------------------------------- the start-up memory check
namespace {

// A Llama model folder whose weights are a sparse safetensors file (every tensor zero, no disk
// blocks used): `n_layer` layers of hidden 8192 / intermediate 28672 (a 70B layer), bf16, the demo
// tokenizer. model_load reads it like any checkpoint.
void write_sparse_model(const std::string& dir, int64_t n_layer, int64_t hidden, int64_t inter) {
    fs::create_directories(dir);
    json cfg = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"vocab_size", 4096},
                {"hidden_size", hidden}, {"intermediate_size", inter}, {"num_hidden_layers", n_layer},
                {"num_attention_heads", hidden / 128}, {"num_key_value_heads", std::max<int64_t>(1, hidden / 1024)},
                {"rms_norm_eps", 1e-5}, {"max_position_embeddings", 4096}, {"rope_theta", 500000.0},
                {"tie_word_embeddings", true}, {"hidden_act", "silu"}, {"torch_dtype", "bfloat16"},
                {"eos_token_id", 2}, {"pad_token_id", 0}};
    write_file(dir + "/config.json", cfg.dump(2));
    for (const char* f : {"tokenizer.json", "tokenizer_config.json"})
        fs::copy_file(demo_model() + "/" + f, dir + "/" + f, fs::copy_options::overwrite_existing);
    // The name table and shapes from a decoder on the meta device (nothing allocated).
    cuset::ModelConfig mc = cuset::model_config_from_json(cfg, dir + "/config.json");
    cuset::Decoder meta(mc, at::TensorOptions().dtype(at::kBFloat16).device(at::kMeta));
    json header = json::object();
    header["__metadata__"] = {{"format", "pt"}};
    uint64_t offset = 0;
    for (const auto& [name, p] : cuset::hf_named_parameters(meta)) {
        const uint64_t bytes = static_cast<uint64_t>(p.numel()) * 2;
        header[name] = {{"dtype", "BF16"}, {"shape", p.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string h = header.dump();
    h.append((8 - h.size() % 8) % 8, ' ');
    const std::string path = dir + "/model.safetensors";
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    uint64_t len = h.size();
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(len >> (8 * i));
    std::fwrite(le, 1, 8, f);
    std::fwrite(h.data(), 1, h.size(), f);
    std::fclose(f);
    fs::resize_file(path, 8 + h.size() + offset);  // the data area: a hole, read as zeros
}

}  // namespace

// The trainer refuses, right after loading, a model whose resident training state (weights and
// gradients in bf16, fp32 master copy, two fp32 AdamW moments: 16 bytes per parameter) exceeds
// 97% of the GPU's memory. The model is sized from the device's own total memory to need 110%
// of it: ~1/8 of the GPU's memory in bf16 weights (~19 GB on an H200), which fit and are loaded,
// so the refusal comes from the check, not from an allocation failure.
TEST(GpuMemory, StartupRefusesTrainingStateThatCannotFit) {
    REQUIRE_GPU();
    std::string dir = scratch_dir("gpu-memory");
    const int64_t hidden = 8192, inter = 28672;
    const int64_t kv = hidden / 1024 * 128;
    const int64_t per_layer = 2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inter + 2 * hidden;
    if (on_cpu_mode()) {
        // No device memory to exceed on the CPU: check only that the sparse folder is a valid
        // model (config, header, name table, shapes) for model-info.
        write_sparse_model(dir + "/model", 1, 256, 512);
        auto r = run_cuset("model-info " + dir + "/model");
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::printf("%s", r.out.c_str());
        return;
    }
    const int64_t total = cuset::device_total_memory(dut());
    ASSERT_GT(total, 0) << "device_total_memory(" << dut().str() << ")";
    const double want_params = 1.10 * static_cast<double>(total) / 16.0;
    const int64_t n_layer = static_cast<int64_t>(std::ceil((want_params - 4096.0 * hidden) / per_layer));
    write_sparse_model(dir + "/model", n_layer, hidden, inter);
    auto info = run_cuset("model-info " + dir + "/model");
    ASSERT_EQ(info.exit_code, 0) << info.err;
    using cuset::test::kDefault;
    const std::string cfg = cuset::test::write_tiny_run_config(dir + "/c.yaml", dir,
                                                               {{"model.path", dir + "/model"},
                                                                {"model.dtype", "bfloat16"},
                                                                {"data.eval", "\"\""},
                                                                {"objective.region.window", kDefault},
                                                                {"train.device", "cuda"},
                                                                {"train.threads", kDefault},
                                                                {"train.micro_batch_size", "1"},
                                                                {"train.grad_accum", "1"},
                                                                {"train.max_steps", "1"},
                                                                {"train.lr", kDefault},
                                                                {"train.warmup_steps", kDefault},
                                                                {"train.seed", kDefault},
                                                                {"checkpoint.every", kDefault},
                                                                {"checkpoint.keep_last", kDefault},
                                                                {"log.every", kDefault}});
    auto t0 = std::chrono::steady_clock::now();
    auto r = run_cuset("--config " + cfg + " --run-name big");
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[memory] %lld layers, %.2fB parameters, device %.1f GB: exit %d after %.1f s\n", (long long)n_layer,
                (n_layer * per_layer + 4096.0 * hidden) / 1e9, total / 1e9, r.exit_code, secs);
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("training state needs"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("out of memory"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::exists(dir + "/big/train.log"));
    EXPECT_FALSE(fs::exists(dir + "/big/" + ckpt_name(1)));
    fs::remove_all(dir + "/model");  // ~19 GB of holes; nothing to keep
}

// The judge on a GPU (--judge gpu): the fixture tasks' references pass inside the containment
// (device files bound, nothing else), and two attacks of the corpus (reading the reference output,
// planting modules for the checker) do not. The containment of every sample is recorded.
TEST(GpuJudge, ContainedReferencesPassAndAttacksFail) {
    REQUIRE_GPU();
    if (on_cpu_mode()) GTEST_SKIP() << "the judge's GPU stage needs a real device";
    const std::string dir = scratch_dir("gpu-judge");
    const std::string tasks = std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl";
    auto r = run_cuset("eval --reference --tasks " + tasks + " --judge gpu --out " + dir + "/refs --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(read_file(dir + "/refs/eval.json"));
    EXPECT_EQ(j["judge"], "gpu");
    EXPECT_EQ(j["overall"]["pass@1_passed"], 4) << j.dump(1);
    EXPECT_NE(j["containment"].get<std::string>().find("namespaces"), std::string::npos);
    // Two attacks as the samples of task 0 in a results file.
    nlohmann::json rec = {{"id", 0}, {"task_name", "Vector_Add"}, {"prompt", ""}, {"run_id", "00000000"}};
    int k = 1;
    for (const char* name : {"read_reference", "plant_modules"}) {
        std::string src = read_file(std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/attacks/" + name + ".cu");
        for (size_t at = src.find("@KEY@"); at != std::string::npos; at = src.find("@KEY@")) src.replace(at, 5, dir);
        rec["code" + std::to_string(k)] = src;
        rec["response" + std::to_string(k)] = "```cuda\n" + src + "\n```";
        ++k;
    }
    write_file(dir + "/attacks.jsonl", rec.dump() + "\n");
    r = run_cuset("eval --results " + dir + "/attacks.jsonl --tasks " + tasks + " --judge gpu --out " + dir +
                  "/attacks --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    j = nlohmann::json::parse(read_file(dir + "/attacks/eval.json"));
    for (const auto& s : j["tasks"][0]["samples"]) EXPECT_NE(s["status"], "pass") << s.dump();
}

// The judge's speed-up measure on a GPU (GRPO's speed-up reward): a fixture task's reference timed
// against itself reads about 1x (two medians of 5 runs of the same program; the bound [0.5, 2]
// leaves room for the machine's noise on sub-second runs), and the reference with a 2 s sleep
// first reads below 0.5 (its reference runs in well under 2 s on any GPU).
TEST(GpuJudge, SpeedupOfTheReferenceAgainstItselfAndASlowerCopy) {
    REQUIRE_GPU();
    if (on_cpu_mode()) GTEST_SKIP() << "the judge's GPU stage needs a real device";
    const std::vector<cuset::eval::Task> all =
        cuset::eval::load_tasks(std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl");
    const std::vector<cuset::eval::Task> tasks = {all.at(0)};
    std::string slow = tasks[0].bench_cu;
    const size_t at = slow.find("int main() {");
    ASSERT_NE(at, std::string::npos);
    slow.replace(at, std::string("int main() {").size(), "int main() {\n    sleep(2);");
    slow = "#include <unistd.h>\n" + slow;
    cuset::eval::ResultRecord r;
    r.id = tasks[0].id;
    r.task_name = tasks[0].task_name;
    r.codes = {tasks[0].bench_cu, slow};
    for (const auto& c : r.codes) r.responses.push_back("```cuda\n" + *c + "\n```");
    const std::string dir = scratch_dir("gpu-judge-speedup");
    cuset::eval::JudgeOptions o;
    o.runner.mode = cuset::judge::JudgeMode::kGpu;
    o.runner.work_dir = dir + "/work";
    o.runner.nvcc = cuset::judge::find_nvcc("", "eval.nvcc");
    o.runner.python = cuset::judge::find_python("", "eval.python");
    o.runner.speedup.enabled = true;
    o.jobs = 1;
    const cuset::eval::JudgeSummary s = cuset::eval::judge_results(tasks, {r}, o);
    const cuset::eval::SampleResult &same = s.tasks.at(0).samples.at(0), &slower = s.tasks[0].samples.at(1);
    ASSERT_EQ(same.status, cuset::judge::Status::kPass) << same.error;
    ASSERT_TRUE(same.speedup.has_value()) << same.speedup_note;
    std::printf("gpu judge: the reference against itself %.3fx, with a 2 s sleep %.3fx\n", *same.speedup,
                slower.speedup.value_or(-1.0));
    EXPECT_GT(*same.speedup, 0.5);
    EXPECT_LT(*same.speedup, 2.0);
    ASSERT_EQ(slower.status, cuset::judge::Status::kPass) << slower.error;
    ASSERT_TRUE(slower.speedup.has_value()) << slower.speedup_note;
    EXPECT_LT(*slower.speedup, 0.5);
}
