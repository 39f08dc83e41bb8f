// The C/C++/CUDA lexer of the tagger: one forward pass, every read checked against the end of
// the range, every step consumes at least one byte. It does not preprocess or classify keywords.
#include "cuset/tagger/cuda_lexer.h"

#include <cstring>

namespace cuset {
namespace {

inline bool is_ident_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}
inline bool is_ident_char(unsigned char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
inline bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

class Lexer {
public:
    Lexer(std::string_view text, uint32_t begin, uint32_t end) : s_(text.data()), i_(begin), end_(end) {}

    std::vector<CudaToken> run() {
        std::vector<CudaToken> out;
        out.reserve((end_ - i_) / 4 + 1);
        bool line_start = true;
        while (i_ < end_) {
            unsigned char c = at(i_);
            if (is_space(c)) {
                if (c == '\n') line_start = true;
                ++i_;
                continue;
            }
            if (c == '\\' && newline_after_backslash(i_) != 0) {  // line splice between tokens
                i_ += 1 + newline_after_backslash(i_);
                continue;
            }
            uint32_t b = i_;
            CudaTokenKind kind = CudaTokenKind::kPunct;
            if (c == '#' && line_start) {
                directive();
                kind = CudaTokenKind::kPreprocessor;
            } else if (is_ident_start(c)) {
                kind = identifier_or_literal();
            } else if (is_digit(c) || (c == '.' && i_ + 1 < end_ && is_digit(at(i_ + 1)))) {
                number();
                kind = CudaTokenKind::kNumber;
            } else if (c == '"') {
                quoted('"');
                kind = CudaTokenKind::kString;
            } else if (c == '\'') {
                quoted('\'');
                kind = CudaTokenKind::kChar;
            } else if (c == '/' && i_ + 1 < end_ && at(i_ + 1) == '/') {
                line_comment();
                kind = CudaTokenKind::kLineComment;
            } else if (c == '/' && i_ + 1 < end_ && at(i_ + 1) == '*') {
                block_comment();
                kind = CudaTokenKind::kBlockComment;
            } else {
                i_ += punct_length();
            }
            out.push_back({b, i_, kind});
            line_start = false;
        }
        return out;
    }

private:
    unsigned char at(uint32_t k) const { return static_cast<unsigned char>(s_[k]); }

    // Length of the newline right after a backslash at k (1 for \n, 2 for \r\n), else 0.
    uint32_t newline_after_backslash(uint32_t k) const {
        if (k + 1 < end_ && at(k + 1) == '\n') return 1;
        if (k + 2 < end_ && at(k + 1) == '\r' && at(k + 2) == '\n') return 2;
        return 0;
    }

    CudaTokenKind identifier_or_literal() {
        uint32_t b = i_;
        while (i_ < end_ && is_ident_char(at(i_))) ++i_;
        if (i_ >= end_) return CudaTokenKind::kIdentifier;
        std::string_view word(s_ + b, i_ - b);
        unsigned char q = at(i_);
        if (q == '"' && (word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR")) {
            if (raw_string()) return CudaTokenKind::kString;
            // Not a valid raw-string opening: an ordinary string with a prefix-like name.
        }
        if ((q == '"' || q == '\'') && (word == "u8" || word == "u" || word == "U" || word == "L" ||
                                        word == "R" || word == "u8R" || word == "uR" ||
                                        word == "UR" || word == "LR")) {
            quoted(static_cast<char>(q));
            return q == '"' ? CudaTokenKind::kString : CudaTokenKind::kChar;
        }
        return CudaTokenKind::kIdentifier;
    }

    // At the '"' of R"delim( ... )delim". Returns false (consuming nothing) when no valid
    // delimiter and '(' follow; an unterminated raw string runs to the end of the range.
    bool raw_string() {
        uint32_t d = i_ + 1;
        uint32_t k = d;
        while (k < end_ && k - d <= 16) {
            unsigned char c = at(k);
            if (c == '(') break;
            if (c == ')' || c == '\\' || c == '"' || is_space(c) || c < 0x20) return false;
            ++k;
        }
        if (k >= end_ || at(k) != '(' || k - d > 16) return false;
        uint32_t n_delim = k - d;
        for (uint32_t j = k + 1; j < end_; ++j) {
            if (at(j) != ')') continue;
            if (end_ - j >= n_delim + 2 && std::memcmp(s_ + j + 1, s_ + d, n_delim) == 0 &&
                at(j + 1 + n_delim) == '"') {
                i_ = j + n_delim + 2;
                return true;
            }
        }
        i_ = end_;
        return true;
    }

    // A string or character literal starting at the quote; ends after the closing quote, or
    // before the newline / at the end of the range when unterminated.
    void quoted(char quote) {
        ++i_;
        while (i_ < end_) {
            unsigned char c = at(i_);
            if (c == static_cast<unsigned char>(quote)) {
                ++i_;
                return;
            }
            if (c == '\n') return;
            if (c == '\\') {
                uint32_t nl = newline_after_backslash(i_);
                i_ += nl != 0 ? 1 + nl : (i_ + 1 < end_ ? 2 : 1);
                continue;
            }
            ++i_;
        }
    }

    void number() {
        ++i_;
        while (i_ < end_) {
            unsigned char c = at(i_);
            if (is_ident_char(c) || c == '.') {
                ++i_;
            } else if ((c == '+' || c == '-') &&
                       (at(i_ - 1) == 'e' || at(i_ - 1) == 'E' || at(i_ - 1) == 'p' || at(i_ - 1) == 'P')) {
                ++i_;
            } else if (c == '\'' && i_ + 1 < end_ && is_ident_char(at(i_ + 1))) {
                i_ += 2;  // digit separator
            } else {
                return;
            }
        }
    }

    // Up to (not including) the newline that ends the line; backslash-newline continues it.
    void line_comment() {
        i_ += 2;
        while (i_ < end_) {
            unsigned char c = at(i_);
            if (c == '\n') return;
            if (c == '\\' && newline_after_backslash(i_) != 0) {
                i_ += 1 + newline_after_backslash(i_);
                continue;
            }
            ++i_;
        }
    }

    void block_comment() {
        i_ += 2;
        while (i_ < end_) {
            if (at(i_) == '*' && i_ + 1 < end_ && at(i_ + 1) == '/') {
                i_ += 2;
                return;
            }
            ++i_;
        }
    }

    // From '#' to the end of the logical line. Literals and block comments inside are skipped
    // whole, so a "/*" in a string or a comment spanning lines does not cut the directive.
    void directive() {
        ++i_;
        while (i_ < end_) {
            unsigned char c = at(i_);
            if (c == '\n') {
                // Trailing '\r' before the newline stays inside the directive.
                return;
            }
            if (c == '\\' && newline_after_backslash(i_) != 0) {
                i_ += 1 + newline_after_backslash(i_);
            } else if (c == '"' || c == '\'') {
                quoted(static_cast<char>(c));
            } else if (c == '/' && i_ + 1 < end_ && at(i_ + 1) == '*') {
                block_comment();
            } else if (c == '/' && i_ + 1 < end_ && at(i_ + 1) == '/') {
                line_comment();
            } else {
                ++i_;
            }
        }
    }

    // Longest punctuator at i_; any other byte is a one-byte token.
    uint32_t punct_length() const {
        const uint32_t left = end_ - i_;
        const unsigned char c = at(i_);
        const unsigned char c1 = left >= 2 ? at(i_ + 1) : 0;
        const unsigned char c2 = left >= 3 ? at(i_ + 2) : 0;
        switch (c) {
            case '<':
                if (c1 == '<') return (c2 == '<' || c2 == '=') ? 3 : 2;
                if (c1 == '=') return c2 == '>' ? 3 : 2;
                return 1;
            case '>':
                if (c1 == '>') return (c2 == '>' || c2 == '=') ? 3 : 2;
                return c1 == '=' ? 2 : 1;
            case '-':
                if (c1 == '>') return c2 == '*' ? 3 : 2;
                return (c1 == '-' || c1 == '=') ? 2 : 1;
            case '.':
                if (c1 == '.' && c2 == '.') return 3;
                return c1 == '*' ? 2 : 1;
            case ':': return c1 == ':' ? 2 : 1;
            case '+': return (c1 == '+' || c1 == '=') ? 2 : 1;
            case '&': return (c1 == '&' || c1 == '=') ? 2 : 1;
            case '|': return (c1 == '|' || c1 == '=') ? 2 : 1;
            case '#': return c1 == '#' ? 2 : 1;
            case '=': case '!': case '*': case '/': case '%': case '^': return c1 == '=' ? 2 : 1;
            default: return 1;
        }
    }

    const char* s_;
    uint32_t i_;
    uint32_t end_;
};

}  // namespace

std::vector<CudaToken> cuda_lex(std::string_view text, uint32_t begin, uint32_t end) {
    if (end > text.size()) end = static_cast<uint32_t>(text.size());
    if (begin > end) begin = end;
    return Lexer(text, begin, end).run();
}

std::vector<CudaToken> cuda_lex(std::string_view text) {
    return cuda_lex(text, 0, static_cast<uint32_t>(text.size()));
}

const char* cuda_token_kind_name(CudaTokenKind kind) {
    switch (kind) {
        case CudaTokenKind::kIdentifier: return "identifier";
        case CudaTokenKind::kNumber: return "number";
        case CudaTokenKind::kString: return "string";
        case CudaTokenKind::kChar: return "char";
        case CudaTokenKind::kLineComment: return "line_comment";
        case CudaTokenKind::kBlockComment: return "block_comment";
        case CudaTokenKind::kPreprocessor: return "preprocessor";
        case CudaTokenKind::kPunct: return "punct";
    }
    return "?";
}

}  // namespace cuset
