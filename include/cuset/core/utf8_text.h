// Bytes from outside cuset's control (a judged program's output, a compiler's messages, a task
// script's lines) made into text that every writer can carry: valid UTF-8, optionally clipped on
// a character boundary. Not here: escaping for a format (markup.h for HTML; JSON's own escapes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cuset {

// What a clipped text ends with.
inline constexpr std::string_view kUtf8Clipped = "...";

// Whether `bytes` are valid UTF-8 as Python's strict decode reads it: no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequence. NUL is valid.
bool utf8_valid(std::string_view bytes);

// `bytes` as valid UTF-8. Each maximal invalid subpart (the longest start of a well-formed
// sequence that does not go on, or else one byte) becomes one U+FFFD: the Unicode standard's
// recommended practice (chapter 3, "U+FFFD Substitution of Maximal Subparts"), and what
// Python's bytes.decode("utf-8", "replace") does, byte for byte. So 0xFF, ED A0 80 (a surrogate),
// C0 80 and E0 80 80 (overlong) and F4 90 80 80 (above U+10FFFF) are each replaced, and valid
// text comes back unchanged.
//
// NUL and the other control characters are kept: they are valid UTF-8, JSON carries them as
// \u0000, and the one escaper of the pages that show such text (html_escape) replaces them.
//
// When the text would be longer than max_bytes, it is cut at the last character boundary at or
// before max_bytes and kUtf8Clipped is appended: the result is never longer than
// max_bytes + 3, and without its "..." it is a prefix of utf8_sanitize(bytes).
std::string utf8_sanitize(std::string_view bytes, size_t max_bytes = SIZE_MAX);

// utf8_sanitize(bytes) with every control character made visible, for text shown to a person (a
// page, the console): a terminal or a browser acts on ESC, BEL, a lone carriage return or a
// backspace instead of showing them, so a judged program's output could rewrite what is around
// it. Tab and newline stay; "\r\n" becomes "\n"; the other C0 controls (NUL included) and DEL
// become their Unicode Control Pictures (U+2400 + the code, U+2421 for DEL: ESC shows as
// U+241B), and the C1 controls (U+0080..U+009F) the six characters "\u0085".
std::string utf8_visible(std::string_view bytes);

}  // namespace cuset
