// Tokenizers: Hugging Face tokenizer.json (byte-level BPE pipelines of Qwen2.5/Qwen3, DeepSeek-Coder,
// Seed-Coder, Llama-3) and SentencePiece tokenizer.model, behind one interface that returns, for
// every token, its byte span in the input text. Chat templates live in chat_format.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset {

struct Encoding {
    std::vector<int32_t> ids;                            // [T]
    std::vector<std::pair<uint32_t, uint32_t>> offsets;  // [T] byte span [begin, end) in the input text
};

class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // Token ids and byte spans of `text` (valid UTF-8, else InputError naming the byte offset).
    // add_special_tokens: apply the post-processor (e.g. a BOS) as HF does with
    // add_special_tokens=True; tokens it adds have the span {0, 0}. Thread-safe.
    virtual Encoding encode(std::string_view text, bool add_special_tokens = false) const = 0;

    // Text of `ids` (unknown ids are skipped, as HF does). Invalid UTF-8 produced by partial
    // byte-level tokens becomes U+FFFD.
    virtual std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const = 0;

    virtual int32_t token_to_id(std::string_view token) const = 0;  // -1 when absent
    virtual std::string id_to_token(int32_t id) const = 0;          // "" when absent
    virtual int64_t vocab_size() const = 0;                          // including added tokens
    virtual bool is_special(int32_t id) const = 0;

    // Which file this tokenizer came from, and its backend ("tokenizer.json" | "sentencepiece").
    const std::string& source() const { return source_; }
    const std::string& backend() const { return backend_; }

    int32_t bos_id() const { return bos_id_; }  // -1 when none
    int32_t eos_id() const { return eos_id_; }
    int32_t pad_id() const { return pad_id_; }

protected:
    std::string source_;
    std::string backend_;
    int32_t bos_id_ = -1;
    int32_t eos_id_ = -1;
    int32_t pad_id_ = -1;

    friend std::unique_ptr<Tokenizer> tokenizer_load(const std::string& path);
};

// `path`: a folder holding tokenizer.json (preferred) or tokenizer.model (+ tokenizer_config.json,
// special_tokens_map.json when present, for bos/eos/pad), or one of those files. InputError on
// problems, naming the file and, for tokenizer.json, the unsupported component.
std::unique_ptr<Tokenizer> tokenizer_load(const std::string& path);

// The folder a tokenizer path refers to (the path itself for a folder, its parent for a file).
std::string tokenizer_dir(const std::string& path);

// UTF-8 helpers shared by the tokenizers and the chat formatter.
// Byte offset of the first invalid UTF-8 sequence in `text`, or -1 when it is valid.
int64_t utf8_first_invalid(std::string_view text);

}  // namespace cuset
