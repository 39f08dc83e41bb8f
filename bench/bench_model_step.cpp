// Benchmark (b): forward + backward training-step throughput of cuset's decoder against
// transformers + PyTorch eager, on the CPU, fp32, with the same model weights (written by
// model_save, loaded by both), the same input ids and the same number of intra-op threads. The
// reference is a Python subprocess (bench/bench_model_hf.py) driven step by step: cuset and
// transformers steps alternate, so both see the same load on a shared machine. Printed: the
// median wall time and process CPU time per step of both, and their ratios. Loss on both sides:
// mean next-token cross-entropy (cuset: the objective's chunked `sft` path, as the trainer runs
// it). Not run by the test suite.
//   bench_model_step [--layers 4] [--hidden 512] [--vocab 32000] [--seq 512] [--batch 2]
//                    [--heads 8] [--kv-heads 8] [--threads 1] [--steps 5] [--warmup 1]
//                    [--chunk 1024] [--checkpointing] [--reference-keeps-pages]
// cuset's side keeps its heap pages between steps as the trainer does on the CPU
// (cpu_allocator_keep_pages); --reference-keeps-pages gives the Python reference the same glibc
// setting (GLIBC_TUNABLES), to separate that gain from the rest.
// CUSET_BENCH_PROFILE=trace.json also writes a LibTorch profile of one cuset step.
#include <signal.h>
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

#include "cuset/model/device.h"
#include "cuset/model/model.h"
#include "cuset/train/objective.h"
#include "cuset/model/safetensors_torch.h"

namespace {

struct Args {
    int64_t layers = 4, hidden = 512, vocab = 32000, seq = 512, batch = 2, heads = 8, kv_heads = 8;
    int64_t threads = 1, steps = 5, warmup = 1, chunk = 1024;
    bool checkpointing = false;
    bool reference_keeps_pages = false;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        auto next = [&]() -> int64_t {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", k.c_str());
                std::exit(2);
            }
            return std::atoll(argv[++i]);
        };
        if (k == "--layers") a.layers = next();
        else if (k == "--hidden") a.hidden = next();
        else if (k == "--vocab") a.vocab = next();
        else if (k == "--seq") a.seq = next();
        else if (k == "--batch") a.batch = next();
        else if (k == "--heads") a.heads = next();
        else if (k == "--kv-heads") a.kv_heads = next();
        else if (k == "--threads") a.threads = next();
        else if (k == "--steps") a.steps = next();
        else if (k == "--warmup") a.warmup = next();
        else if (k == "--chunk") a.chunk = next();
        else if (k == "--checkpointing") a.checkpointing = true;
        else if (k == "--reference-keeps-pages") a.reference_keeps_pages = true;
        else {
            std::fprintf(stderr, "unknown argument %s\n", k.c_str());
            std::exit(2);
        }
    }
    return a;
}

