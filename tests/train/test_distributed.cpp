// Data parallelism on CPUs: two Gloo ranks on localhost (started here, as torchrun would) reach
// the same weights as one process with the same global batch; a 2-rank checkpoint resumes in one
// process; a missing or dead rank makes the other exit with a clear error instead of hanging.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "weight_diff.h"

namespace fs = std::filesystem;
using cuset::test::free_port;
using cuset::test::max_weight_diff;
using cuset::test::read_file;
using cuset::test::run_ranks;
using cuset::test::spawn_rank;
using cuset::test::wait_exit;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

std::string write_config(const std::string& dir, int max_steps, int every) {
    // eps 1e-3 instead of 1e-8: with a tiny eps, AdamW turns gradients that are ~0 into updates of
    // +-lr whose sign rounding decides; a larger eps keeps the update a smooth function of the
    // gradient (see kWeightTol).
    using cuset::test::kDefault;
    return cuset::test::write_tiny_run_config(dir + "/c.yaml", dir,
                                              {{"data.eval", "\"\""},
                                               {"train.micro_batch_size", "1"},
                                               {"train.max_steps", std::to_string(max_steps)},
                                               {"train.eps", "1.0e-3"},
                                               {"train.seed", "5"},
                                               {"train.warmup_steps", kDefault},
                                               {"checkpoint.every", std::to_string(every)},
                                               {"log.every", kDefault},
                                               {"distributed.timeout_s", "15"}});
}

// The absolute bound on the difference of two fp32 computations of the ASFT statistic kl_mean,
// the token mean of KL(pi_ref || pi_theta) = sum_v p_v (log p_v - log q_v). Both log-probabilities
// are log_softmax outputs of magnitude ~|lse| = log V (the tiny model's logits are ~0), each
// rounded once in the subtraction z - lse and carrying the error of lse itself: its sum of V
// exponentials is rounded over ~log2(V) levels of a vectorised reduction, an absolute error of
// ~log2(V) u in lse. The difference of the two log-probabilities is exact (Sterbenz), so per
// token |error| <= 2 (log V + log2 V) u, the p-weighted sum adding nothing (sum p = 1), and the
// two runs' errors add: 4 (log V + log2 V) u. The token mean is bounded by the same per-token
// worst case (no averaging assumed). u = 2^-24. For V = 400: 3.6e-6, against a largest observed
// difference of 1.7e-8 (2 ranks vs 1 process, AVX-512 and AVX2 machines).
double kl_mean_atol() {
    const double vocab = json::parse(read_file(cuset::test::tiny_model_dir() + "/config.json"))["vocab_size"].get<double>();
    return 4.0 * (std::log(vocab) + std::log2(vocab)) * std::ldexp(1.0, -24);
}

// Bounds between runs that differ only in the order of fp32 sums (u = 2^-24; the micro-batch
// shapes, the ranks' shares, the all-reduce's buckets):
//  - kStatRtol, relative, on a step's loss, ce, weights and thresholds: a loss is a mean of
//    per-token NLLs lse - z_y (|l| ~ ln 400 ~ 6); per run a logit's length-D dot product (D = 32:
//    D u relative to |z| <~ 1) and the log-softmax ((ln V + log2 V) u, as kl_mean_atol) move a
//    token's NLL by ~47 u absolute, a confidence c = exp(-l) as much relatively; two runs and the
//    step sums' log2(N) u: ~100 u = 6e-6, and from step 2 on what the weights' differences move
//    (rounding of the same order, random in sign): 1e-5.
//  - kWeightTol, absolute, on the weights after the run: an update lr m / (sqrt(v) + eps) moves by
//    at most (lr / eps) dg for an absolute gradient error dg, the ~50 u relative rounding of the
//    gradient's terms (|g| <~ 0.05 per element): lr / eps = 10, four steps: 4 x 10 x 1.5e-7 = 6e-6;
//    1e-5. A wrong normalisation or a gradient summed instead of averaged moves a
//    weight by ~lr |g| / eps ~ 1e-3 and a loss by > 1e-3 relative.
constexpr double kStatRtol = 1e-5;
constexpr double kWeightTol = 1e-5;

