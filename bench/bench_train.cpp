// Benchmark: whole training steps (forward, objective, backward, normalisation, clipping, AdamW)
// of the demo model on the bundled data, cuset `sft` and `cuset` against transformers + PyTorch
// (torch.optim.AdamW) doing the same steps on the same micro-batches and CPU threads, in the same
// run. The reference is a Python subprocess (bench/bench_train_hf.py) driven step by step, the
// three kinds of step interleaved so that all see the same machine load. Prints median wall and
// CPU seconds per step and the ratios: transformers / cuset-sft (goal >= 1.1) and
// cuset / sft (goal <= 1.03). Not run by the test suite.
//   bench_train [--config configs/demo.yaml] [--steps 5] [--warmup 1] [--threads 2]
// CUSET_BENCH_PROFILE=trace also writes LibTorch profiles of one step each: trace.sft.json, trace.cuset.json.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include "cuset/app/options.h"
#include "cuset/data/batching.h"
#include "cuset/data/dataset.h"
#include "cuset/model/device.h"
#include "cuset/model/model.h"
#include "cuset/train/objective.h"
#include "cuset/train/optim.h"
#include "cuset/train/train_step.h"
#include "cuset/model/lora.h"

#include <ATen/CPUGeneratorImpl.h>
#include "cuset/model/safetensors_torch.h"

namespace {

double cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Side {
    std::vector<double> wall, cpu;
};

// One cuset optimizer step over `micro`: the trainer's train_step, one process.
double cuset_step(cuset::Decoder& model, const cuset::Objective& obj, cuset::AdamW& opt,
                  const std::vector<cuset::MicroBatch>& micro, double lr) {
    cuset::TrainStepOptions o;
    o.lr = lr;
    o.grad_clip = 1.0;
    return cuset::train_step(model, obj, opt, cuset::Comm(), micro, o).loss;
}

}  // namespace

