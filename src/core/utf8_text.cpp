// Valid UTF-8 from any bytes (core/utf8_text.h).
#include "cuset/core/utf8_text.h"

#include <algorithm>

namespace cuset {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The sequence that starts at s[i]: its length, and whether it is a well-formed character.
// When it is not, the length is that of its maximal invalid subpart (at least 1): the lead byte
// and every following byte that could still continue a well-formed sequence (Unicode table 3-7).
struct Step {
    size_t length;
    bool valid;
};

Step step_at(std::string_view s, size_t i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return {1, true};
    size_t need;                          // continuation bytes after the lead
    unsigned char lo = 0x80, hi = 0xBF;   // the range of the first of them
    if (lead >= 0xC2 && lead <= 0xDF) need = 1;
    else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 2;
        if (lead == 0xE0) lo = 0xA0;       // below: overlong
        if (lead == 0xED) hi = 0x9F;       // above: a surrogate
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 3;
        if (lead == 0xF0) lo = 0x90;       // below: overlong
        if (lead == 0xF4) hi = 0x8F;       // above: beyond U+10FFFF
    } else {
        return {1, false};                 // a continuation byte, C0, C1, F5..FF
    }
    size_t n = 1;
    for (; n <= need; ++n) {
        if (i + n >= s.size()) return {n, false};
        const unsigned char c = byte(i + n);
        const bool fits = n == 1 ? c >= lo && c <= hi : c >= 0x80 && c <= 0xBF;
        if (!fits) return {n, false};
    }
    return {n, true};
}

}  // namespace

bool utf8_valid(std::string_view bytes) {
    for (size_t i = 0; i < bytes.size();) {
        const Step st = step_at(bytes, i);
        if (!st.valid) return false;
        i += st.length;
    }
    return true;
}

std::string utf8_sanitize(std::string_view bytes, size_t max_bytes) {
    std::string out;
    out.reserve(std::min(bytes.size(), max_bytes) + kUtf8Clipped.size());
    for (size_t i = 0; i < bytes.size();) {
        const Step st = step_at(bytes, i);
        const std::string_view piece = st.valid ? bytes.substr(i, st.length) : kReplacement;
        if (out.size() + piece.size() > max_bytes) {
            out += kUtf8Clipped;
            return out;
        }
        out += piece;
        i += st.length;
    }
    return out;
}

std::string utf8_visible(std::string_view bytes) {
    const std::string s = utf8_sanitize(bytes);
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '\t' || c == '\n') {
            out += static_cast<char>(c);
        } else if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') {
            // "\r\n": the newline alone
        } else if (c < 0x20 || c == 0x7F) {
            const unsigned cp = c == 0x7F ? 0x2421u : 0x2400u + c;  // U+2400..U+241F, U+2421: E2 90 80..A1
            out += '\xE2';
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
            // U+0080..U+009F are C2 80..C2 9F in valid UTF-8
            static const char kHex[] = "0123456789abcdef";
            const unsigned cp = static_cast<unsigned char>(s[++i]);
            out += "\\u00";
            out += kHex[cp >> 4];
            out += kHex[cp & 0xF];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace cuset
