// Private to the text sources: UTF-8 decoding and repair, the Unicode properties the
// pre-tokenizers need (through utf8proc), and NFC with Hugging Face's offset alignments.
// (utf8_first_invalid, which data files use too, is public in cuset/text/tokenizer.h.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset::detail {

// ---------------------------------------------------------------- UTF-8
// Decodes the code point at s[i] of valid UTF-8; *len gets its byte length.
inline uint32_t utf8_decode(const char* s, size_t i, int* len) {
    const auto* p = reinterpret_cast<const unsigned char*>(s) + i;
    if (p[0] < 0x80) { *len = 1; return p[0]; }
    if (p[0] < 0xE0) { *len = 2; return ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu); }
    if (p[0] < 0xF0) { *len = 3; return ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu); }
    *len = 4;
    return ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
}
inline int utf8_len(unsigned char lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }
void utf8_append(std::string& out, uint32_t cp);
// Rust's String::from_utf8_lossy / Python's errors="replace": each maximal invalid subpart -> U+FFFD.
std::string utf8_lossy(std::string_view bytes);

// ---------------------------------------------------------------- Unicode properties
bool uni_is_whitespace(uint32_t cp);  // White_Space (Rust char::is_whitespace, regex \s)
bool uni_is_numeric(uint32_t cp);     // Nd | Nl | No (Rust char::is_numeric)
bool uni_is_word(uint32_t cp);        // Rust regex \w (Alphabetic, M, Nd, Pc, Join_Control)
bool py_is_space(uint32_t cp);        // Python's str.isspace() (what str.strip() removes)

// NFC of `s` as the (char, change) sequence that Hugging Face's unicode-normalization-alignments
// produces: change 0 = replaces one input char, 1 = inserted, -N = replaces one and removes N.
// Returns false when `s` is already NFC with no change at all (the common case).
bool nfc_changes(std::string_view s, std::vector<std::pair<uint32_t, int>>* out);
std::string nfc_string(std::string_view s);  // plain NFC (for added-token contents)

}  // namespace cuset::detail
