// GPU decode benchmark (run by bench/gpu-check.sh): greedy generation through cuset's KV-cache
// decode loop (generate/generator.h, as `cuset-train generate` runs it) on a
// Qwen2.5-Coder-7B-shaped decoder with random bf16 weights (all 28 layers unless --layers).
// Prints, all measured in this run:
//   - the device's copy bandwidth (a 2 GiB device-to-device copy: bytes read + written / time);
//   - decode tokens/s at each batch size (default 1 and 32): prompts of --prompt random tokens,
//     --new-tokens new ones; the prefill is taken out by timing a one-new-token run too, so the
//     figure is (new - 1) decode steps x batch / (t(new) - t(1));
//   - at batch 1, the fraction of the memory-bandwidth bound: a decode step reads every weight but
//     the embedding table once (weight bytes x steps/s), against the measured copy bandwidth
//     (goal >= 70%);
//   - peak allocated memory.
//   bench_gpu_decode [--layers 28] [--prompt 512] [--new-tokens 128] [--batches 1,32] [--repeats 3]
//                    [--device cuda] [--tiny] (small shapes for a smoke run on the CPU)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "cuset/generate/generator.h"
#include "cuset/model/device.h"
#include "cuset/model/model.h"
#include "cuset/text/tokenizer.h"
#include "gpu_bench.h"

namespace {

struct Args {
    int64_t layers = 28, prompt = 512, new_tokens = 128, repeats = 3;
    std::vector<int64_t> batches{1, 32};
    std::string device = "cuda";
    bool tiny = false;
};

using bench::now;
using bench::sync;

const char* kUsage =
    "usage: bench_gpu_decode [--layers N] [--prompt N] [--new-tokens N] [--batches B,B,...] [--repeats N]\n"
    "                        [--device cuda|cpu] [--tiny]\n";

bool parse(int argc, char** argv, Args* a) {
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (k == "--tiny") {
            a->tiny = true;
            continue;
        }
        if (i + 1 >= argc) return false;
        const std::string v = argv[++i];
        if (k == "--layers") a->layers = std::atoll(v.c_str());
        else if (k == "--prompt") a->prompt = std::atoll(v.c_str());
        else if (k == "--new-tokens") a->new_tokens = std::atoll(v.c_str());
        else if (k == "--repeats") a->repeats = std::atoll(v.c_str());
        else if (k == "--device") a->device = v;
        else if (k == "--batches") {
            a->batches.clear();
            std::stringstream ss(v);
            for (std::string item; std::getline(ss, item, ',');) a->batches.push_back(std::atoll(item.c_str()));
        } else {
            return false;
        }
    }
    if (a->layers < 1 || a->prompt < 1 || a->new_tokens < 2 || a->repeats < 1 || a->batches.empty()) return false;
    for (int64_t b : a->batches)
        if (b < 1) return false;
    return a->device == "cuda" || a->device == "cpu";
}