// Two ranks against one process on the same global batch, for a threshold mode (or, with
// `sets`, other objective settings: "key=value" each; a method's own statistics in `keys`).
void expect_two_ranks_match_one(const std::string& test, const std::string& mode, int port,
                                const std::vector<std::string>& sets = {}, int steps = 4,
                                const std::vector<const char*>& keys = {}) {
    std::string dir = scratch_dir(test);
    std::string cfg = write_config(dir, steps, 0);
    std::vector<std::string> args = {"--set", "objective.mask.threshold.mode=" + mode};
    std::string one_args = " --set objective.mask.threshold.mode=" + mode;
    for (const std::string& set : sets) {
        if (set.rfind("!", 0) == 0) {  // "!command": run before training (e.g. make a score file)
            auto r = run_cuset(set.substr(1) + " --config " + cfg);
            ASSERT_EQ(r.exit_code, 0) << r.err;
            continue;
        }
        args.insert(args.end(), {"--set", set});
        one_args += " --set " + set;
    }
    std::vector<std::string> two_args = args;
    // 16 KiB buckets: the 32 k-parameter test model's gradients go in ~8 all-reduces.
    two_args.insert(two_args.end(), {"--set", "distributed.bucket_mb=0.015625", "--log-level", "debug"});
    run_ranks(2, cfg, dir, "two", port, two_args);  // 2 ranks x 1 x 2 = 4 rows per step
    auto one = run_cuset("--config " + cfg + " --run-name one --set train.micro_batch_size=2" + one_args);  // 1 x 2 x 2
    ASSERT_EQ(one.exit_code, 0) << one.err;
    auto m2 = cuset::test::read_metrics(dir + "/two"), m1 = cuset::test::read_metrics(dir + "/one");
    ASSERT_EQ(m2.size(), size_t(steps));
    ASSERT_EQ(m1.size(), size_t(steps));
    for (int i = 0; i < steps; ++i) {
        // Same samples per step; only the order of fp32 summation differs: kStatRtol.
        auto near = [&](const cuset::test::Site& site, const char* key, double rtol, double atol) {
            if (m2[i][key].is_null() || m1[i][key].is_null()) {  // NaN: not this method's statistic
                EXPECT_EQ(m2[i][key].is_null(), m1[i][key].is_null()) << key << " at step " << i + 1;
                return;
            }
            const double a = m2[i][key].get<double>(), b = m1[i][key].get<double>();
            CUSET_EXPECT_NEAR_AT(site, a, b, rtol * std::abs(b) + atol) << key << " at step " << i + 1;
        };
        near(CUSET_HERE, "loss", kStatRtol, 0.0);
        // The logged statistics are the whole step's on rank 0, not its own share.
        near(CUSET_HERE, "ce", kStatRtol, 0.0);
        near(CUSET_HERE, "w_min", kStatRtol, 0.0);
        near(CUSET_HERE, "w_max", kStatRtol, 0.0);
        near(CUSET_HERE, "mean_tau", kStatRtol, 0.0);
        for (const char* k : keys) {
            // kl_mean (a KL of ~1e-5) is formed by cancellation, so it gets an absolute bound.
            if (std::string(k) == "kl_mean") near(CUSET_HERE, k, 1e-6, kl_mean_atol());
            else near(CUSET_HERE, k, kStatRtol, 0.0);
        }
        EXPECT_EQ(m2[i]["tokens"], m1[i]["tokens"]);
        EXPECT_EQ(m2[i]["kept_fraction"], m1[i]["kept_fraction"]) << "step " << i + 1;
        EXPECT_EQ(m2[i]["sensitive_fraction"], m1[i]["sensitive_fraction"]) << "step " << i + 1;
    }
    const std::string last = "/checkpoint-000000" + std::to_string(steps);
    CUSET_EXPECT_WITHIN(max_weight_diff(dir + "/two" + last, dir + "/one" + last), kWeightTol);
    // The gradient all-reduce overlaps backward: buckets start before backward has finished.
    const std::string log = read_file(dir + "/two-r0.log");
    const std::string key = "gradient all-reduce: ";
    const size_t at = log.find(key);
    ASSERT_NE(at, std::string::npos) << log;
    unsigned started = 0, total = 0;
    ASSERT_EQ(std::sscanf(log.c_str() + at + key.size(), "%u of %u", &started, &total), 2) << log.substr(at, 80);
    EXPECT_GT(total, 4u);
    EXPECT_GE(started, 1u);
}

}  // namespace

TEST(Distributed, TwoGlooRanksMatchOneProcessWithTheSameGlobalBatch) {
    expect_two_ranks_match_one("dist-equal", "sample_quantile", free_port(1));
}

TEST(Distributed, BatchQuantileGathersTheThresholdFromEveryRank) {
    // tau is the q-quantile over the step's confidences from both ranks, as in one process.
    expect_two_ranks_match_one("dist-batch-quantile", "batch_quantile", free_port(5));
}

