// A lexer for C, C++ and CUDA source, used by the sensitivity tagger. It only splits bytes into
// tokens (no preprocessing, no keyword table): linear time, never reads outside the range it is
// given, and always makes progress, whatever the bytes (broken code, prose, binary).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace cuset {

enum class CudaTokenKind : uint8_t {
    kIdentifier,    // [A-Za-z_$] or any byte >= 0x80, then also digits
    kNumber,        // a pp-number: 12, 0x1F, 1.5e-3f, 1'000'000, .5
    kString,        // "..." with an optional u8/u/U/L prefix, or a raw string R"d(...)d"
    kChar,          // '...' with an optional prefix
    kLineComment,   // // ... up to the end of the line (backslash-newline continues it)
    kBlockComment,  // /* ... */ (unclosed: to the end of the range)
    kPreprocessor,  // a # directive from the '#' to the end of its line, with continuations
    kPunct,         // operators and punctuators, longest match (<<< and >>> included); any other byte
};

struct CudaToken {
    uint32_t begin = 0;  // byte offset into the text given to cuda_lex (not into the range)
    uint32_t end = 0;    // one past the last byte; begin < end always
    CudaTokenKind kind = CudaTokenKind::kPunct;
};

// Tokens of text[begin, end) in order; whitespace (and a stray backslash-newline) is skipped.
// Offsets are absolute in `text`. An unterminated string or character literal ends at the end
// of its line, so one stray quote (an apostrophe in prose) cannot swallow the rest of the code.
// Requires begin <= end <= text.size() < 2^32.
std::vector<CudaToken> cuda_lex(std::string_view text, uint32_t begin, uint32_t end);

// The whole text.
std::vector<CudaToken> cuda_lex(std::string_view text);

// Comments and preprocessor lines: tokens the structure pass never looks at.
inline bool cuda_token_is_trivia(CudaTokenKind kind) {
    return kind == CudaTokenKind::kLineComment || kind == CudaTokenKind::kBlockComment ||
           kind == CudaTokenKind::kPreprocessor;
}

// "identifier", "number", ... (for tests and debugging).
const char* cuda_token_kind_name(CudaTokenKind kind);

}  // namespace cuset
