// Benchmark: ZeRO stages 1-3 against stage 0 (replicated data parallelism) on 2 Gloo ranks (two
// threads of this process, each with its own process group over loopback), the demo model
// (data/tiny-coder, fp32) or a random one of the given shape, the same global batch through the
// real train_step. Prints each stage's median step time as a ratio to stage 0 measured in the
// same run, and the resident training state per rank (measured from the tensors' storages)
// against zero_plan().
//   bench_zero [--steps N] [--rows R] [--len T] [--threads K] [--layers L --hidden D]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>

#include "cuset/model/model.h"
#include "cuset/train/distributed.h"
#include "cuset/train/train_step.h"
#include "cuset/train/zero.h"

namespace {

struct Args {
    int steps = 6, rows = 8, len = 256, threads = 1, layers = 0, hidden = 0;
};

cuset::MicroBatch batch(int64_t rows, int64_t len, int64_t vocab, uint64_t seed) {
    at::Generator g = at::detail::createCPUGenerator(seed);
    cuset::MicroBatch mb;
    mb.input_ids = at::randint(3, vocab, {rows, len}, g, at::kLong);  // [B, T]
    mb.attention_mask = at::ones({rows, len}, at::kBool);
    mb.labels = at::cat({mb.input_ids.narrow(1, 1, len - 1), at::full({rows, 1}, cuset::kIgnoreIndex, at::kLong)}, 1);
    mb.sensitive = at::rand({rows, len}, g) < 0.25;
    mb.sample_index = at::arange(rows).unsqueeze(1).expand({rows, len}).contiguous();
    for (int64_t r = 0; r < rows; ++r) mb.sample_ids.push_back("r" + std::to_string(r));
    mb.n_tokens = rows * len;
    mb.n_targets = rows * (len - 1);
    return mb;
}

cuset::Decoder make_model(const Args& a) {
    if (a.layers <= 0) return cuset::model_load(std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder", at::kFloat, c10::Device(c10::kCPU));
    cuset::ModelConfig mc;
    mc.architecture = "LlamaForCausalLM";
    mc.vocab_size = 8192;
    mc.hidden_size = a.hidden;
    mc.intermediate_size = a.hidden * 8 / 3;
    mc.n_layer = a.layers;
    mc.n_head = std::max(1, a.hidden / 64);
    mc.n_head_kv = mc.n_head;
    mc.head_dim = 64;
    cuset::Decoder m(mc);
    cuset::decoder_init_weights(m, 7);
    return m;
}

struct Result {
    double median_s = 0;
    cuset::ShardBytes resident;
};

Result run_rank(const cuset::Comm& comm, const Args& a, int64_t stage) {
    at::set_num_threads(a.threads);
    cuset::Decoder model = make_model(a);
    model->set_activation_checkpointing(true);
    std::vector<cuset::OptimParam> ps = cuset::optim_params_of(model->trainable_parameters());
    std::unique_ptr<cuset::Optimizer> opt;
    if (stage == 0) {
        opt = std::make_unique<cuset::AdamW>(std::move(ps), cuset::AdamWOptions{});
    } else {
        cuset::ZeroOptions zo;
        zo.stage = stage;
        opt = std::make_unique<cuset::ZeroAdamW>(std::move(ps), cuset::AdamWOptions{}, comm, zo, model);
    }
    cuset::ObjectiveOptions oo;
    oo.chunk_size = 256;
    oo.window = 64;
    cuset::Objective obj(oo);
    const int64_t mine = a.rows / comm.world;
    std::vector<cuset::MicroBatch> micro = {batch(mine / 2, a.len, model->config().vocab_size, 11 + comm.rank),
                                            batch(mine - mine / 2, a.len, model->config().vocab_size, 23 + comm.rank)};
    std::vector<double> times;
    for (int s = 0; s < a.steps + 1; ++s) {  // the first step warms up
        cuset::TrainStepOptions so;
        so.lr = 1e-4;
        so.step = s;
        comm.barrier();
        auto t0 = std::chrono::steady_clock::now();
        cuset::train_step(model, obj, *opt, comm, micro, so);
        comm.barrier();
        if (s > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    Result r;
    r.median_s = times[times.size() / 2];
    if (auto* z = dynamic_cast<cuset::ZeroAdamW*>(opt.get())) r.resident = z->resident();
    return r;
}

Result on_two_ranks(const Args& a, int64_t stage, int port) {
    cuset::ProcessGroupOptions pg;
    pg.backend = "gloo";
    pg.timeout_s = 600;
    std::vector<Result> out(2);
    std::vector<std::thread> th;
    for (int r = 0; r < 2; ++r)
        th.emplace_back([&, r] {
            cuset::DistEnv env;
            env.rank = r;
            env.world = 2;
            env.master_port = port;
            cuset::Distributed dist(env, pg, c10::Device(c10::kCPU));
            out[r] = run_rank(dist.comm(), a, stage);
        });
    for (auto& t : th) t.join();
    return out[0];
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        const int v = std::atoi(argv[i + 1]);
        if (k == "--steps") a.steps = v;
        else if (k == "--rows") a.rows = v;
        else if (k == "--len") a.len = v;
        else if (k == "--threads") a.threads = v;
        else if (k == "--layers") a.layers = v;
        else if (k == "--hidden") a.hidden = v;
        else {
            std::fprintf(stderr, "bench_zero: unknown option %s\n", k.c_str());
            return 2;
        }
    }
    if (a.rows < 4) a.rows = 4;
    const int port = 26000 + static_cast<int>(::getpid() % 20000);
    std::printf("ZeRO on 2 Gloo ranks (threads), %s, %d rows x %d tokens per step, %d CPU thread(s) per rank, "
                "activation checkpointing, median of %d steps\n",
                a.layers > 0 ? ("random Llama " + std::to_string(a.layers) + "x" + std::to_string(a.hidden)).c_str()
                             : "data/tiny-coder",
                a.rows, a.len, a.threads, a.steps);
    {  // a discarded stage-0 run first: the first process group and thread pool pay start-up costs
        Args warm = a;
        warm.steps = 1;
        on_two_ranks(warm, 0, port + 50);
    }
    const Result base = on_two_ranks(a, 0, port);
    std::printf("  stage 0  %.3f s/step  1.00x\n", base.median_s);
    for (int64_t stage = 1; stage <= 3; ++stage) {
        const Result r = on_two_ranks(a, stage, port + 7 * static_cast<int>(stage));
        std::printf("  stage %lld  %.3f s/step  %.2fx of stage 0 | resident per rank %.2f MB (weights %.2f, gradients "
                    "%.2f, masters %.2f, moments %.2f)\n",
                    (long long)stage, r.median_s, r.median_s / base.median_s, r.resident.device_total() / 1e6,
                    r.resident.weights / 1e6, r.resident.gradients / 1e6, r.resident.masters / 1e6,
                    r.resident.moments / 1e6);
    }
    return 0;
}
