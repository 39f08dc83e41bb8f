// GPU benchmark (run by bench/gpu-check.sh on a machine with one NVIDIA GPU): training steps of a
// Qwen2.5-Coder-7B-shaped decoder (random weights, fewer layers; per-layer figures scaled to 28)
// in bf16 with fp32 master weights and AdamW moments, activation checkpointing and the chunked
// objective, as the trainer runs them. Prints, all measured in this run:
//   - the GPU's bf16 matmul rate (8192^3 products), the denominator of MFU;
//   - step time, tokens/s and MFU for `sft` and `cuset`, and their ratio (goal cuset <= 1.03 sft);
//   - peak allocated memory per step;
//   - the same step through transformers + PyTorch (bench/bench_gpu_hf.py, a subprocess, same
//     shapes and settings), and the ratio (goal >= 1.1x).
// MFU counts 6 x parameters x tokens plus causal attention (6 x layers x seq x hidden per token),
// not the recomputation of activation checkpointing.
//   bench_gpu_step [--layers 4] [--seq 4096] [--batch 1] [--steps 5] [--warmup 2] [--device cuda]
//                  [--tiny] (small shapes for a smoke run on the CPU) [--no-hf]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "cuset/model/device.h"
#include "cuset/model/model.h"
#include "cuset/train/objective.h"
#include "cuset/train/optim.h"
#include "cuset/train/train_step.h"
#include "cuset/train/zero.h"
#include "gpu_bench.h"

namespace {

struct Args {
    int64_t layers = 4, seq = 4096, batch = 1, steps = 5, warmup = 2;
    std::string device = "cuda";
    bool offload = false;  // --offload: ZeRO stage 1 on one rank with masters, moments and AdamW on the CPU
    bool tiny = false, hf = true;
};

using bench::now;
using bench::sync;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

cuset::ModelConfig qwen7b_shape(const Args& a) { return bench::qwen7b_shape(a.layers, a.tiny); }

struct StepTimes {
    double seconds = 0;
    double peak_gb = 0;
};

StepTimes run_steps(const Args& a, cuset::Method method, c10::Device dev) {
    cuset::ModelConfig mc = qwen7b_shape(a);
    auto dtype = dev.is_cuda() ? at::kBFloat16 : at::kFloat;
    cuset::Decoder model(mc, at::TensorOptions().dtype(dtype).device(dev));
    cuset::decoder_init_weights(model, 0);
    model->set_activation_checkpointing(true);
    std::vector<cuset::OptimParam> ps = cuset::optim_params_of(model->trainable_parameters());
    std::unique_ptr<cuset::Optimizer> opt_ptr;
    if (a.offload) {
        cuset::ZeroOptions zo;
        zo.stage = 1;
        zo.offload = true;
        opt_ptr = std::make_unique<cuset::ZeroAdamW>(ps, cuset::AdamWOptions{}, cuset::Comm(), zo, model);
    } else {
        opt_ptr = std::make_unique<cuset::AdamW>(ps, cuset::AdamWOptions{});
    }
    cuset::Optimizer& opt = *opt_ptr;
    cuset::ObjectiveOptions oo;
    oo.method = method;
    oo.chunk_size = 2048;
    cuset::Objective obj(oo);
    at::Tensor ids = at::randint(mc.vocab_size, {a.batch, a.seq}, at::TensorOptions().dtype(at::kLong).device(dev));
    at::Tensor labels = at::roll(ids, -1, 1);  // [B, T]
    labels.select(1, a.seq - 1).fill_(cuset::kIgnoreIndex);
    labels.narrow(1, 0, a.seq / 4).fill_(cuset::kIgnoreIndex);  // a prompt: the first quarter
    at::Tensor sensitive = at::rand({a.batch, a.seq}, at::TensorOptions().device(dev)) < 0.3;
    cuset::MicroBatch mb;  // one micro-batch of `batch` unpadded rows, one sample each
    mb.input_ids = ids;
    mb.labels = labels;
    mb.sensitive = sensitive;
    mb.sample_index = at::where(labels != cuset::kIgnoreIndex,
                                at::arange(a.batch, ids.options()).unsqueeze(1).expand({a.batch, a.seq}),
                                at::full({}, -1, ids.options()));  // [B, T]
    for (int64_t b = 0; b < a.batch; ++b) mb.sample_ids.push_back("row" + std::to_string(b));
    mb.n_tokens = a.batch * a.seq;
    mb.n_targets = (labels != cuset::kIgnoreIndex).sum().item<int64_t>();
    cuset::TrainStepOptions so;
    so.lr = 1e-5;
    so.grad_clip = 1.0;
    std::vector<double> times;
    double peak = 0;
    for (int64_t s = 0; s < a.warmup + a.steps; ++s) {
        sync(dev);
        cuset::device_reset_peak(dev);
        double t0 = now();
        cuset::train_step(model, obj, opt, cuset::Comm(), {mb}, so);  // the trainer's step
        sync(dev);
        if (s >= a.warmup) times.push_back(now() - t0);
        peak = std::max(peak, cuset::device_peak_allocated(dev) / 1e9);
    }
    return {median(times), peak};
}

double matmul_tflops(c10::Device dev) {
    if (!dev.is_cuda()) return 0;
    const int64_t n = 8192;
    auto o = at::TensorOptions().dtype(at::kBFloat16).device(dev);
    at::Tensor x = at::randn({n, n}, o), y = at::randn({n, n}, o);
    for (int i = 0; i < 3; ++i) (void)at::mm(x, y);
    sync(dev);
    double t0 = now();
    for (int i = 0; i < 10; ++i) (void)at::mm(x, y);
    sync(dev);
    return 10 * 2.0 * n * n * n / (now() - t0) / 1e12;
}

double hf_step_seconds(const Args& a) {
    std::string cmd = std::string(CUSET_PYTHON_GPU) + " " + CUSET_SOURCE_DIR + "/bench/bench_gpu_hf.py --layers " +
                      std::to_string(a.layers) + " --seq " + std::to_string(a.seq) + " --batch " +
                      std::to_string(a.batch) + " --steps " + std::to_string(a.steps) + " --warmup " +
                      std::to_string(a.warmup) + (a.tiny ? " --tiny" : "") + " --device " + a.device;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return 0;
    char line[512];
    double secs = 0;
    while (fgets(line, sizeof line, p)) {
        std::fputs(line, stdout);
        std::sscanf(line, "hf_step_seconds %lf", &secs);
    }
    pclose(p);
    return secs;
}

}  // namespace