// The baselines through the same step normalisation (3 steps each, to keep the runtime modest):
// EAFT's per-token weights, ASFT's frozen reference model on every rank, and Rho-1's selection of
// the top 40% of the step's scored tokens gathered from both ranks (reference: a score file of the
// base model made by `cuset-train score`).
TEST(Distributed, EaftAsftRho1TwoRanksMatchOneProcess) {
    expect_two_ranks_match_one("dist-eaft", "sample_quantile", free_port(7),
                               {"objective.method=eaft", "objective.eaft.k=5"}, 3, {"token_weight_mean"});
    expect_two_ranks_match_one("dist-asft", "sample_quantile", free_port(8),
                               {"objective.method=asft", "objective.asft.alpha=0.5"}, 3, {"token_weight_mean", "kl_mean"});
    // Rho-1's reference: the test model with its final norm scaled by 1.5 (the base model itself
    // would score every token l - l_ref ~ 0 at the first step, and the selection would be rounding).
    const std::string ref = scratch_dir("dist-rho1-ref");
    fs::copy(cuset::test::tiny_model_dir(), ref + "/model", fs::copy_options::recursive);
    auto scale = cuset::test::run_command(
        std::string(CUSET_PYTHON) + " -c \"from safetensors.torch import load_file, save_file; import sys; "
        "p = sys.argv[1] + '/model.safetensors'; t = load_file(p); t['model.norm.weight'] *= 1.5; "
        "save_file(t, p, metadata={'format': 'pt'})\" " + ref + "/model");
    ASSERT_EQ(scale.exit_code, 0) << scale.err;
    expect_two_ranks_match_one("dist-rho1", "sample_quantile", free_port(9),
                               {"!score --out " + ref + "/scores.bin --set model.path=" + ref + "/model",
                                "objective.method=rho1", "objective.rho1.keep_fraction=0.4",
                                "objective.rho1.reference_scores=" + ref + "/scores.bin"},
                               3);
}

TEST(Distributed, OneRankWithANonFiniteStepSkipsItOnEveryRank) {
    // One sample only one rank trains on poisons its forward pass (NaN input-embedding rows, in an
    // untied copy of the model, for every token holding a non-ASCII byte; the other samples are
    // ASCII): that rank's step fails before
    // its backward while the other rank's buckets start during backward. Both must issue the same
    // collectives, skip the step together and finish, instead of hanging or mixing up buffers.
    std::string dir = scratch_dir("dist-nonfinite");
    std::string model = dir + "/model";
    fs::copy(cuset::test::tiny_model_dir(), model, fs::copy_options::recursive);
    write_file(dir + "/poison.py",
               "import json, sys, torch\n"
               "from safetensors.torch import load_file, save_file\n"
               "d = sys.argv[1]\n"
               "bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))\n"
               "cs = bs[:]\n"
               "n = 0\n"
               "for b in range(256):\n"
               "    if b not in bs:\n"
               "        bs.append(b); cs.append(256 + n); n += 1\n"
               "byte_of = {chr(c): b for b, c in zip(bs, cs)}\n"
               "vocab = json.load(open(d + '/tokenizer.json'))['model']['vocab']\n"
               "bad = [i for t, i in vocab.items() if any(byte_of.get(ch, 0) >= 128 for ch in t)]\n"
               "p = d + '/model.safetensors'\n"
               "t = load_file(p)\n"
               "t['lm_head.weight'] = t['model.embed_tokens.weight'].clone()  # untied: only inputs poisoned\n"
               "t['model.embed_tokens.weight'][bad] = float('nan')\n"
               "save_file(t, p, metadata={'format': 'pt'})\n"
               "c = json.load(open(d + '/config.json'))\n"
               "c['tie_word_embeddings'] = False\n"
               "json.dump(c, open(d + '/config.json', 'w'))\n"
               "print(len(bad))\n");
    auto poison = cuset::test::run_command(std::string(CUSET_PYTHON) + " " + dir + "/poison.py " + model);
    ASSERT_EQ(poison.exit_code, 0) << poison.err;
    ASSERT_GT(std::atoi(poison.out.c_str()), 0) << poison.out;
    std::string data = read_file("tests/fixtures/mini_sft.jsonl");
    ASSERT_TRUE(std::all_of(data.begin(), data.end(), [](char c) { return static_cast<unsigned char>(c) < 128; }));
    write_file(dir + "/data.jsonl", data + "{\"id\": \"mini-poison\", \"prompt\": \"Say it in French.\", "
                                            "\"response\": \"Caf\u00e9 cr\u00e8me, s'il vous pla\u00eet.\"}\n");
    std::string cfg = write_config(dir, 3, 0);  // 11 samples: steps of 4, 4 and 3 rows
    run_ranks(2, cfg, dir, "two", free_port(6),
                  {"--set", "model.path=" + model, "--set", "data.train=" + dir + "/data.jsonl", "--set",
                   "distributed.bucket_mb=0.015625", "--set", "train.max_bad_steps=2"});
    auto m = cuset::test::read_metrics(dir + "/two");
    ASSERT_EQ(m.size(), 3u);
    int skipped = 0;
    for (const auto& j : m) skipped += j["skipped"].get<bool>() ? 1 : 0;
    EXPECT_EQ(skipped, 1);
    const std::string r1 = read_file(dir + "/two-r0.log") + read_file(dir + "/two-r1.log");
    EXPECT_EQ(cuset::test::count_of(r1, "non-finite logits"), 1) << r1;  // one rank's forward failed
}