// Copy bandwidth in GB/s (1e9 bytes): a device-to-device copy of `bytes`, bytes read + written.
double copy_bandwidth(c10::Device dev, int64_t bytes) {
    at::Tensor src = at::empty({bytes / 2}, at::TensorOptions().dtype(at::kBFloat16).device(dev)).fill_(1.0);
    at::Tensor dst = at::empty_like(src);
    for (int i = 0; i < 3; ++i) dst.copy_(src);
    sync(dev);
    const int reps = 20;
    const double t0 = now();
    for (int i = 0; i < reps; ++i) dst.copy_(src);
    sync(dev);
    return 2.0 * static_cast<double>(bytes) * reps / (now() - t0) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    if (!parse(argc, argv, &a)) {
        std::fprintf(stderr, "%s", kUsage);
        return 2;
    }
    if (a.device == "cuda" && !at::hasCUDA()) {
        std::fprintf(stderr, "bench_gpu_decode: --device cuda, but no CUDA device is available to this LibTorch\n");
        return 2;
    }
    const c10::Device dev = a.device == "cuda" ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    const auto dtype = dev.is_cuda() ? at::kBFloat16 : at::kFloat;
    at::NoGradGuard no_grad;

    const cuset::ModelConfig mc = bench::qwen7b_shape(a.layers, a.tiny);
    cuset::Decoder model(mc, at::TensorOptions().dtype(dtype).device(dev));
    // Random weights drawn on the device (a CPU draw of 7.6 B values takes minutes): N(0, 0.02),
    // norms 1. Their values do not change the work of a decode step.
    at::Generator gen = dev.is_cuda() ? at::globalContext().defaultGenerator(dev) : at::detail::getDefaultCPUGenerator();
    gen.set_current_seed(0);
    int64_t params = 0, embed = model->embed_tokens.numel();
    for (const cuset::WeightEntry& e : cuset::decoder_weight_table(model)) {
        params += e.param.numel();
        if (e.hf_name.find("norm.weight") != std::string::npos) e.param.fill_(1.0);
        else e.param.normal_(0.0, 0.02, gen);
    }
    const double weight_bytes = static_cast<double>(params - embed) * static_cast<double>(at::elementSize(dtype));
    const std::string src = CUSET_SOURCE_DIR;
    std::unique_ptr<cuset::Tokenizer> tok = cuset::tokenizer_load(src + "/data/tiny-coder");  // decodes text only

    const double bw = copy_bandwidth(dev, a.tiny ? (int64_t{64} << 20) : (int64_t{2} << 30));
    std::printf("model: Qwen2.5-7B shape%s, %lld layers, %.2f B parameters, %s on %s; weights read per decode step "
                "%.3f GB\n",
                a.tiny ? " (tiny)" : "", static_cast<long long>(a.layers), params / 1e9, c10::toString(dtype),
                dev.str().c_str(), weight_bytes / 1e9);
    std::printf("copy bandwidth: %.0f GB/s (device-to-device, read + write)\n", bw);
    std::printf("greedy, prompts of %lld random tokens, %lld new tokens, best of %lld\n", static_cast<long long>(a.prompt),
                static_cast<long long>(a.new_tokens), static_cast<long long>(a.repeats));
    std::fflush(stdout);

    auto generator = [&](int64_t n) {
        cuset::GenerateOptions go;
        go.max_new_tokens = n;  // no EOS ids: every row runs the full length
        go.context_length = mc.max_position_embeddings;
        return cuset::Generator(model, *tok, go, dev);
    };
    cuset::Generator full = generator(a.new_tokens), one = generator(1);
    at::Generator ids_gen = at::make_generator<at::CPUGeneratorImpl>(1);
    for (int64_t b : a.batches) {
        std::vector<cuset::GenerationInput> batch;
        for (int64_t r = 0; r < b; ++r) {
            at::Tensor ids = at::randint(mc.vocab_size, {a.prompt}, ids_gen, at::kInt);
            batch.push_back({std::vector<int32_t>(ids.data_ptr<int32_t>(), ids.data_ptr<int32_t>() + a.prompt), 0});
        }
        cuset::device_reset_peak(dev);
        one.generate(batch);  // warm-up: kernels, allocator
        double t_one = 1e30, t_full = 1e30;
        for (int64_t r = 0; r < a.repeats; ++r) {
            sync(dev);
            double t0 = now();
            one.generate(batch);
            sync(dev);
            t_one = std::min(t_one, now() - t0);
            t0 = now();
            full.generate(batch);
            sync(dev);
            t_full = std::min(t_full, now() - t0);
        }
        const double steps = static_cast<double>(a.new_tokens - 1), decode_s = std::max(t_full - t_one, 1e-9);
        const double steps_per_s = steps / decode_s;
        std::printf("batch %3lld: decode %8.1f tok/s (%.2f ms/step), prefill %.3f s", static_cast<long long>(b),
                    steps_per_s * static_cast<double>(b), 1e3 / steps_per_s, t_one);
        if (b == 1)
            std::printf(", %.1f%% of the bandwidth bound (%.0f GB/s of weights read vs %.0f GB/s copy)",
                        100.0 * weight_bytes * steps_per_s / 1e9 / bw, weight_bytes * steps_per_s / 1e9, bw);
        if (dev.is_cuda()) std::printf(", peak %.1f GB", static_cast<double>(cuset::device_peak_allocated(dev)) / 1e9);
        std::printf("\n");
        std::fflush(stdout);
    }
    return 0;
}
