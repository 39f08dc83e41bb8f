// Benchmark (c): peak memory of one training step (decoder forward, objective, backward) with and
// without activation checkpointing, on the CPU, fp32. The peak is counted by a wrapper around
// LibTorch's CPU allocator: bytes of live tensors above what was live before the step (weights,
// gradients, inputs). (The resident set is no measure here: freed memory stays resident in the
// heap from one step to the next.) Also printed: the time cost of recomputing each layer, and a check that both give the same
// gradients. Not run by the test suite.
//   bench_model_memory [--layers 8] [--hidden 512] [--vocab 32000] [--seq 1024] [--batch 4]
//                      [--threads 1]
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>

#include "counting_allocator.h"
#include "cuset/model/model.h"
#include "cuset/train/objective.h"

namespace {

double cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Result {
    double peak_gb = 0, cpu_s = 0;
    std::vector<at::Tensor> grads;
};

}  // namespace

int main(int argc, char** argv) {
    int64_t layers = 8, hidden = 512, vocab = 32000, seq = 1024, batch = 4, threads = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        int64_t v = std::atoll(argv[i + 1]);
        if (k == "--layers") layers = v;
        else if (k == "--hidden") hidden = v;
        else if (k == "--vocab") vocab = v;
        else if (k == "--seq") seq = v;
        else if (k == "--batch") batch = v;
        else if (k == "--threads") threads = v;
        else {
            std::fprintf(stderr, "unknown argument %s\n", k.c_str());
            return 2;
        }
    }
    at::set_num_threads(static_cast<int>(threads));
    static bench::CountingAllocator counter(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&counter, /*priority=*/100);

    nlohmann::json j = {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", hidden},
                        {"intermediate_size", hidden * 11 / 4}, {"num_hidden_layers", layers},
                        {"num_attention_heads", hidden / 64}, {"vocab_size", vocab}};
    cuset::Decoder model(cuset::model_config_from_json(j, "bench"));
    cuset::decoder_init_weights(model, /*seed=*/1);
    at::Tensor ids = at::randint(0, vocab, {batch, seq}, at::TensorOptions().dtype(at::kLong));  // [B, T]
    cuset::ObjectiveOptions opts;
    opts.method = cuset::Method::kSft;
    cuset::Objective objective(opts);
    cuset::MicroBatchTargets targets;
    targets.labels = at::full({batch, seq}, cuset::kIgnoreIndex, at::kLong);  // [B, T]
    targets.labels.narrow(1, 0, seq - 1).copy_(ids.narrow(1, 1, seq - 1));
    auto params = model->parameters();

    auto run = [&](bool checkpointing) {
        model->set_activation_checkpointing(checkpointing);
        for (at::Tensor& p : params) p.mutable_grad() = at::zeros_like(p);  // gradients exist before the step
        counter.reset_peak();
        const int64_t before = counter.current();
        const double c0 = cpu_seconds();
        at::Tensor hidden = model->forward(ids);  // [B, T, D]
        cuset::ObjectiveOutput o = objective.compute(hidden, model->lm_head_weight(), targets);
        o.numerator.backward();
        Result r;
        r.cpu_s = cpu_seconds() - c0;
        r.peak_gb = (counter.peak() - before) / 1e9;
        for (at::Tensor& p : params) r.grads.push_back(p.grad().clone());
        return r;
    };
    run(false);  // warm-up of both paths
    run(true);
    Result plain = run(false), ckpt = run(true);
    double max_diff = 0;
    for (size_t i = 0; i < plain.grads.size(); ++i)
        max_diff = std::max(max_diff, (plain.grads[i] - ckpt.grads[i]).abs().max().item<double>());
    std::printf("model: Llama, %lld layers, hidden %lld, vocab %lld; batch %lld x seq %lld; fp32 on the CPU; "
                "%lld thread(s)\n", (long long)layers, (long long)hidden, (long long)vocab, (long long)batch,
                (long long)seq, (long long)threads);
    std::printf("parameters %.3f GB (gradients preallocated, not counted below)\n",
                [&] { int64_t n = 0; for (auto& p : params) n += p.nbytes(); return n / 1e9; }());
    std::printf("without checkpointing: step peak %.3f GB above the weights, %.2f s CPU\n", plain.peak_gb,
                plain.cpu_s);
    std::printf("with    checkpointing: step peak %.3f GB above the weights, %.2f s CPU\n", ckpt.peak_gb, ckpt.cpu_s);
    std::printf("ratio with / without: memory %.2f, CPU time %.2f; gradients max abs difference %.1e\n",
                ckpt.peak_gb / plain.peak_gb, ckpt.cpu_s / plain.cpu_s, max_diff);
    return 0;
}
