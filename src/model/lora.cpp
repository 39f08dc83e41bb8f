// LoRA adapters (PEFT's LoraLayer / Linear semantics), their PEFT files, merging, and the
// training-state memory arithmetic.
#include "cuset/model/lora.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/model/safetensors_torch.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kAllTargets = {"q_proj", "k_proj", "v_proj", "o_proj",
                                              "gate_proj", "up_proj", "down_proj"};

std::string last_part(const std::string& module) { return module.substr(module.rfind('.') + 1); }

bool targeted(const LoraOptions& o, const std::string& module) {
    const std::string p = last_part(module);
    for (const std::string& t : o.target_modules)
        if (t == p) return true;
    return false;
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw RuntimeFailure("cannot write '" + path + "'");
}

}  // namespace

double LoraOptions::scale() const {
    return rslora ? alpha / std::sqrt(static_cast<double>(r)) : alpha / static_cast<double>(r);
}

LoraAdapter::LoraAdapter(int64_t in, int64_t out, const LoraOptions& o, c10::Device device,
                         const torch::nn::Module* owner_module)
    : scale(o.scale()), dropout(o.dropout), owner(owner_module) {
    auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
    A = at::empty({o.r, in}, opts);
    B = at::zeros({out, o.r}, opts);
}

at::Tensor LoraAdapter::forward(const at::Tensor& x) {
    at::Tensor h = x.to(at::kFloat);  // [..., in] fp32 (PEFT casts the input to lora_A's dtype)
    if (dropout > 0 && owner != nullptr && owner->is_training()) h = at::dropout(h, dropout, /*train=*/true);
    at::Tensor y = at::linear(at::linear(h, A), B) * scale;  // [..., r] -> [..., out]
    return y.to(x.scalar_type());
}

std::vector<std::pair<std::string, at::Tensor>> LoraAdapter::parameters() const {
    return {{"lora_A.weight", A}, {"lora_B.weight", B}};
}

void lora_attach(Decoder& model, const LoraOptions& o, at::Generator gen) {
    if (o.r < 1) throw UsageError("LoRA rank must be at least 1");
    for (const std::string& t : o.target_modules)
        if (std::find(kAllTargets.begin(), kAllTargets.end(), t) == kAllTargets.end())
            throw UsageError("LoRA target module '" + t + "' is not one of q_proj, k_proj, v_proj, o_proj, "
                             "gate_proj, up_proj, down_proj");
    if (o.init != "kaiming" && o.init != "gaussian")
        throw UsageError("LoRA init '" + o.init + "': expected kaiming or gaussian");
    if (!lora_adapters(model).empty()) throw UsageError("LoRA adapters are already attached to this model");
    for (auto& [name, p] : hf_named_parameters(model)) {
        p.set_requires_grad(false);
        if (p.grad().defined()) p.mutable_grad() = at::Tensor();
    }
    model->set_base_frozen(true);
    for (auto& [name, proj] : model->projections()) {
        if (!targeted(o, name)) continue;
        const int64_t out = proj->weight.size(0), in = proj->weight.size(1);
        auto a = std::make_shared<LoraAdapter>(in, out, o, proj->weight.device(), proj.get());
        at::Tensor init = at::empty({o.r, in}, at::kFloat);  // on the CPU: the same values on any device
        if (o.init == "kaiming") {
            // nn.init.kaiming_uniform_(a=sqrt(5)): gain sqrt(2 / (1 + 5)), bound = sqrt(3) gain / sqrt(fan_in)
            const double bound = std::sqrt(3.0) * std::sqrt(2.0 / 6.0) / std::sqrt(static_cast<double>(in));
            init.uniform_(-bound, bound, gen);
        } else {
            init.normal_(0.0, 1.0 / static_cast<double>(o.r), gen);
        }
        a->A.copy_(init);
        a->A.set_requires_grad(true);
        a->B.set_requires_grad(true);
        proj->adapter = a;
    }
}

