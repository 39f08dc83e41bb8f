// Private to the text sources: the Hugging Face tokenizer.json backend (tokenizer_hf.cpp), made
// by tokenizer_load.
#pragma once

#include <memory>
#include <string>

#include "cuset/text/tokenizer.h"

namespace cuset::detail {

std::unique_ptr<Tokenizer> make_hf_tokenizer(const std::string& json_path);

}  // namespace cuset::detail