TEST(Distributed, TwoRankCheckpointResumesInOneProcess) {
    std::string dir = scratch_dir("dist-resume");
    std::string cfg = write_config(dir, 4, 2);
    run_ranks(2, cfg, dir, "two", free_port(2));
    fs::create_directories(dir + "/one");
    fs::copy(dir + "/two/checkpoint-0000002", dir + "/one/checkpoint-0000002", fs::copy_options::recursive);
    auto r = run_cuset("--config " + cfg + " --run-name one --resume auto --set train.micro_batch_size=2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto m2 = cuset::test::read_metrics(dir + "/two"), m1 = cuset::test::read_metrics(dir + "/one");
    ASSERT_EQ(m1.size(), 2u);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(m1[i]["step"], m2[i + 2]["step"]);
        CUSET_EXPECT_NEAR(m1[i]["loss"].get<double>(), m2[i + 2]["loss"].get<double>(), kStatRtol * m2[i + 2]["loss"].get<double>());
    }
    CUSET_EXPECT_WITHIN(max_weight_diff(dir + "/two/checkpoint-0000004", dir + "/one/checkpoint-0000004"), kWeightTol);
    // A different global batch is refused.
    auto bad = run_cuset("--config " + cfg + " --run-name one --resume " + dir + "/two/checkpoint-0000002");
    EXPECT_EQ(bad.exit_code, 3);
    EXPECT_NE(bad.err.find("rows per step"), std::string::npos) << bad.err;
}

TEST(Distributed, MissingRankTimesOutWithAClearError) {
    std::string dir = scratch_dir("dist-missing");
    std::string cfg = write_config(dir, 4, 0);
    auto t0 = std::chrono::steady_clock::now();
    pid_t r0 = spawn_rank(cfg, "alone", 0, 2, free_port(3), dir + "/alone.log", {"--set", "distributed.timeout_s=3"});
    int e = wait_exit(r0);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(e, 4) << read_file(dir + "/alone.log");
    EXPECT_NE(read_file(dir + "/alone.log").find("distributed: rank 0"), std::string::npos) << read_file(dir + "/alone.log");
    EXPECT_LT(secs, 60.0);
}