std::vector<std::pair<std::string, LoraAdapter*>> lora_adapters(const Decoder& model) {
    std::vector<std::pair<std::string, LoraAdapter*>> out;
    for (auto& [name, proj] : model->projections())
        if (auto* a = dynamic_cast<LoraAdapter*>(proj->adapter.get())) out.emplace_back(name, a);
    return out;
}

void lora_set_enabled(Decoder& model, bool enabled) {
    for (auto& [name, a] : lora_adapters(model)) a->enabled = enabled;
}

std::string lora_tensor_name(const std::string& module, const std::string& param) {
    return "base_model.model." + module + "." + param;
}

std::string lora_config_json(const LoraOptions& o, const std::string& base) {
    // Every key PeftModel.save_pretrained writes for a plain LoRA (peft 0.21), with PEFT's
    // defaults for what cuset does not use; LoraConfig(**json) accepts exactly these.
    json j = {{"alora_invocation_tokens", nullptr},
              {"alpha_pattern", json::object()},
              {"arrow_config", nullptr},
              {"auto_mapping", nullptr},
              {"base_model_name_or_path", base},
              {"bias", "none"},
              {"corda_config", nullptr},
              {"ensure_weight_tying", false},
              {"eva_config", nullptr},
              {"exclude_modules", nullptr},
              {"fan_in_fan_out", false},
              {"inference_mode", true},
              {"kasa_config", nullptr},
              {"init_lora_weights", o.init == "gaussian" ? json("gaussian") : json(true)},
              {"layer_replication", nullptr},
              {"layers_pattern", nullptr},
              {"layers_to_transform", nullptr},
              {"loftq_config", json::object()},
              {"lora_alpha", o.alpha},
              {"lora_bias", false},
              {"lora_dropout", o.dropout},
              {"lora_ga_config", nullptr},
              {"megatron_config", nullptr},
              {"megatron_core", "megatron.core"},
              {"modules_to_save", nullptr},
              {"monteclora_config", nullptr},
              {"peft_type", "LORA"},
              {"qalora_group_size", 16},
              {"r", o.r},
              {"rank_pattern", json::object()},
              {"revision", nullptr},
              {"target_modules", o.target_modules},
              {"target_parameters", nullptr},
              {"task_type", "CAUSAL_LM"},
              {"trainable_token_indices", nullptr},
              {"use_bdlora", nullptr},
              {"use_dora", false},
              {"use_qalora", false},
              {"use_rslora", o.rslora},
              {"velora_config", nullptr}};
    // An integral alpha is written as an integer, as PEFT's configs usually carry it.
    if (o.alpha == std::floor(o.alpha) && std::fabs(o.alpha) < 1e15) j["lora_alpha"] = static_cast<int64_t>(o.alpha);
    return j.dump(2) + "\n";
}

