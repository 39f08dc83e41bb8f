// Private to the text sources: the SentencePiece backend (tokenizer.model), made by tokenizer_load.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cuset/text/tokenizer.h"

namespace cuset::detail {

// `config`: the parsed tokenizer_config.json (add_bos_token / add_eos_token).
std::unique_ptr<Tokenizer> make_spm_tokenizer(const std::string& model_path, const nlohmann::json& config);

}  // namespace cuset::detail
