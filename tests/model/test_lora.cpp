// LoRA (model/lora.h) against PyPI's peft (tests/golden/lora.py, tests/golden/check_lora.py):
// logits and every adapter gradient equal PEFT's on the golden random Llama/Qwen2/Qwen3 models
// with the same random non-zero adapters (with and without activation checkpointing); an
// adapter cuset saves loads with PeftModel.from_pretrained and gives cuset's logits; merging (in
// process and `cuset-train export --merge`) equals merge_and_unload(); a fresh adapter is the
// identity and is initialised as PEFT does; the PEFT config round trip and its refusals; the
// memory arithmetic (Qwen2.5-Coder-7B / 32B shapes, `--dry-run`); a LoRA run through the binary
// resumes bit-identically (dropout, activation checkpointing, accumulation), its checkpoints hold
// only the adapter, model.lora.path starts from an adapter, and two Gloo ranks train the same
// adapter as one process with the same global batch.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cuset/core/error.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "cuset/model/model_config.h"
#include "cuset/model/safetensors_torch.h"
#include "model/model_rounding.h"
#include "tensor_check.h"
#include "test_util.h"

using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kModelGolden = std::string(CUSET_TEST_WORK) + "/golden/model";
const std::string kLoraGolden = std::string(CUSET_TEST_WORK) + "/golden/lora";

std::vector<std::string> cases() { return cuset::test::lines_of(kLoraGolden + "/cases.txt"); }

std::map<std::string, at::Tensor> load_st(const std::string& path) { return cuset::safetensors_load(path, at::kCPU); }

// fp32 tolerances, per tensor and relative to its scale (an element near 0 is a difference of
// terms of that scale), from the decoder's first-order bound for two implementations
// (model_rounding.h), doubled: every adapted projection adds beside itself the adapter's two
// products of the same lengths (x A^T over the projection's input, then B over r). Logits within
// ~2.6e-4 of max|z|, adapter gradients within ~5.6e-4 of the tensor's max|g| (seen: 1.3e-6 and
// 1.2e-5; adapter gradients are sums over every token, vocabulary entry and (for A) the
// projection's output of terms up to ~10^2, |g| up to ~5e2, and PEFT's own fp32 gradients are as
// far from its fp64 ones). A wrong scale (alpha / r vs alpha / sqrt(r)), a transposed or missing
// adapter, or dropout in the wrong place moves values by 1e-2 relative or more.
cuset::test::Closeness violation(const cuset::ModelConfig& c, const at::Tensor& a, const at::Tensor& b) {
    const double scale = b.detach().abs().max().item<double>();
    return cuset::test::closeness(a, b, 0.0, 2 * cuset::test::logits_rel_of_max(c, b.size(1)) * scale);
}

cuset::test::Closeness grad_violation(const cuset::ModelConfig& mc, int64_t nb, int64_t nt, const at::Tensor& a,
                                      const at::Tensor& b, const std::string& name) {
    cuset::test::Closeness c;
    c.empty = false;
    c.worst = name;
    c.max_abs = c.err = cuset::test::max_abs_diff(a.detach(), b.detach());
    c.bound = 2 * cuset::test::grads_rel_of_max(mc, nb, nt) * b.detach().abs().max().item<double>();
    return c;
}

cuset::Decoder model_with_golden_adapter(const std::string& name) {
    cuset::Decoder m = cuset::model_load(kModelGolden + "/" + name + "/model", at::kFloat, at::kCPU);
    const std::string adapter = kLoraGolden + "/" + name + "/adapter";
    cuset::lora_attach(m, cuset::lora_read_config(adapter), at::detail::getDefaultCPUGenerator());
    cuset::lora_load_weights(m, adapter);
    return m;
}

std::string peft_checker(const std::string& args) {
    return std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/golden/check_lora.py " + args;
}

}  // namespace

// ---------------------------------------------------------------- parity with peft