LoraOptions lora_read_config(const std::string& dir) {
    const std::string file = (fs::path(dir) / "adapter_config.json").string();
    if (!fs::is_regular_file(file))
        throw InputError("'" + dir + "' is not a LoRA adapter folder (no adapter_config.json)");
    const json j = json_read_file(file, "adapter config");
    auto bad = [&](const std::string& what) { throw InputError(file + ": " + what); };
    if (!j.is_object()) bad("expected an object");
    if (j.value("peft_type", std::string()) != "LORA")
        bad("peft_type is '" + j.value("peft_type", std::string("(missing)")) + "'; cuset reads LORA adapters only");
    // The folder's values get the ranges of the keys model.lora.r, .alpha and .dropout
    // (app/config_schema.cpp): an r of 2^40 would otherwise size a petabyte of adapter weights, and
    // an r of 4.7 would be read as 4.
    auto number = [&](const char* key, double lo, double hi, bool integer, const json* fallback) -> double {
        const json& v = j.contains(key) ? j[key] : fallback ? *fallback : json();
        if (!j.contains(key) && !fallback) bad(std::string("missing key '") + key + "'");
        if (!v.is_number()) bad(std::string("'") + key + "' must be a number, got " + quote_bounded(v.dump()));
        const double x = v.get<double>();
        if (integer && !v.is_number_integer())
            bad(std::string("'") + key + "' must be an integer, got " + quote_bounded(v.dump()));
        auto num = [](double n) {
            std::ostringstream os;
            os << n;
            return os.str();
        };
        if (!(x >= lo && x <= hi))
            bad(std::string("'") + key + "' must be in [" + num(lo) + ", " + num(hi) + "], got " + quote_bounded(v.dump()));
        return x;
    };
    const json zero(0.0);
    LoraOptions o;
    o.r = static_cast<int64_t>(number("r", 1, 65536, /*integer=*/true, nullptr));
    o.alpha = number("lora_alpha", 1e-6, 1e6, /*integer=*/false, nullptr);
    o.dropout = number("lora_dropout", 0.0, 0.999, /*integer=*/false, &zero);
    try {
        o.rslora = j.value("use_rslora", false);
        const json& init = j.value("init_lora_weights", json(true));
        o.init = init.is_string() && init.get<std::string>() == "gaussian" ? "gaussian" : "kaiming";
        const json& t = j.at("target_modules");
        o.target_modules.clear();
        if (t.is_string()) bad("target_modules as a regular expression is not supported; list the projections");
        for (const json& m : t) o.target_modules.push_back(m.get<std::string>());
    } catch (const json::exception& e) {
        bad(std::string("missing or mistyped key: ") + e.what());
    }
    if (o.r < 1) bad("r must be at least 1");
    std::set<std::string> all(kAllTargets.begin(), kAllTargets.end());
    for (const std::string& m : o.target_modules)
        if (!all.count(m)) bad("target module '" + m + "' is not one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj");
    if (j.value("bias", std::string("none")) != "none") bad("bias '" + j.value("bias", std::string()) + "' is not supported (none only)");
    auto must_be_empty = [&](const char* key) {
        if (j.contains(key) && !j[key].is_null() && !j[key].empty()) bad(std::string("'") + key + "' is not supported");
    };
    for (const char* k : {"rank_pattern", "alpha_pattern", "layers_to_transform", "modules_to_save",
                          "layer_replication", "trainable_token_indices", "exclude_modules", "target_parameters"})
        must_be_empty(k);
    for (const char* k : {"use_dora", "fan_in_fan_out", "lora_bias", "use_qalora"})
        if (j.value(k, false)) bad(std::string("'") + k + "' is not supported");
    return o;
}

std::string lora_base_model(const std::string& dir) {
    const std::string file = (fs::path(dir) / "adapter_config.json").string();
    const json j = json_read_file(file, "adapter config");
    if (!j.is_object()) throw InputError(file + ": expected an object");
    return j.value("base_model_name_or_path", json()).is_string() ? j["base_model_name_or_path"].get<std::string>() : "";
}

void lora_save(const Decoder& model, const LoraOptions& o, const std::string& dir, const std::string& base) {
    NamedTensors tensors;
    for (auto& [name, a] : lora_adapters(model)) {
        tensors.emplace_back(lora_tensor_name(name, "lora_A.weight"), a->A.detach());
        tensors.emplace_back(lora_tensor_name(name, "lora_B.weight"), a->B.detach());
    }
    if (tensors.empty()) throw RuntimeFailure("lora_save: the model has no LoRA adapter");
    safetensors_save((fs::path(dir) / "adapter_model.safetensors").string(), tensors, {{"format", "pt"}}, at::kFloat);
    write_text((fs::path(dir) / "adapter_config.json").string(), lora_config_json(o, base));
}