const char* const kUsage =
    "usage: bench_gpu_step [--layers 4] [--seq 4096] [--batch 1] [--steps 5] [--warmup 2] [--device cuda]\n"
    "                      [--tiny] (small shapes for a smoke run on the CPU) [--no-hf]\n"
    "                      [--offload] (fp32 masters, moments and AdamW in CPU memory: ZeRO offload, one rank)\n";

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_gpu_step: %s needs a value\n%s", k.c_str(), kUsage);
                std::exit(2);
            }
            return argv[++i];
        };
        if (k == "--layers") a.layers = std::atoll(value());
        else if (k == "--seq") a.seq = std::atoll(value());
        else if (k == "--batch") a.batch = std::atoll(value());
        else if (k == "--steps") a.steps = std::atoll(value());
        else if (k == "--warmup") a.warmup = std::atoll(value());
        else if (k == "--device") a.device = value();
        else if (k == "--tiny") a.tiny = true;
        else if (k == "--no-hf") a.hf = false;
        else if (k == "--offload") a.offload = true;
        else if (k == "--help" || k == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else {
            std::fprintf(stderr, "bench_gpu_step: unknown argument %s\n%s", k.c_str(), kUsage);
            return 2;
        }
    }
    c10::Device dev(a.device);
    if (dev.is_cuda() && !at::hasCUDA()) {
        std::fprintf(stderr, "bench_gpu_step: no CUDA device here (use --tiny --device cpu for a smoke run)\n");
        return 1;
    }
    cuset::ModelConfig mc = qwen7b_shape(a);
    double n_params = 0;
    {
        cuset::Decoder m(mc, at::TensorOptions().device(c10::kMeta));
        for (auto& p : m->parameters()) n_params += p.numel();
    }
    const double tokens = double(a.batch) * a.seq;
    const double flops = 6.0 * n_params * tokens + 6.0 * mc.n_layer * a.seq * mc.hidden_size * tokens;
    std::printf("model: Qwen2.5-7B shape, %lld of 28 layers, %.2f B parameters here; batch %lld x %lld tokens on %s%s\n",
                (long long)a.layers, n_params / 1e9, (long long)a.batch, (long long)a.seq, dev.str().c_str(),
                a.offload ? "; optimizer offloaded to the CPU (ZeRO stage 1, one rank)" : "");
    if (dev.is_cuda())
        std::printf("attention kernel: %s (causal, no mask)\n",
                    cuset::sdpa_backend_for(dev, at::kBFloat16, mc.n_head, mc.n_head_kv, mc.head_dim, a.seq, false).c_str());
    double peak_rate = matmul_tflops(dev);
    if (peak_rate > 0) std::printf("bf16 matmul 8192^3: %.1f TFLOP/s (MFU denominator)\n", peak_rate);
    StepTimes sft = run_steps(a, cuset::Method::kSft, dev);
    StepTimes cus = run_steps(a, cuset::Method::kCuset, dev);
    for (auto [name, st] : {std::pair<const char*, StepTimes>{"sft", sft}, {"cuset", cus}}) {
        double achieved = flops / st.seconds / 1e12;
        std::printf("cuset %-5s step %.3f s | %.0f tokens/s | %.1f TFLOP/s | MFU %s | peak %.1f GB\n", name, st.seconds,
                    tokens / st.seconds, achieved,
                    peak_rate > 0 ? (std::to_string(100 * achieved / peak_rate).substr(0, 4) + "%").c_str() : "n/a",
                    st.peak_gb);
    }
    std::printf("ratio cuset / sft step time: %.3f (goal <= 1.03)\n", cus.seconds / sft.seconds);
    if (a.hf) {
        double hf = hf_step_seconds(a);
        if (hf > 0) std::printf("ratio transformers / cuset-sft step time: %.3f (goal >= 1.1)\n", hf / sft.seconds);
    }
    return 0;
}