TEST(LoraParity, LogitsAndAdapterGradientsEqualPeft) {
    ASSERT_FALSE(cases().empty()) << "no golden LoRA cases in " << kLoraGolden;
    for (const std::string& name : cases()) {
        SCOPED_TRACE(name);
        auto in = load_st(kModelGolden + "/" + name + "/inputs.safetensors");
        auto base_ref = load_st(kModelGolden + "/" + name + "/ref.safetensors");
        auto ref = load_st(kLoraGolden + "/" + name + "/ref.safetensors");
        for (bool ckpt : {false, true}) {
            SCOPED_TRACE(ckpt ? "activation checkpointing" : "plain");
            cuset::Decoder m = model_with_golden_adapter(name);
            m->set_activation_checkpointing(ckpt);
            auto adapters = cuset::lora_adapters(m);
            ASSERT_FALSE(adapters.empty());
            for (const char* batch : {"plain", "pad"}) {
                SCOPED_TRACE(batch);
                at::Tensor ids = in[std::string(batch) + "_ids"];
                at::Tensor mask = std::string(batch) == "pad" ? in["pad_mask"] : at::Tensor();
                at::Tensor keep = (mask.defined() ? mask : at::ones_like(ids)).to(at::kBool).unsqueeze(-1);  // [B,T,1]
                for (auto& [n, t] : m->trainable_parameters())
                    if (t.grad().defined()) t.mutable_grad().zero_();
                at::Tensor logits = m->logits(m->forward(ids, mask)).masked_fill(keep.logical_not(), 0.0);
                at::Tensor loss = (logits * in["w_" + std::string(batch)] * keep).sum();
                loss.backward();
                const cuset::test::Closeness lc = violation(m->config(), logits, ref[std::string(batch) + ".logits"]);
                CUSET_EXPECT_WITHIN(lc.err, lc.bound) << "logits";
                if (!ckpt) std::printf("[%s %s] logits max abs err %.3g\n", name.c_str(), batch, lc.max_abs);
                // The adapters matter: PEFT's logits are far from the base model's.
                const double moved =
                    cuset::test::max_abs_diff(ref[std::string(batch) + ".logits"], base_ref[std::string(batch) + ".logits"]);
                EXPECT_GT(moved, 0.1);
                cuset::test::Closeness gc;
                for (auto& [module, a] : adapters) {
                    for (auto& [pname, t] : a->parameters()) {
                        const std::string key = std::string(batch) + ".grad." + cuset::lora_tensor_name(module, pname);
                        ASSERT_TRUE(ref.count(key)) << key;
                        ASSERT_TRUE(t.grad().defined()) << key;
                        gc.merge(grad_violation(m->config(), ids.size(0), ids.size(1), t.grad(), ref[key], key));
                    }
                }
                CUSET_EXPECT_WITHIN(gc.err, gc.bound) << "worst gradient " << gc.worst;
                if (!ckpt) std::printf("[%s %s] %zu adapter gradients, max abs err %.3g\n", name.c_str(), batch,
                                       2 * adapters.size(), gc.max_abs);
                // The base is frozen: no gradient anywhere in it.
                for (auto& [n, p] : cuset::hf_named_parameters(m)) {
                    EXPECT_FALSE(p.requires_grad()) << n;
                    EXPECT_FALSE(p.grad().defined()) << n;
                }
            }
        }
    }
}

TEST(LoraParity, MergeEqualsPeftMergeAndUnload) {
    for (const std::string& name : cases()) {
        SCOPED_TRACE(name);
        auto in = load_st(kModelGolden + "/" + name + "/inputs.safetensors");
        auto ref = load_st(kLoraGolden + "/" + name + "/ref.safetensors");
        cuset::Decoder m = model_with_golden_adapter(name);
        cuset::lora_merge(m);
        EXPECT_TRUE(cuset::lora_adapters(m).empty());
        cuset::test::Closeness wc;
        for (auto& [n, p] : cuset::hf_named_parameters(m)) {
            ASSERT_TRUE(ref.count("merged." + n)) << n;
            // W + s B A: per element a sum over r of products, (r + 1) u of |W| + s |B| |A|, in
            // both implementations; bounded here by the tensor's scale (seen: bit-identical).
            const double r1 = static_cast<double>(cuset::lora_read_config(kLoraGolden + "/" + name + "/adapter").r) + 1;
            wc.merge(cuset::test::closeness(p, ref["merged." + n], 0.0,
                                            2 * r1 * std::ldexp(1.0, -24) * 2 * ref["merged." + n].abs().max().item<double>(), {}, n));
        }
        CUSET_EXPECT_WITHIN(wc.err, wc.bound) << "worst merged weight " << wc.worst;
        at::NoGradGuard no_grad;
        const cuset::test::Closeness lc = violation(m->config(), m->logits(m->forward(in["plain_ids"])), ref["plain.merged_logits"]);
        CUSET_EXPECT_WITHIN(lc.err, lc.bound) << "merged logits";
        std::printf("[%s] merged weights max abs err %.3g, merged logits %.3g\n", name.c_str(), wc.max_abs, lc.max_abs);
    }
}

