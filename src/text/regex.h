// Private to the text sources: the pre-tokenizer regexes, Oniguruma's Ruby syntax (what Hugging
// Face tokenizers uses) translated to PCRE2 and matched as Oniguruma's find_iter does.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuset::detail {

// A compiled PCRE2 pattern (UTF, UCP, JIT) translated from Oniguruma's Ruby syntax, which is
// what Hugging Face tokenizers uses: \s also matches U+0085, \h is a hex digit, ^/$ are line
// anchors, (?m) means dot-all. Thread-safe matching (per-thread match data).
class Regex {
public:
    explicit Regex(const std::string& onig_pattern, bool literal = false);
    ~Regex();
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;
    // Non-overlapping matches in s[0, n) as Oniguruma's find_iter yields them (an empty match
    // right after the previous match is skipped).
    void find_all(const char* s, size_t n, std::vector<std::pair<uint32_t, uint32_t>>* out) const;
    const std::string& pattern() const { return pattern_; }

private:
    std::string pattern_;
    void* code_ = nullptr;  // pcre2_code_8*
    bool jit_ = false;
};

}  // namespace cuset::detail