void lora_load_weights(Decoder& model, const std::string& dir) {
    const std::string file = (fs::path(dir) / "adapter_model.safetensors").string();
    if (!fs::is_regular_file(file)) throw InputError("'" + dir + "' has no adapter_model.safetensors");
    std::map<std::string, at::Tensor> st = safetensors_load(file, c10::Device(c10::kCPU));
    std::vector<std::string> problems;
    std::set<std::string> used;
    at::NoGradGuard no_grad;
    for (auto& [name, a] : lora_adapters(model)) {
        for (auto& [pname, t] : a->parameters()) {
            const std::string key = lora_tensor_name(name, pname);
            auto it = st.find(key);
            if (it == st.end()) {
                problems.push_back("missing " + key);
                continue;
            }
            used.insert(key);
            if (it->second.sizes() != t.sizes()) {
                std::ostringstream os;
                os << "shape of " << key << " is " << it->second.sizes() << ", the model needs " << t.sizes();
                problems.push_back(os.str());
                continue;
            }
            // A NaN or infinite weight would make every logit NaN and every sample end-of-text.
            if (!at::isfinite(it->second).all().item<bool>()) {
                problems.push_back(key + " holds NaN or infinite values");
                continue;
            }
            t.copy_(it->second.to(at::kFloat));
        }
    }
    for (auto& [key, t] : st)
        if (!used.count(key)) problems.push_back("unexpected " + key);
    if (!problems.empty()) {
        // One line (docs/exit-codes.md): the first problem and how many more.
        std::string msg = file + ": the adapter does not match the model: " + problems.front();
        if (problems.size() > 1) msg += " (and " + std::to_string(problems.size() - 1) + " more)";
        throw InputError(msg);
    }
}

Decoder model_load_for_inference(const std::string& model_dir, const std::string& adapter_dir, c10::ScalarType dtype,
                                 c10::Device device) {
    const fs::path dir(model_dir);
    if (!fs::exists(dir / "config.json") && fs::exists(dir / "adapter_config.json")) {
        const std::string base = lora_base_model(model_dir);
        throw InputError("model folder '" + model_dir + "' is a LoRA adapter (adapter_config.json, no config.json): " +
                         "set model.path to its base" + (base.empty() ? std::string() : " (" + base + ")") +
                         " and --set model.lora.path=" + model_dir);
    }
    Decoder model = model_load(model_dir, dtype, device);
    if (adapter_dir.empty()) return model;
    LoraOptions o = lora_read_config(adapter_dir);
    o.dropout = 0.0;
    lora_attach(model, o, at::detail::createCPUGenerator(0));  // A's draw is replaced next
    lora_load_weights(model, adapter_dir);
    const std::string recorded = lora_base_model(adapter_dir);
    std::error_code ec;
    if (!recorded.empty() && fs::is_directory(recorded, ec) && !fs::equivalent(recorded, model_dir, ec))
        log_warn("LoRA adapter %s was trained on %s, not on %s", adapter_dir.c_str(), recorded.c_str(),
                 model_dir.c_str());
    log_info("LoRA adapter %s: r %lld, scale %g on %zu projections of %s", adapter_dir.c_str(), (long long)o.r,
             o.scale(), lora_adapters(model).size(), model_dir.c_str());
    return model;
}

void lora_merge(Decoder& model) {
    at::NoGradGuard no_grad;
    for (auto& [name, proj] : model->projections()) {
        auto* a = dynamic_cast<LoraAdapter*>(proj->adapter.get());
        if (a == nullptr) continue;
        at::Tensor delta = at::matmul(a->B.detach(), a->A.detach()) * a->scale;  // [out, in] fp32
        at::Tensor merged = proj->weight.detach().to(at::kFloat) + delta.to(proj->weight.device());
        proj->weight.detach().copy_(merged);  // rounded once to W's dtype
        proj->adapter.reset();
    }
    model->set_base_frozen(false);
}