TEST(LoraParity, ExportMergeMatchesPeft) {
    const std::string name = cases().at(0);
    const std::string dir = scratch_dir("lora-export");
    const std::string adapter = kLoraGolden + "/" + name + "/adapter";
    const std::string base = kModelGolden + "/" + name + "/model";
    auto r = run_cuset("export --merge --model " + adapter + " --base " + base + " --out " + dir + "/merged --dtype float32");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The merged weights: W + s B A in fp32 on both sides, per element a sum over r of products,
    // (r + 1) u (|W| + s |B| |A|) ~ 1e-6 each for these O(1) weights: 1e-5 (seen: identical).
    auto c = run_command(peft_checker("merged " + base + " " + adapter + " " + dir + "/merged 1e-5"));
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    std::printf("%s", c.out.c_str());
    // bf16 export: the merged weights rounded once.
    r = run_cuset("export --merge --model " + adapter + " --base " + base + " --out " + dir + "/bf16 --dtype bfloat16");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto bf = load_st(dir + "/bf16");
    const std::string k = "model.layers.0.self_attn.q_proj.weight";
    ASSERT_TRUE(bf.count(k));
    EXPECT_EQ(bf[k].scalar_type(), at::kBFloat16);
    // The bf16 export is the fp32 merge (checked against PEFT's just above) rounded once to bf16:
    // bit for bit the fp32 export cast to bf16, which puts it within one bf16 rounding (2^-8
    // relative) of PEFT's fp32 merge.
    auto f32 = load_st(dir + "/merged");
    ASSERT_TRUE(f32.count(k));
    for (const auto& [tn, t] : bf) {
        ASSERT_TRUE(f32.count(tn)) << tn;
        EXPECT_TRUE(at::equal(t, f32.at(tn).to(at::kBFloat16))) << tn;
    }
    // Without --merge, --base is refused; a folder without adapter_config.json is not an adapter.
    EXPECT_NE(run_cuset("export --model " + base + " --base " + base + " --out " + dir + "/x").exit_code, 0);
    auto bad = run_cuset("export --merge --model " + base + " --out " + dir + "/x");
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("adapter_config.json"), std::string::npos) << bad.err;
}

TEST(LoraParity, SavedAdapterLoadsInPeftWithTheSameLogits) {
    int i = 0;
    for (const std::string& name : cases()) {
        SCOPED_TRACE(name);
        const std::string dir = scratch_dir("lora-saved-" + name);
        const std::string base = kModelGolden + "/" + name + "/model";
        cuset::Decoder m = cuset::model_load(base, at::kFloat, at::kCPU);
        cuset::LoraOptions o;
        o.r = 3 + i;
        o.alpha = 5.0 + i;
        o.rslora = (i % 2) == 1;
        if (i == 2) o.target_modules = {"k_proj", "o_proj", "up_proj"};
        ++i;
        at::Generator gen = at::detail::createCPUGenerator(100 + i);
        cuset::lora_attach(m, o, gen);
        {
            at::NoGradGuard no_grad;
            for (auto& [module, a] : cuset::lora_adapters(m)) a->B.normal_(0.0, 0.3, gen);  // B = 0 would hide every slip
        }
        cuset::lora_save(m, o, dir, base);
        auto in = load_st(kModelGolden + "/" + name + "/inputs.safetensors");
        at::NoGradGuard no_grad;
        at::Tensor logits = m->logits(m->forward(in["plain_ids"]));
        cuset::safetensors_save(dir + "/logits.safetensors", {{"input_ids", in["plain_ids"]}, {"logits", logits}});
        // PEFT's logits against cuset's: violation()'s bound, the largest |z| as the scale.
        const double atol = violation(m->config(), logits, logits).bound;
        char atol_text[32];
        std::snprintf(atol_text, sizeof atol_text, "%.6g", atol);
        auto c = run_command(peft_checker("adapter " + base + " " + dir + " " + dir + "/logits.safetensors " + atol_text));
        EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
        std::printf("[%s] %s", name.c_str(), c.out.c_str());
    }
}