int main(int argc, char** argv) {
    std::string config = "configs/demo.yaml";
    int steps = 5, warmup = 1, threads = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k == "--config") config = argv[i + 1];
        else if (k == "--steps") steps = std::atoi(argv[i + 1]);
        else if (k == "--warmup") warmup = std::atoi(argv[i + 1]);
        else if (k == "--threads") threads = std::atoi(argv[i + 1]);
    }
    at::set_num_threads(threads);
    cuset::cpu_allocator_keep_pages();  // as Trainer does on the CPU
    cuset::Config cfg = cuset::config_load(config, {});
    cuset::TextPipeline text = cuset::text_pipeline_from(cuset::text_options_from(cfg));
    cuset::TokenizedSplit split = cuset::dataset_tokenize(cfg.data.train, text, cuset::tokenize_options_from(cfg), "train");
    cuset::PreparedData data = cuset::data_prepare(split.samples, {cfg.data.max_seq_len, cfg.data.truncation});
    cuset::OrderOptions oo;
    oo.shuffle = false;
    std::vector<cuset::Row> rows = cuset::epoch_rows(data, oo, 0);
    const int64_t mbs = cfg.train.micro_batch_size, per_step = mbs * cfg.train.grad_accum;
    const int total = warmup + steps;
    std::vector<std::vector<cuset::MicroBatch>> batches;
    cuset::NamedTensors inputs;
    for (int s = 0; s < total; ++s) {
        std::vector<cuset::MicroBatch> micro;
        for (int64_t m = 0; m < cfg.train.grad_accum; ++m) {
            std::vector<cuset::Row> part;
            for (int64_t r = 0; r < mbs; ++r) part.push_back(rows[(s * per_step + m * mbs + r) % rows.size()]);
            micro.push_back(cuset::make_micro_batch(data, part, 0, c10::Device(c10::kCPU)));
            std::string key = "s" + std::to_string(s) + "m" + std::to_string(m);
            inputs.emplace_back(key + ".input_ids", micro.back().input_ids);
            const at::Tensor& am = micro.back().attention_mask;
            inputs.emplace_back(key + ".attention_mask", am.defined() ? am.to(at::kLong) : at::ones_like(micro.back().input_ids));
            inputs.emplace_back(key + ".labels", micro.back().labels);
        }
        batches.push_back(std::move(micro));
    }
    std::string tmp = (std::filesystem::temp_directory_path() / ("cuset-bench-train-" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(tmp);
    cuset::safetensors_save(tmp + "/inputs.safetensors", inputs);

    // Reference process.
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[1]);
        close(from_child[0]);
        std::string script = std::string(CUSET_SOURCE_DIR) + "/bench/bench_train_hf.py";
        std::string ts = std::to_string(threads), acc = std::to_string(cfg.train.grad_accum);
        execl(CUSET_PYTHON, CUSET_PYTHON, script.c_str(), cfg.model.path.c_str(), (tmp + "/inputs.safetensors").c_str(),
              ts.c_str(), acc.c_str(), (char*)nullptr);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    FILE* to = fdopen(to_child[1], "w");
    FILE* from = fdopen(from_child[0], "r");
    char line[256];
    if (!fgets(line, sizeof line, from)) {
        std::fprintf(stderr, "reference process failed to start\n");
        return 1;
    }

    cuset::Decoder m_sft = cuset::model_load(cfg.model.path, at::kFloat, c10::Device(c10::kCPU));
    cuset::Decoder m_cuset = cuset::model_load(cfg.model.path, at::kFloat, c10::Device(c10::kCPU));
    auto make_opt = [&](cuset::Decoder& m) {
        std::vector<cuset::OptimParam> ps = cuset::optim_params_of(m->trainable_parameters());
        cuset::AdamWOptions o;
        o.weight_decay = 0.0;
        return cuset::AdamW(ps, o);
    };
    // The same sft steps with LoRA r 16 on all seven projections (frozen fp32 base).
    cuset::Decoder m_lora = cuset::model_load(cfg.model.path, at::kFloat, c10::Device(c10::kCPU));
    cuset::lora_attach(m_lora, cuset::LoraOptions(), at::detail::createCPUGenerator(1));
    cuset::AdamW o_sft = make_opt(m_sft), o_cuset = make_opt(m_cuset), o_lora = make_opt(m_lora);
    cuset::ObjectiveOptions so = cuset::objective_options_from(cfg);
    so.method = cuset::Method::kSft;
    cuset::ObjectiveOptions co = cuset::objective_options_from(cfg);
    co.method = cuset::Method::kCuset;
    cuset::Objective obj_sft(so), obj_cuset(co);

    Side sft, cus, hf, lora;
    double loss_sft = 0, loss_hf = 0;
    for (int s = 0; s < total; ++s) {
        double w0 = 0, c0 = 0;
        auto t0 = std::chrono::steady_clock::now();
        c0 = cpu_seconds();
        loss_sft = cuset_step(m_sft, obj_sft, o_sft, batches[s], 1e-4);
        double w_sft = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), c_sft = cpu_seconds() - c0;
        t0 = std::chrono::steady_clock::now();
        c0 = cpu_seconds();
        cuset_step(m_cuset, obj_cuset, o_cuset, batches[s], 1e-4);
        double w_cus = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), c_cus = cpu_seconds() - c0;
        t0 = std::chrono::steady_clock::now();
        c0 = cpu_seconds();
        cuset_step(m_lora, obj_sft, o_lora, batches[s], 1e-4);
        double w_lora = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), c_lora = cpu_seconds() - c0;
        std::fprintf(to, "step\n");
        std::fflush(to);
        if (!fgets(line, sizeof line, from)) return 1;
        double hw = 0, hc = 0;
        std::sscanf(line, "%lf %lf %lf", &hw, &hc, &loss_hf);
        (void)w0;
        if (s < warmup) continue;
        sft.wall.push_back(w_sft);
        sft.cpu.push_back(c_sft);
        cus.wall.push_back(w_cus);
        cus.cpu.push_back(c_cus);
        lora.wall.push_back(w_lora);
        lora.cpu.push_back(c_lora);
        hf.wall.push_back(hw);
        hf.cpu.push_back(hc);
    }
    fclose(to);
    waitpid(pid, nullptr, 0);
    if (const char* trace = std::getenv("CUSET_BENCH_PROFILE")) {  // one more step of each, profiled
        {
            torch::autograd::profiler::RecordProfile guard(std::string(trace) + ".sft.json");
            cuset_step(m_sft, obj_sft, o_sft, batches[0], 1e-4);
        }
        torch::autograd::profiler::RecordProfile guard(std::string(trace) + ".cuset.json");
        cuset_step(m_cuset, obj_cuset, o_cuset, batches[0], 1e-4);
    }
    std::filesystem::remove_all(tmp);
    const ssize_t tokens = batches[0].size() * batches[0][0].input_ids.numel();
    std::printf("training step of %s: %lld micro-batches of %lldx%lld tokens, %d threads, median of %d steps\n",
                cfg.model.path.c_str(), (long long)batches[0].size(), (long long)batches[0][0].input_ids.size(0),
                (long long)batches[0][0].input_ids.size(1), threads, steps);
    std::printf("  transformers + torch.optim.AdamW  %.3f s wall  %.3f s CPU  (last loss %.4f)\n", median(hf.wall),
                median(hf.cpu), loss_hf);
    std::printf("  cuset sft                         %.3f s wall  %.3f s CPU  (last loss %.4f)\n", median(sft.wall),
                median(sft.cpu), loss_sft);
    std::printf("  cuset cuset                       %.3f s wall  %.3f s CPU\n", median(cus.wall), median(cus.cpu));
    std::printf("ratio transformers / cuset-sft: %.3f wall, %.3f CPU (goal >= 1.1); ~%zd tokens per step\n",
                median(hf.wall) / median(sft.wall), median(hf.cpu) / median(sft.cpu), tokens);
    std::printf("ratio cuset / sft: %.3f wall, %.3f CPU (goal <= 1.03)\n", median(cus.wall) / median(sft.wall),
                median(cus.cpu) / median(sft.cpu));
    std::printf("  cuset sft + LoRA r16 (7 proj.)    %.3f s wall  %.3f s CPU\n", median(lora.wall), median(lora.cpu));
    std::printf("ratio LoRA / full fine-tune (sft): %.3f wall, %.3f CPU\n", median(lora.wall) / median(sft.wall),
                median(lora.cpu) / median(sft.cpu));
    return 0;
}