int64_t lora_base_numel(const ModelConfig& c) {
    const int64_t d = c.hidden_size, f = c.intermediate_size, q = c.n_head * c.head_dim, kv = c.n_head_kv * c.head_dim;
    int64_t layer = d * q + 2 * d * kv + q * d + 3 * d * f + 2 * d;  // projections + two norms
    if (c.attention_bias) layer += q + 2 * kv;
    if (c.o_bias) layer += d;
    if (c.qk_norm) layer += 2 * c.head_dim;
    int64_t n = c.n_layer * layer + c.vocab_size * d + d;  // + embedding + final norm
    if (!c.tie_word_embeddings) n += c.vocab_size * d;
    return n;
}

int64_t lora_adapter_numel(const ModelConfig& c, const LoraOptions& o) {
    const int64_t d = c.hidden_size, f = c.intermediate_size, q = c.n_head * c.head_dim, kv = c.n_head_kv * c.head_dim;
    const std::map<std::string, std::pair<int64_t, int64_t>> shape = {  // (in, out)
        {"q_proj", {d, q}}, {"k_proj", {d, kv}},   {"v_proj", {d, kv}},  {"o_proj", {q, d}},
        {"gate_proj", {d, f}}, {"up_proj", {d, f}}, {"down_proj", {f, d}}};
    int64_t per_layer = 0;
    for (const std::string& t : o.target_modules) {
        auto it = shape.find(t);
        if (it != shape.end()) per_layer += o.r * (it->second.first + it->second.second);
    }
    return c.n_layer * per_layer;
}

TrainingMemory training_memory(const ModelConfig& c, c10::ScalarType dtype, const LoraOptions* lora) {
    TrainingMemory m;
    const double w = static_cast<double>(c10::elementSize(dtype));
    const int64_t base = lora_base_numel(c);
    m.weights = base * w;
    if (lora != nullptr) {
        const int64_t n = lora_adapter_numel(c, *lora);
        m.n_trainable = n;
        m.n_frozen = base;
        m.adapters = n * 4.0;
        m.gradients = n * 4.0;
        m.optimizer = n * 8.0;  // fp32 adapters are their own masters: two moments only
    } else {
        m.n_trainable = base;
        m.gradients = base * w;
        m.optimizer = base * ((dtype == at::kFloat ? 0.0 : 4.0) + 8.0);
    }
    return m;
}

double activation_memory_checkpointed(const ModelConfig& c, c10::ScalarType dtype, int64_t batch, int64_t seq,
                                      int64_t loss_chunk) {
    const double w = static_cast<double>(c10::elementSize(dtype));
    const double d = c.hidden_size, f = c.intermediate_size, q = c.n_head * c.head_dim, kv = c.n_head_kv * c.head_dim;
    const double tokens = static_cast<double>(batch) * seq;
    // Kept across the whole pass: each layer's input, plus the final hidden states and their gradient.
    const double kept = (c.n_layer + 2) * tokens * d * w;
    // One layer recomputed in backward: what its autograd graph saves (norm outputs, q/k/v,
    // attention output, o_proj output, gate/up/silu/product), fp32 RMSNorm intermediates and
    // fp32 copies of the adapters' inputs (4 distinct inputs: D, D, D, F), times 2 for the
    // gradient buffers live at the same time.
    const double saved = w * (5 * d + q + 2 * kv + 4 * f) + 4.0 * (2 * d) + 4.0 * (3 * d + f);
    const double layer = 2.0 * tokens * saved;
    // Chunked loss: fp32 logits, their softmax and gradient for loss_chunk tokens at a time.
    const double chunk = static_cast<double>(loss_chunk > 0 ? std::min<int64_t>(loss_chunk, batch * seq) : batch * seq);
    const double loss = 3.0 * chunk * c.vocab_size * 4.0;
    return kept + layer + loss;
}

std::string hash_model_with_adapter(const std::string& model_dir, const std::string& adapter_dir) {
    const std::string base = hash_model_dir(model_dir);
    if (adapter_dir.empty()) return base;
    return Hasher()
        .add(base)
        .add("lora")
        .add(hash_model_dir(adapter_dir))
        .add(hash_file((fs::path(adapter_dir) / "adapter_config.json").string()))
        .hex();
}

}  // namespace cuset