// ---------------------------------------------------------------- unit behaviour

TEST(Lora, FreshAdapterIsTheIdentityAndInitialisedAsPeft) {
    const std::string name = "llama_linear";
    cuset::Decoder m = cuset::model_load(kModelGolden + "/" + name + "/model", at::kFloat, at::kCPU);
    auto in = load_st(kModelGolden + "/" + name + "/inputs.safetensors");
    at::Tensor before;
    {
        at::NoGradGuard g;
        before = m->logits(m->forward(in["plain_ids"]));
    }
    cuset::LoraOptions o;
    o.r = 8;
    at::Generator gen = at::detail::createCPUGenerator(5);
    cuset::lora_attach(m, o, gen);
    EXPECT_THROW(cuset::lora_attach(m, o, gen), cuset::UsageError);
    auto adapters = cuset::lora_adapters(m);
    EXPECT_EQ(adapters.size(), 7u * m->config().n_layer);
    for (auto& [module, a] : adapters) {
        const double bound = 1.0 / std::sqrt(static_cast<double>(a->A.size(1)));  // kaiming_uniform_(a=sqrt(5))
        EXPECT_EQ(a->A.sizes(), (std::vector<int64_t>{8, a->A.size(1)}));
        EXPECT_EQ(a->A.scalar_type(), at::kFloat);
        EXPECT_LE(a->A.abs().max().item<double>(), bound);
        EXPECT_GT(a->A.abs().max().item<double>(), 0.8 * bound);
        // The spread of 8 x in uniform draws (a statistical bound on a seeded generator, not measured).
        EXPECT_NEAR(a->A.std().item<double>(), bound / std::sqrt(3.0), 0.15 * bound);
        EXPECT_EQ(a->B.abs().max().item<double>(), 0.0);
        EXPECT_DOUBLE_EQ(a->scale, 32.0 / 8);
    }
    // Trainable: exactly the adapters, named "<module>.lora_A.weight"; the base frozen.
    auto trainable = m->trainable_parameters();
    EXPECT_EQ(trainable.size(), 2 * adapters.size());
    EXPECT_EQ(trainable[0].first, "model.layers.0.self_attn.q_proj.lora_A.weight");
    at::NoGradGuard g;
    EXPECT_TRUE(at::equal(m->logits(m->forward(in["plain_ids"])), before));
    // The same generator state gives the same adapter.
    cuset::Decoder m2 = cuset::model_load(kModelGolden + "/" + name + "/model", at::kFloat, at::kCPU);
    cuset::lora_attach(m2, o, at::detail::createCPUGenerator(5));
    EXPECT_TRUE(at::equal(cuset::lora_adapters(m2)[3].second->A, adapters[3].second->A));
    o.rslora = true;
    EXPECT_DOUBLE_EQ(o.scale(), 32.0 / std::sqrt(8.0));
}

TEST(Lora, DropoutOnlyInTrainingMode) {
    cuset::Decoder m = model_with_golden_adapter("llama_linear");
    auto in = load_st(kModelGolden + "/llama_linear/inputs.safetensors");
    for (auto& [module, a] : cuset::lora_adapters(m)) a->dropout = 0.5;
    at::NoGradGuard g;
    m->eval();
    at::Tensor e1 = m->logits(m->forward(in["plain_ids"])), e2 = m->logits(m->forward(in["plain_ids"]));
    EXPECT_TRUE(at::equal(e1, e2));
    m->train();
    at::Tensor t1 = m->logits(m->forward(in["plain_ids"]));
    EXPECT_FALSE(at::equal(t1, e1));
}