TEST(Distributed, DeadRankMakesTheOtherExit) {
    std::string dir = scratch_dir("dist-dead");
    std::string cfg = write_config(dir, 400, 0);
    int port = free_port(4);
    pid_t r0 = spawn_rank(cfg, "dead", 0, 2, port, dir + "/r0.log", {"--set", "distributed.timeout_s=5"});
    pid_t r1 = spawn_rank(cfg, "dead", 1, 2, port, dir + "/r1.log", {"--set", "distributed.timeout_s=5"});
    auto t0 = std::chrono::steady_clock::now();
    while (cuset::test::read_metrics(dir + "/dead").size() < 2 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_GE(cuset::test::read_metrics(dir + "/dead").size(), 2u) << read_file(dir + "/r0.log");
    kill(r1, SIGKILL);
    wait_exit(r1);
    auto t1 = std::chrono::steady_clock::now();
    int e0 = wait_exit(r0);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    EXPECT_EQ(e0, 4) << read_file(dir + "/r0.log");
    EXPECT_NE(read_file(dir + "/r0.log").find("distributed: rank 0"), std::string::npos) << read_file(dir + "/r0.log");
    EXPECT_LT(secs, 60.0);  // timeout 5 s: it must not hang
}

namespace {

void expect_same_steps(const std::string& a, const std::string& b, size_t from_a, size_t n) {
    auto ma = cuset::test::read_metrics(a), mb = cuset::test::read_metrics(b);
    ASSERT_GE(ma.size(), from_a + n);
    ASSERT_EQ(mb.size(), n);
    for (size_t i = 0; i < n; ++i) {
        EXPECT_EQ(mb[i]["step"], ma[from_a + i]["step"]);
        const double x = ma[from_a + i]["loss"].get<double>(), y = mb[i]["loss"].get<double>();
        CUSET_EXPECT_NEAR(y, x, kStatRtol * std::abs(x)) << b << " step " << mb[i]["step"];
    }
}

}  // namespace

// ZeRO through the real trainer: 4 ranks at stage 2 match one process at stage 0 on the same
// global batch; every rank wrote its shard of the optimizer state and rank 0 the whole model
// folder; the 4-rank checkpoint resumes on 2 ranks at stage 2 and in one process at stage 0 (the
// shards re-read onto another world size and stage) and continues as the 4-rank run did. fp32,
// eps 1e-3 (see write_config): summation order only, kStatRtol and kWeightTol.
TEST(Distributed, ZeroStage2CheckpointOfFourRanksResumesOnTwoAndOne) {
    std::string dir = scratch_dir("dist-zero");
    std::string cfg = write_config(dir, 4, 2);
    const std::vector<std::string> zero2 = {"--set", "distributed.zero_stage=2", "--set", "distributed.bucket_mb=0.015625"};
    run_ranks(4, cfg, dir, "four", free_port(5), zero2);  // 4 ranks x 1 x 2 = 8 rows per step
    auto ref = run_cuset("--config " + cfg + " --run-name ref --set train.micro_batch_size=4");  // 1 x 4 x 2
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    expect_same_steps(dir + "/ref", dir + "/four", 0, 4);
    CUSET_EXPECT_WITHIN(max_weight_diff(dir + "/ref/checkpoint-0000004", dir + "/four/checkpoint-0000004"), kWeightTol);
    const std::string ck = dir + "/four/checkpoint-0000002";
    for (int r = 0; r < 4; ++r)
        EXPECT_TRUE(fs::exists(ck + "/optimizer-" + std::to_string(r) + "-of-4.safetensors")) << r;
    EXPECT_FALSE(fs::exists(ck + "/optimizer.safetensors"));
    EXPECT_TRUE(fs::exists(ck + "/model.safetensors"));

    for (const char* name : {"two", "one"}) {
        fs::create_directories(dir + "/" + name);
        fs::copy(ck, dir + "/" + name + "/checkpoint-0000002", fs::copy_options::recursive);
    }
    run_ranks(2, cfg, dir, "two", free_port(6),
              {"--resume", "auto", "--set", "train.micro_batch_size=2", "--set", "distributed.zero_stage=2"});
    auto one = run_cuset("--config " + cfg + " --run-name one --resume auto --set train.micro_batch_size=4");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    for (const char* name : {"two", "one"}) {
        expect_same_steps(dir + "/four", dir + "/" + name, 2, 2);
        CUSET_EXPECT_WITHIN(max_weight_diff(dir + "/four/checkpoint-0000004", dir + "/" + name + "/checkpoint-0000004"), kWeightTol) << name;
    }
    // A shard missing: a clear refusal naming it.
    fs::remove(dir + "/one/checkpoint-0000002/optimizer-3-of-4.safetensors");
    auto bad = run_cuset("--config " + cfg + " --run-name one --resume " + dir +
                         "/one/checkpoint-0000002 --set train.micro_batch_size=4");
    EXPECT_EQ(bad.exit_code, 3) << bad.err;
    EXPECT_NE(bad.err.find("optimizer-3-of-4.safetensors is missing"), std::string::npos) << bad.err;
}

// Stage 3 (weights sharded, gathered per layer) with 2 ranks matches stage 0, and a dead rank
// makes the other exit with the collective timeout's clear error.
TEST(Distributed, ZeroStage3MatchesStage0AndADeadRankStopsTheOther) {
    std::string dir = scratch_dir("dist-zero3");
    std::string cfg = write_config(dir, 4, 0);
    run_ranks(2, cfg, dir, "z3", free_port(7), {"--set", "distributed.zero_stage=3"});
    auto ref = run_cuset("--config " + cfg + " --run-name ref --set train.micro_batch_size=2");
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    expect_same_steps(dir + "/ref", dir + "/z3", 0, 4);
    CUSET_EXPECT_WITHIN(max_weight_diff(dir + "/ref/checkpoint-0000004", dir + "/z3/checkpoint-0000004"), kWeightTol);

    std::string long_cfg = write_config(dir, 400, 0);
    int port = free_port(8);
    const std::vector<std::string> extra = {"--set", "distributed.timeout_s=5", "--set", "distributed.zero_stage=3"};
    pid_t r0 = spawn_rank(long_cfg, "dead", 0, 2, port, dir + "/d0.log", extra);
    pid_t r1 = spawn_rank(long_cfg, "dead", 1, 2, port, dir + "/d1.log", extra);
    auto t0 = std::chrono::steady_clock::now();
    while (cuset::test::read_metrics(dir + "/dead").size() < 2 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_GE(cuset::test::read_metrics(dir + "/dead").size(), 2u) << read_file(dir + "/d0.log");
    kill(r1, SIGKILL);
    wait_exit(r1);
    auto t1 = std::chrono::steady_clock::now();
    int e0 = wait_exit(r0);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    EXPECT_EQ(e0, 4) << read_file(dir + "/d0.log");
    EXPECT_NE(read_file(dir + "/d0.log").find("distributed: rank 0"), std::string::npos) << read_file(dir + "/d0.log");
    EXPECT_LT(secs, 60.0);
}

// The dry run's per-rank plan from config.json alone, for Qwen2.5-Coder-7B (7,615,616,512
// parameters; untied embedding and lm_head 2 x 152064 x 3584 plus the final norm 3584 stay whole
// at stage 3), worked by hand in bf16 per parameter: stage 0 = 2 + 2 + 4 + 8 = 16 B -> 121.85 GB (printed 121.8);
// on 8 ranks stage 1 = 2 + 2 + (4 + 4 + 8) / 8 = 6 B -> 45.69; stage 2 = 2 + 16 / 8 = 4 B -> 30.46;
// stage 3 = 2 x whole + 2 x rest / 8 + 16 / 8 = 19.04; stage 3 + offload drops the 12 / 8 B of
// masters and moments: 7.62 (printed 7.6).
TEST(Distributed, DryRunPrintsTheZeroPlanPerRank) {
    const std::string dir = scratch_dir("zero-dry-run");
    fs::create_directories(dir + "/qwen7b");
    write_file(dir + "/qwen7b/config.json",
               R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584,
                   "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
                   "num_key_value_heads": 4, "vocab_size": 152064, "rms_norm_eps": 1e-06,
                   "rope_theta": 1000000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
                   "max_position_embeddings": 32768, "hidden_act": "silu"})");
    auto r = run_cuset("--config configs/qwen7b-8x24gb.yaml --dry-run --set model.path=" + dir + "/qwen7b");
    const std::string all = r.out + r.err;
    EXPECT_NE(all.find("memory plan per rank on 8 ranks (GB): stage 0 121.8, stage 1 45.7, stage 2 30.5, stage 3 19.0; "
                       "stage 3 + offload 7.6"), std::string::npos) << all;
    // One process (no torchrun): the configured stage 3 + offload over 1 rank is everything.
    EXPECT_NE(all.find("memory plan per rank (ZeRO stage 3, optimizer offloaded, 1 rank(s))"), std::string::npos) << all;
}

// LoRA on ZeRO stage 2: only the adapters are sharded (the frozen base stays whole); 2 ranks
// reach stage 0's losses (fp32, summation order only: kStatRtol) and save a PEFT adapter.
TEST(Distributed, ZeroStage2WithLoraMatchesStage0) {
    std::string dir = scratch_dir("dist-zero-lora");
    std::string cfg = write_config(dir, 3, 0);
    const std::vector<std::string> lora = {"--set", "model.lora.enabled=true"};
    std::vector<std::string> z2 = lora;
    z2.insert(z2.end(), {"--set", "distributed.zero_stage=2"});
    run_ranks(2, cfg, dir, "z0", free_port(9), lora);
    run_ranks(2, cfg, dir, "z2", free_port(10), z2);
    expect_same_steps(dir + "/z0", dir + "/z2", 0, 3);
    EXPECT_TRUE(fs::exists(dir + "/z2/checkpoint-0000003/adapter_model.safetensors"));
    EXPECT_TRUE(fs::exists(dir + "/z2/checkpoint-0000003/optimizer-1-of-2.safetensors"));
}