// Process CPU time: on a machine shared with other jobs it counts the work done, not the wait.
double cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double wall_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The Python reference as a child process with a pipe each way.
class Reference {
public:
    explicit Reference(const std::vector<std::string>& argv) {
        int to_child[2], from_child[2];
        if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) std::exit(1);
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(to_child[0], 0);
            ::dup2(from_child[1], 1);
            ::close(to_child[1]);
            ::close(from_child[0]);
            std::vector<char*> args;
            for (const std::string& s : argv) args.push_back(const_cast<char*>(s.c_str()));
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            std::_Exit(127);
        }
        ::close(to_child[0]);
        ::close(from_child[1]);
        in_ = ::fdopen(to_child[1], "w");
        out_ = ::fdopen(from_child[0], "r");
    }
    ~Reference() {
        std::fclose(in_);
        std::fclose(out_);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    std::string line() {
        char buf[512];
        return std::fgets(buf, sizeof buf, out_) ? std::string(buf) : std::string();
    }
    // One step: false when the child failed.
    bool step(double* wall, double* cpu, double* loss) {
        std::fputs("step\n", in_);
        std::fflush(in_);
        return std::sscanf(line().c_str(), "%lf %lf %lf", wall, cpu, loss) == 3;
    }

private:
    pid_t pid_ = -1;
    FILE* in_ = nullptr;
    FILE* out_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
    Args a = parse(argc, argv);
    at::set_num_threads(static_cast<int>(a.threads));
    cuset::cpu_allocator_keep_pages();  // as Trainer does on the CPU
    if (a.reference_keeps_pages)
        ::setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647", 1);
    namespace fs = std::filesystem;
    const std::string dir = (fs::temp_directory_path() / ("cuset-bench-step-" + std::to_string(::getpid()))).string();
    fs::create_directories(dir);

    nlohmann::json j = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},
                        {"hidden_size", a.hidden}, {"intermediate_size", a.hidden * 11 / 4},
                        {"num_hidden_layers", a.layers}, {"num_attention_heads", a.heads},
                        {"num_key_value_heads", a.kv_heads}, {"vocab_size", a.vocab},
                        {"max_position_embeddings", 4096}, {"rms_norm_eps", 1e-6}, {"rope_theta", 10000.0},
                        {"tie_word_embeddings", false}, {"torch_dtype", "float32"}};
    cuset::ModelConfig cfg = cuset::model_config_from_json(j, "bench");
    {
        cuset::Decoder init(cfg);
        cuset::decoder_init_weights(init, /*seed=*/1);
        cuset::model_save(init, dir + "/model", "", at::kFloat, 0);
    }
    at::Tensor ids = at::randint(0, a.vocab, {a.batch, a.seq}, at::TensorOptions().dtype(at::kLong));  // [B, T]
    cuset::safetensors_save(dir + "/inputs.safetensors", {{"input_ids", ids}});
    cuset::Decoder model = cuset::model_load(dir + "/model", at::kFloat, at::kCPU);  // the weights the reference loads
    model->train();
    model->set_activation_checkpointing(a.checkpointing);

    // Next-token labels: position t predicts ids[t+1]; a row's last position predicts nothing.
    at::Tensor labels = at::full({a.batch, a.seq}, cuset::kIgnoreIndex, at::kLong);  // [B, T]
    labels.narrow(1, 0, a.seq - 1).copy_(ids.narrow(1, 1, a.seq - 1));
    const double n_valid = static_cast<double>(a.batch * (a.seq - 1));
    cuset::ObjectiveOptions opts;  // the trainer's path for `method: sft`
    opts.method = cuset::Method::kSft;
    opts.chunk_size = a.chunk;
    cuset::Objective objective(opts);
    cuset::MicroBatchTargets targets;
    targets.labels = labels;
    auto params = model->parameters();

    double t_fwd = 0, t_obj = 0, t_bwd = 0;  // CPU seconds summed over the timed steps
    auto step = [&](bool timed) {
        for (at::Tensor& p : params) p.mutable_grad() = at::Tensor();
        double c0 = cpu_seconds();
        at::Tensor hidden = model->forward(ids);  // [B, T, D]
        double c1 = cpu_seconds();
        cuset::ObjectiveOutput o = objective.compute(hidden, model->lm_head_weight(), targets);
        at::Tensor loss = o.numerator / n_valid;  // its gradients were computed inside compute()
        double c2 = cpu_seconds();
        loss.backward();
        double c3 = cpu_seconds();
        if (timed) {
            t_fwd += c1 - c0;
            t_obj += c2 - c1;
            t_bwd += c3 - c2;
        }
        return loss.item<double>();
    };

    Reference ref({CUSET_PYTHON, std::string(CUSET_SOURCE_DIR) + "/bench/bench_model_hf.py", dir + "/model",
                   dir + "/inputs.safetensors", std::to_string(a.threads)});
    if (ref.line().rfind("ready", 0) != 0) {
        std::fprintf(stderr, "the transformers reference did not start (see bench/bench_model_hf.py)\n");
        fs::remove_all(dir);
        return 1;
    }
    double our_loss = 0, ref_loss = 0, w, c, l;
    for (int64_t i = 0; i < a.warmup; ++i) {
        our_loss = step(false);
        if (!ref.step(&w, &c, &ref_loss)) return 1;
    }
    std::vector<double> our_wall, our_cpu, ref_wall, ref_cpu;
    for (int64_t i = 0; i < a.steps; ++i) {  // alternate: both see the same machine load
        double w0 = wall_seconds(), c0 = cpu_seconds();
        l = step(true);
        our_wall.push_back(wall_seconds() - w0);
        our_cpu.push_back(cpu_seconds() - c0);
        if (a.warmup == 0 && i == 0) our_loss = l;
        if (!ref.step(&w, &c, &l)) return 1;
        ref_wall.push_back(w);
        ref_cpu.push_back(c);
        if (a.warmup == 0 && i == 0) ref_loss = l;
    }
    if (const char* trace = std::getenv("CUSET_BENCH_PROFILE")) {
        torch::autograd::profiler::RecordProfile guard(trace);
        step(false);
    }

    const double tokens = static_cast<double>(a.batch * a.seq), n = static_cast<double>(a.steps);
    std::printf("model: Llama, %lld layers, hidden %lld, heads %lld/%lld, vocab %lld; batch %lld x seq %lld; fp32; "
                "%lld thread(s); %lld alternating steps each, medians\n",
                (long long)a.layers, (long long)a.hidden, (long long)a.heads, (long long)a.kv_heads,
                (long long)a.vocab, (long long)a.batch, (long long)a.seq, (long long)a.threads, (long long)a.steps);
    std::printf("heap pages kept between steps: cuset yes, transformers %s\n",
                a.reference_keeps_pages ? "yes (GLIBC_TUNABLES)" : "no (glibc default)");
    std::printf("first-step loss: cuset %.6f, transformers %.6f (same weights and inputs)\n", our_loss, ref_loss);
    std::printf("cuset CPU per step: decoder forward %.3f s, objective (lm_head, loss and their grads) %.3f s, "
                "decoder backward %.3f s%s\n",
                t_fwd / n, t_obj / n, t_bwd / n, a.checkpointing ? " (activation checkpointing)" : "");
    std::printf("cuset        %8.1f tokens/s wall (%.3f s/step), %8.1f tokens per CPU-second (%.3f s)\n",
                tokens / median(our_wall), median(our_wall), tokens / median(our_cpu), median(our_cpu));
    std::printf("transformers %8.1f tokens/s wall (%.3f s/step), %8.1f tokens per CPU-second (%.3f s)\n",
                tokens / median(ref_wall), median(ref_wall), tokens / median(ref_cpu), median(ref_cpu));
    std::printf("ratio cuset / transformers: %.2fx wall, %.2fx CPU time (goal >= 1.10x)\n",
                median(ref_wall) / median(our_wall), median(ref_cpu) / median(our_cpu));
    fs::remove_all(dir);
    return 0;
}