TEST(Lora, PeftConfigRoundTripAndRefusals) {
    const std::string dir = scratch_dir("lora-config");
    cuset::LoraOptions o;
    o.r = 12;
    o.alpha = 7.5;
    o.dropout = 0.05;
    o.rslora = true;
    o.init = "gaussian";
    o.target_modules = {"v_proj", "down_proj"};
    write_file(dir + "/adapter_config.json", cuset::lora_config_json(o, "some/base"));
    json j = json::parse(read_file(dir + "/adapter_config.json"));
    EXPECT_EQ(j["peft_type"], "LORA");
    EXPECT_EQ(j["task_type"], "CAUSAL_LM");
    EXPECT_EQ(j["bias"], "none");
    EXPECT_EQ(j["base_model_name_or_path"], "some/base");
    EXPECT_EQ(j["r"], 12);
    EXPECT_EQ(j["lora_alpha"], 7.5);
    EXPECT_EQ(j["use_rslora"], true);
    EXPECT_EQ(cuset::lora_base_model(dir), "some/base");
    cuset::LoraOptions back = cuset::lora_read_config(dir);
    EXPECT_EQ(back.r, 12);
    EXPECT_EQ(back.alpha, 7.5);
    EXPECT_EQ(back.dropout, 0.05);
    EXPECT_TRUE(back.rslora);
    EXPECT_EQ(back.init, "gaussian");
    EXPECT_EQ(back.target_modules, o.target_modules);
    auto refused = [&](const std::string& key, const json& value) {
        json k = j;
        k[key] = value;
        write_file(dir + "/adapter_config.json", k.dump());
        EXPECT_THROW(cuset::lora_read_config(dir), cuset::InputError) << key;
    };
    refused("peft_type", "IA3");
    refused("use_dora", true);
    refused("bias", "all");
    refused("target_modules", json::array({"q_proj", "lm_head"}));
    refused("target_modules", ".*proj");
    refused("rank_pattern", json{{"q_proj", 4}});
    refused("layers_to_transform", json::array({0}));
    EXPECT_THROW(cuset::lora_read_config(dir + "/none"), cuset::InputError);
    // Tensors that do not fit the model are listed.
    cuset::Decoder other = cuset::model_load(kModelGolden + "/llama_linear/model", at::kFloat, at::kCPU);
    cuset::LoraOptions r2;
    r2.r = 2;
    cuset::lora_attach(other, r2, at::detail::createCPUGenerator(1));
    try {
        cuset::lora_load_weights(other, kLoraGolden + "/llama_linear/adapter");
        ADD_FAILURE() << "no error";
    } catch (const cuset::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("lora_A.weight"), std::string::npos) << e.what();
    }
}

// Qwen2.5-Coder-7B-Instruct's and Qwen2.5-Coder-32B-Instruct's config.json (the shapes only).
const char* kQwen7b = R"({"architectures":["Qwen2ForCausalLM"],"hidden_act":"silu","hidden_size":3584,
  "intermediate_size":18944,"max_position_embeddings":32768,"max_window_layers":28,"model_type":"qwen2",
  "num_attention_heads":28,"num_hidden_layers":28,"num_key_value_heads":4,"rms_norm_eps":1e-06,
  "rope_theta":1000000.0,"sliding_window":131072,"tie_word_embeddings":false,"torch_dtype":"bfloat16",
  "use_sliding_window":false,"vocab_size":152064,"eos_token_id":151645,"bos_token_id":151643})";
const char* kQwen32b = R"({"architectures":["Qwen2ForCausalLM"],"hidden_act":"silu","hidden_size":5120,
  "intermediate_size":27648,"max_position_embeddings":32768,"max_window_layers":70,"model_type":"qwen2",
  "num_attention_heads":40,"num_hidden_layers":64,"num_key_value_heads":8,"rms_norm_eps":1e-06,
  "rope_theta":1000000.0,"sliding_window":131072,"tie_word_embeddings":false,"torch_dtype":"bfloat16",
  "use_sliding_window":false,"vocab_size":152064,"eos_token_id":151645,"bos_token_id":151643})";

