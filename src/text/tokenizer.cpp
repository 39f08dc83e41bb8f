// Tokenizer loading: a folder or file to the tokenizer.json or SentencePiece backend, with
// bos/eos/pad from tokenizer_config.json and special_tokens_map.json.
#include "cuset/text/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "sentencepiece.h"
#include "tokenizer_hf.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

std::string tokenizer_dir(const std::string& path) {
    fs::path p(path);
    if (fs::is_directory(p)) return p.string();
    return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

namespace {

json read_json_file(const fs::path& p) { return json_read_file(p.string(), ""); }

// A special token entry of tokenizer_config.json / special_tokens_map.json: "str" or {"content": str}.
std::string special_token_text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    return "";
}

}  // namespace

std::unique_ptr<Tokenizer> tokenizer_load(const std::string& path) {
    fs::path p(path);
    if (path.empty()) throw InputError("no tokenizer path given");
    if (!fs::exists(p)) throw InputError(path + ": no such tokenizer file or folder");
    fs::path dir = fs::is_directory(p) ? p : (p.has_parent_path() ? p.parent_path() : fs::path("."));
    fs::path file;
    if (fs::is_directory(p)) {
        if (fs::exists(p / "tokenizer.json")) file = p / "tokenizer.json";
        else if (fs::exists(p / "tokenizer.model")) file = p / "tokenizer.model";
        else throw InputError(path + ": folder has neither tokenizer.json nor tokenizer.model");
    } else {
        file = p;
    }

    json config = json::object();
    if (fs::exists(dir / "tokenizer_config.json")) config = read_json_file(dir / "tokenizer_config.json");
    json special_map = json::object();
    if (fs::exists(dir / "special_tokens_map.json")) special_map = read_json_file(dir / "special_tokens_map.json");
    if (!config.is_object()) config = json::object();
    if (!special_map.is_object()) special_map = json::object();

    std::unique_ptr<Tokenizer> tok;
    std::string name = file.filename().string();
    if (file.extension() == ".json" && name != "tokenizer_config.json") {
        tok = detail::make_hf_tokenizer(file.string());
    } else if (file.extension() == ".model") {
        tok = detail::make_spm_tokenizer(file.string(), config);
    } else {
        throw InputError(path + ": not a tokenizer file (expected tokenizer.json or tokenizer.model)");
    }

    // bos/eos/pad: tokenizer_config.json, then special_tokens_map.json; absent = backend default.
    auto resolve = [&](const char* key, int32_t* slot) {
        std::string text;
        if (config.contains(key)) text = special_token_text(config[key]);
        if (text.empty() && special_map.contains(key)) text = special_token_text(special_map[key]);
        if (text.empty()) return;
        int32_t id = tok->token_to_id(text);
        if (id < 0) {
            log_warn("%s: %s '%s' is not in the vocabulary; ignored", (dir / "tokenizer_config.json").string().c_str(),
                     key, text.c_str());
            return;
        }
        *slot = id;
    };
    resolve("bos_token", &tok->bos_id_);
    resolve("eos_token", &tok->eos_id_);
    resolve("pad_token", &tok->pad_id_);
    return tok;
}

}  // namespace cuset
