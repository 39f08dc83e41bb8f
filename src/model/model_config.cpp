// config.json -> ModelConfig, with the defaults and field semantics of transformers'
// LlamaConfig / Qwen2Config / Qwen3Config and its RoPE parameter standardisation.
#include "cuset/model/model_config.h"

#include <filesystem>
#include <fstream>

#include "cuset/core/error.h"
#include "cuset/core/json_io.h"

namespace cuset {

namespace {

using json = nlohmann::json;

const char* const kSupported = "LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM";

struct Reader {
    const json& j;
    const std::string& source;

    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw InputError("model config '" + source + "': key '" + key + "' " + what);
    }
    bool has(const std::string& key) const { return j.contains(key) && !j[key].is_null(); }

    int64_t positive(const std::string& key) const {
        if (!has(key)) fail(key, "is missing");
        if (!j[key].is_number_integer() || j[key].get<int64_t>() <= 0)
            fail(key, "must be a positive integer, got " + quote_bounded(j[key].dump()));
        return j[key].get<int64_t>();
    }
    int64_t positive_or(const std::string& key, int64_t def) const { return has(key) ? positive(key) : def; }
    double number_or(const std::string& key, double def) const {
        if (!has(key)) return def;
        if (!j[key].is_number()) fail(key, "must be a number, got " + quote_bounded(j[key].dump()));
        return j[key].get<double>();
    }
    bool bool_or(const std::string& key, bool def) const {
        if (!has(key)) return def;
        if (!j[key].is_boolean()) fail(key, "must be true or false, got " + quote_bounded(j[key].dump()));
        return j[key].get<bool>();
    }
    std::string string_or(const std::string& key, const std::string& def) const {
        if (!has(key)) return def;
        if (!j[key].is_string()) fail(key, "must be a string, got " + quote_bounded(j[key].dump()));
        return j[key].get<std::string>();
    }
    // A token id or -1; lists keep every entry (eos_token_id may be a list).
    std::vector<int64_t> ids(const std::string& key) const {
        std::vector<int64_t> out;
        if (!has(key)) return out;
        const json& v = j[key];
        auto one = [&](const json& x) {
            if (!x.is_number_integer() || x.get<int64_t>() < 0) fail(key, "must be a token id, got " + quote_bounded(x.dump()));
            out.push_back(x.get<int64_t>());
        };
        if (v.is_array())
            for (const json& x : v) one(x);
        else
            one(v);
        return out;
    }
};

std::string architecture_of(const Reader& r) {
    if (r.has("architectures")) {
        const json& a = r.j["architectures"];
        if (!a.is_array() || a.size() != 1 || !a[0].is_string())
            r.fail("architectures", "must list exactly one architecture, got " + quote_bounded(a.dump()));
        std::string arch = a[0].get<std::string>();
        if (arch != "LlamaForCausalLM" && arch != "Qwen2ForCausalLM" && arch != "Qwen3ForCausalLM")
            r.fail("architectures", "names unsupported architecture '" + quote_bounded(arch) + "' (supported: " + kSupported + ")");
        return arch;
    }
    std::string type = r.string_or("model_type", "");
    if (type == "llama") return "LlamaForCausalLM";
    if (type == "qwen2") return "Qwen2ForCausalLM";
    if (type == "qwen3") return "Qwen3ForCausalLM";
    r.fail("architectures", "is missing and model_type '" + quote_bounded(type) + "' is not supported (supported: " + kSupported + ")");
}

// transformers: `rope_scaling` (older files) takes precedence over `rope_parameters` (newer),
// `rope_theta` inside the dict over the top-level key (default 10000), "type" is an alias of
// "rope_type", and yarn/llama3 default original_max_position_embeddings to
// max_position_embeddings.
void read_rope(const Reader& r, ModelConfig& c) {
    std::string key = "rope_parameters";
    if (r.has("rope_scaling") && !(r.j["rope_scaling"].is_object() && r.j["rope_scaling"].empty())) key = "rope_scaling";
    json rp = r.has(key) ? r.j[key] : json::object();
    if (!rp.is_object()) r.fail(key, "must be an object, got " + quote_bounded(rp.dump()));
    if (rp.contains("full_attention") || rp.contains("sliding_attention"))
        r.fail(key, "is nested per layer type, which is not supported");
    Reader s{rp, r.source};
    c.rope_theta = r.number_or("rope_theta", 10000.0);
    if (s.has("rope_theta")) c.rope_theta = s.number_or("rope_theta", c.rope_theta);
    if (c.rope_theta <= 0) r.fail("rope_theta", "must be positive");
    double partial = s.has("partial_rotary_factor") ? s.number_or("partial_rotary_factor", 1.0)
                                                    : r.number_or("partial_rotary_factor", 1.0);
    if (partial != 1.0) r.fail("partial_rotary_factor", "is " + std::to_string(partial) + "; only 1.0 is supported");

    std::string type = s.has("rope_type") ? s.string_or("rope_type", "default") : s.string_or("type", "default");
    RopeScaling& rs = c.rope_scaling;
    auto factor = [&](bool required) {
        if (!s.has("factor")) {
            if (required) r.fail(key + ".factor", "is missing for rope type '" + quote_bounded(type) + "'");
            return 0.0;
        }
        double f = s.number_or("factor", 1.0);
        if (f < 1.0) r.fail(key + ".factor", "must be >= 1, got " + std::to_string(f));
        return f;
    };
    auto original = [&]() {
        if (r.has("original_max_position_embeddings")) return r.positive("original_max_position_embeddings");
        return s.positive_or("original_max_position_embeddings", c.max_position_embeddings);
    };
    if (type == "default") {
        rs.type = "none";
    } else if (type == "linear") {
        rs.type = "linear";
        rs.factor = factor(true);
    } else if (type == "yarn") {
        rs.type = "yarn";
        rs.original_max_position_embeddings = original();
        rs.factor = factor(false);
        if (rs.factor == 0.0)
            rs.factor = static_cast<double>(c.max_position_embeddings) / rs.original_max_position_embeddings;
        rs.attention_factor = s.number_or("attention_factor", 0.0);
        rs.mscale = s.number_or("mscale", 0.0);
        rs.mscale_all_dim = s.number_or("mscale_all_dim", 0.0);
        // transformers treats 0 / null beta as "use the default" (`x or 32`).
        rs.beta_fast = s.number_or("beta_fast", 0.0);
        if (rs.beta_fast == 0.0) rs.beta_fast = 32.0;
        rs.beta_slow = s.number_or("beta_slow", 0.0);
        if (rs.beta_slow == 0.0) rs.beta_slow = 1.0;
        rs.truncate = s.bool_or("truncate", true);
    } else if (type == "llama3") {
        rs.type = "llama3";
        rs.factor = factor(true);
        rs.original_max_position_embeddings = original();
        if (!s.has("low_freq_factor")) r.fail(key + ".low_freq_factor", "is missing for rope type 'llama3'");
        if (!s.has("high_freq_factor")) r.fail(key + ".high_freq_factor", "is missing for rope type 'llama3'");
        rs.low_freq_factor = s.number_or("low_freq_factor", 1.0);
        rs.high_freq_factor = s.number_or("high_freq_factor", 4.0);
        if (rs.high_freq_factor <= rs.low_freq_factor)
            r.fail(key + ".high_freq_factor", "must exceed low_freq_factor");
    } else {
        r.fail(key, "has unsupported rope type '" + quote_bounded(type) + "' (supported: default, linear, yarn, llama3)");
    }
}

}  // namespace