TEST(Lora, MemoryArithmeticQwen7bFits24GbAnd32bDoesNot) {
    cuset::LoraOptions o;  // r 16 on all seven projections
    cuset::ModelConfig c7 = cuset::model_config_from_json(json::parse(kQwen7b), "qwen7b");
    cuset::ModelConfig c32 = cuset::model_config_from_json(json::parse(kQwen32b), "qwen32b");
    // The published parameter counts (safetensors index totals / 2 bytes).
    EXPECT_EQ(cuset::lora_base_numel(c7), 7615616512);
    EXPECT_EQ(cuset::lora_base_numel(c32), 32763876352);
    // r (in + out) per projection: 28 layers x 16 x (2*7168 + 2*4096 + 3*22528) = 40.37M.
    EXPECT_EQ(cuset::lora_adapter_numel(c7, o), 28LL * 16 * (2 * 7168 + 2 * 4096 + 3 * 22528));
    cuset::TrainingMemory m7 = cuset::training_memory(c7, at::kBFloat16, &o);
    EXPECT_DOUBLE_EQ(m7.weights, 7615616512.0 * 2);
    EXPECT_DOUBLE_EQ(m7.adapters + m7.gradients + m7.optimizer, 16.0 * m7.n_trainable);
    const double act7 = cuset::activation_memory_checkpointed(c7, at::kBFloat16, 1, 4096, 1024);
    std::printf("Qwen2.5-Coder-7B LoRA r16: resident %.2f GB (frozen %.2f, adapters+state %.2f), activations %.2f GB, "
                "total %.2f GB\n", m7.total() / 1e9, m7.weights / 1e9, (m7.total() - m7.weights) / 1e9, act7 / 1e9,
                (m7.total() + act7) / 1e9);
    EXPECT_LT(m7.total() + act7, 0.97 * 24e9);  // the trainer's refusal margin
    cuset::TrainingMemory m32 = cuset::training_memory(c32, at::kBFloat16, &o);
    const double act32 = cuset::activation_memory_checkpointed(c32, at::kBFloat16, 1, 4096, 1024);
    std::printf("Qwen2.5-Coder-32B LoRA r16: resident %.2f GB, activations %.2f GB, total %.2f GB\n",
                m32.total() / 1e9, act32 / 1e9, (m32.total() + act32) / 1e9);
    EXPECT_GT(m32.total(), 24e9);
    EXPECT_LT(m32.total() + act32, 0.97 * 80e9);  // at the edge of an 80 GB GPU
    // A full fine-tune of 7B: 16 bytes a parameter before activations.
    cuset::TrainingMemory f7 = cuset::training_memory(c7, at::kBFloat16, nullptr);
    EXPECT_DOUBLE_EQ(f7.total(), 7615616512.0 * 16);
}

TEST(Lora, DryRunPrintsTheEstimateFromConfigJsonAlone) {
    const std::string dir = scratch_dir("lora-dry-run");
    fs::create_directories(dir + "/qwen7b");
    write_file(dir + "/qwen7b/config.json", kQwen7b);
    auto r = run_cuset("--config " + std::string(CUSET_SOURCE_DIR) + "/configs/qwen7b-lora.yaml --dry-run --set model.path=" +
                       dir + "/qwen7b");
    const std::string all = r.out + r.err;
    EXPECT_NE(all.find("LoRA r 16 on 7 projection kinds"), std::string::npos) << all;
    EXPECT_NE(all.find("fits one 24 GB GPU"), std::string::npos) << all;
    // There are no weights: the dry run then stops at reading them.
    EXPECT_NE(r.exit_code, 0);
    write_file(dir + "/qwen7b/config.json", kQwen32b);
    r = run_cuset("--config " + std::string(CUSET_SOURCE_DIR) + "/configs/qwen7b-lora.yaml --dry-run --set model.path=" +
                  dir + "/qwen7b");
    EXPECT_NE((r.out + r.err).find("needs an 80 GB GPU"), std::string::npos) << r.out << r.err;
}

// ---------------------------------------------------------------- through the trainer