ModelConfig model_config_from_json(const json& j, const std::string& source) {
    if (!j.is_object()) throw InputError("model config '" + source + "' is not a JSON object");
    Reader r{j, source};
    ModelConfig c;
    c.raw = j;
    c.architecture = architecture_of(r);
    const bool llama = c.architecture == "LlamaForCausalLM";
    const bool qwen2 = c.architecture == "Qwen2ForCausalLM";
    const bool qwen3 = c.architecture == "Qwen3ForCausalLM";

    c.vocab_size = r.positive("vocab_size");
    c.hidden_size = r.positive("hidden_size");
    c.intermediate_size = r.positive("intermediate_size");
    c.n_layer = r.positive("num_hidden_layers");
    c.n_head = r.positive("num_attention_heads");
    c.n_head_kv = r.positive_or("num_key_value_heads", c.n_head);
    if (c.n_head % c.n_head_kv != 0)
        r.fail("num_key_value_heads", "(" + std::to_string(c.n_head_kv) + ") must divide num_attention_heads (" +
                                          std::to_string(c.n_head) + ")");
    // transformers: Qwen3Config defaults head_dim to 128; the others derive it (floor division).
    c.head_dim = r.positive_or("head_dim", qwen3 ? 128 : c.hidden_size / c.n_head);
    if (c.head_dim <= 0 || c.head_dim % 2 != 0)
        r.fail("head_dim", "must be a positive even number for RoPE, got " + std::to_string(c.head_dim));
    c.max_position_embeddings = r.positive_or("max_position_embeddings", llama ? 2048 : 32768);
    c.rms_norm_eps = r.number_or("rms_norm_eps", 1e-6);
    if (c.rms_norm_eps < 0) r.fail("rms_norm_eps", "must be >= 0");
    read_rope(r, c);

    if (std::string act = r.string_or("hidden_act", "silu"); act != "silu")
        r.fail("hidden_act", "is '" + quote_bounded(act) + "'; only 'silu' (SwiGLU) is supported");
    if (qwen2) {
        c.attention_bias = true;  // Qwen2 always has q/k/v biases and never an o_proj bias
        c.o_bias = false;
    } else {
        c.attention_bias = r.bool_or("attention_bias", false);
        c.o_bias = c.attention_bias;
    }
    if (llama && r.bool_or("mlp_bias", false)) r.fail("mlp_bias", "is true, which is not supported");
    c.qk_norm = qwen3;
    c.tie_word_embeddings = r.bool_or("tie_word_embeddings", false);
    if (r.bool_or("use_sliding_window", false)) r.fail("use_sliding_window", "is true; sliding-window attention is not supported");
    if (r.has("layer_types")) {
        const json& lt = j["layer_types"];
        if (!lt.is_array()) r.fail("layer_types", "must be a list");
        for (const json& t : lt)
            if (t != "full_attention") r.fail("layer_types", "contains " + quote_bounded(t.dump()) + "; only full_attention is supported");
    }
    if (r.number_or("attention_dropout", 0.0) != 0.0) r.fail("attention_dropout", "must be 0 (dropout is not supported)");
    if (r.has("quantization_config")) r.fail("quantization_config", "is present; quantized checkpoints are not supported");

    std::string dtype_key = r.has("dtype") ? "dtype" : "torch_dtype";
    c.torch_dtype = r.string_or(dtype_key, "float32");
    if (c.torch_dtype == "float") c.torch_dtype = "float32";
    if (c.torch_dtype == "half") c.torch_dtype = "float16";
    if (c.torch_dtype != "float32" && c.torch_dtype != "bfloat16" && c.torch_dtype != "float16")
        r.fail(dtype_key, "is '" + quote_bounded(c.torch_dtype) + "' (expected float32, bfloat16 or float16)");

    std::vector<int64_t> bos = r.ids("bos_token_id");
    if (bos.size() > 1) r.fail("bos_token_id", "must be one token id");
    c.bos_token_id = bos.empty() ? -1 : bos[0];
    c.eos_token_ids = r.ids("eos_token_id");
    std::vector<int64_t> pad = r.ids("pad_token_id");
    if (pad.size() > 1) r.fail("pad_token_id", "must be one token id");
    c.pad_token_id = pad.empty() ? -1 : pad[0];
    if (c.pad_token_id >= c.vocab_size) c.pad_token_id = -1;  // outside the table: no row to protect
    return c;
}

ModelConfig model_config_load(const std::string& dir) {
    std::string path = (std::filesystem::path(dir) / "config.json").string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir, ec))
        throw InputError("model '" + dir + "' is a file; a model is a Hugging Face folder (config.json, *.safetensors)");
    if (std::filesystem::is_directory(path, ec))
        throw InputError("model config '" + path + "' is a folder, not a file");
    if (!std::filesystem::exists(path, ec))
        throw InputError("model config '" + path + "' cannot be read (is model.path a Hugging Face model folder?)");
    return model_config_from_json(json_read_file(path, "model config"), path);
}

json model_config_to_json(const ModelConfig& cfg, const std::string& torch_dtype) {
    json j = cfg.raw;
    j["architectures"] = json::array({cfg.architecture});
    j["dtype"] = torch_dtype;        // transformers >= 4.56
    j["torch_dtype"] = torch_dtype;  // older readers (and vLLM with them)
    j["tie_word_embeddings"] = cfg.tie_word_embeddings;
    return j;
}

}  // namespace cuset