namespace {

// The tiny run of `method` with LoRA r 4 (alpha 8, dropout 0.1) and activation checkpointing,
// starting from the adapter `adapter` when it is not empty.
std::string write_lora_config(const std::string& dir, const std::string& method, int max_steps, int every,
                              const std::string& adapter = "") {
    cuset::test::ConfigKeys keys = {{"model.activation_checkpointing", "true"},
                                    {"model.lora.enabled", "true"},
                                    {"model.lora.r", "4"},
                                    {"model.lora.alpha", "8"},
                                    {"model.lora.dropout", "0.1"},
                                    {"objective.method", method},
                                    {"train.max_steps", std::to_string(max_steps)},
                                    {"checkpoint.every", std::to_string(every)}};
    if (!adapter.empty()) keys.emplace_back("model.lora.path", adapter);
    return cuset::test::write_tiny_run_config(dir + "/" + method + ".yaml", dir, keys);
}

}  // namespace

TEST(LoraTrainer, ResumeIsBitIdenticalAndCheckpointsHoldTheAdapter) {
    const std::string dir = scratch_dir("lora-resume");
    const std::string cfg = write_lora_config(dir, "cuset", 6, 3);
    auto a = run_cuset("--config " + cfg + " --run-name a");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_NE(a.err.find("fp32 LoRA adapters + gradients + AdamW moments"), std::string::npos) << a.err;
    const std::string ck = dir + "/a/checkpoint-0000006";
    EXPECT_TRUE(fs::exists(ck + "/adapter_config.json"));
    EXPECT_TRUE(fs::exists(ck + "/adapter_model.safetensors"));
    EXPECT_FALSE(fs::exists(ck + "/model.safetensors")) << "a LoRA checkpoint holds the adapter, not the base";
    auto opt = load_st(ck + "/optimizer.safetensors");
    for (auto& [k, t] : opt) {
        if (k.rfind("rng.", 0) == 0) continue;
        EXPECT_NE(k.find(".lora_"), std::string::npos) << "optimizer state for a frozen tensor: " << k;
        EXPECT_EQ(k.find(".master"), std::string::npos) << k;
    }
    // The adapter trained: B moved away from 0.
    auto ad = load_st(ck + "/adapter_model.safetensors");
    EXPECT_GT(ad.at("base_model.model.model.layers.0.mlp.down_proj.lora_B.weight").abs().max().item<double>(), 0.0);
    fs::create_directories(dir + "/b");
    fs::copy(dir + "/a/checkpoint-0000003", dir + "/b/checkpoint-0000003", fs::copy_options::recursive);
    auto b = run_cuset("--config " + cfg + " --run-name b --resume auto");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    auto ma = cuset::test::read_metrics(dir + "/a");
    auto mb = cuset::test::read_metrics(dir + "/b");
    ASSERT_EQ(ma.size(), 6u);
    ASSERT_EQ(mb.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(mb[i]["loss"].get<double>(), ma[i + 3]["loss"].get<double>()) << "step " << ma[i + 3]["step"];
        EXPECT_EQ(mb[i]["grad_norm"].get<double>(), ma[i + 3]["grad_norm"].get<double>());
    }
    EXPECT_TRUE(read_file(ck + "/adapter_model.safetensors") ==
                read_file(dir + "/b/checkpoint-0000006/adapter_model.safetensors"))
        << "final adapters differ";
    EXPECT_TRUE(cuset::test::safetensors_without_save_id(ck + "/optimizer.safetensors") == cuset::test::safetensors_without_save_id(dir + "/b/checkpoint-0000006/optimizer.safetensors"));
    // The checkpoint is a PEFT adapter of the base.
    auto c = run_command(peft_checker("adapter " + cuset::test::tiny_model_dir() + " " + ck + " /nonexistent 0"));
    EXPECT_NE(c.out.find("ok   adapter tensors loaded exactly"), std::string::npos) << c.out << c.err;
    // model.lora.path starts a new run from it: its first evaluation is run a's last.
    const std::string cfg2 = write_lora_config(dir, "sft", 1, 0, ck);
    auto s = run_cuset("--config " + cfg2 + " --run-name from-adapter");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    auto ev = [](const std::string& run) {
        std::vector<json> out;
        std::ifstream in(run + "/metrics.jsonl");
        for (std::string line; std::getline(in, line);) {
            json j = json::parse(line);
            if (j.contains("eval_ce")) out.push_back(j);
        }
        return out;
    };
    auto ea = ev(dir + "/a"), es = ev(dir + "/from-adapter");
    ASSERT_FALSE(ea.empty());
    ASSERT_FALSE(es.empty());
    EXPECT_EQ(es.front()["eval_ce"].get<double>(), ea.back()["eval_ce"].get<double>());
}

TEST(LoraTrainer, BadTargetModuleIsAConfigError) {
    const std::string dir = scratch_dir("lora-bad-target");
    const std::string cfg = write_lora_config(dir, "sft", 1, 0);
    auto r = run_cuset("--config " + cfg + " --run-name x --set model.lora.target_modules=q_proj,qkv_proj");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("model.lora.target_modules"), std::string::npos) << r.err;
}

// Two Gloo ranks on localhost (as tests/train/test_distributed.cpp starts them) against one
// process with the same global batch: the same adapter on both ranks (A from train.seed alone),
// only the adapters' gradients all-reduced, the same losses and adapters up to fp32 summation order.
TEST(LoraTrainer, TwoGlooRanksMatchOneProcess) {
    const std::string dir = scratch_dir("lora-two-ranks");
    std::string cfg = write_lora_config(dir, "cuset", 3, 0);
    std::string text = read_file(cfg);
    text.replace(text.find("dropout: 0.1"), 12, "dropout: 0.0");  // per-rank dropout streams differ from one process's
    text.replace(text.find("micro_batch_size: 2"), 19, "micro_batch_size: 1");
    text.replace(text.find("  eval: tests/fixtures/mini_sft.jsonl\n"), 38, "  eval: \"\"\n");
    // eps 1e-3 as in test_distributed.cpp: near-zero gradients then give smooth updates, not
    // +-lr steps whose sign the summation order decides.
    text.replace(text.find("  seed: 7\n"), 10, "  seed: 7\n  eps: 1.0e-3\n");
    text += "distributed:\n  timeout_s: 20\n";
    write_file(cfg, text);
    const int port = cuset::test::free_port(7);
    std::vector<pid_t> pids;
    for (int rank = 0; rank < 2; ++rank) {
        pid_t pid = fork();
        if (pid == 0) {
            setenv("RANK", std::to_string(rank).c_str(), 1);
            setenv("WORLD_SIZE", "2", 1);
            setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
            setenv("MASTER_ADDR", "127.0.0.1", 1);
            setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
            std::string log = dir + "/two-r" + std::to_string(rank) + ".log";
            if (!freopen(log.c_str(), "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(126);
            std::vector<std::string> args = {CUSET_BINARY, "--config", cfg, "--run-name", "two"};
            std::vector<char*> argv;
            for (auto& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(CUSET_BINARY, argv.data());
            _exit(127);
        }
        pids.push_back(pid);
    }
    for (int rank = 1; rank >= 0; --rank) {
        int status = 0;
        waitpid(pids[rank], &status, 0);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << read_file(dir + "/two-r" + std::to_string(rank) + ".log");
    }
    auto one = run_cuset("--config " + cfg + " --run-name one --set train.micro_batch_size=2");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    auto m2 = cuset::test::read_metrics(dir + "/two"), m1 = cuset::test::read_metrics(dir + "/one");
    ASSERT_EQ(m2.size(), 3u);
    ASSERT_EQ(m1.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        const double a = m2[i]["loss"].get<double>(), b = m1[i]["loss"].get<double>();
        // fp32, the order of sums only: test_distributed's kStatRtol (a loss's per-token NLLs
        // carry ~50 u of reordering per run on this 32-wide model; two runs, the step's sums).
        CUSET_EXPECT_NEAR(a, b, 1e-5 * std::abs(b)) << "step " << i + 1;
    }
    auto a2 = load_st(dir + "/two/checkpoint-0000003/adapter_model.safetensors");
    auto a1 = load_st(dir + "/one/checkpoint-0000003/adapter_model.safetensors");
    ASSERT_EQ(a2.size(), a1.size());
    double worst = 0;
    for (auto& [k, t] : a1) worst = std::max(worst, cuset::test::max_abs_diff(a2.at(k), t));
    // test_distributed's kWeightTol (eps 1e-3: lr / eps = 10, three steps of ~50 u gradient rounding).
    CUSET_EXPECT_WITHIN(worst, 1e-5);
    std::printf("two ranks vs one process: adapters max abs diff %.3g\n", worst);
}
