// UTF-8 validation and repair (Unicode Table 3-7), Unicode properties through utf8proc, and NFC
// with the (char, change) alignments of Hugging Face's unicode-normalization-alignments.
#include "unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstring>

#include "cuset/text/tokenizer.h"

namespace cuset {

// ---------------------------------------------------------------- UTF-8

namespace detail {
static int utf8_step(const unsigned char* p, size_t n);
}

int64_t utf8_first_invalid(std::string_view text) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    size_t i = 0;
    while (i < n) {
        // ASCII fast path, 8 bytes at a time.
        while (i + 8 <= n) {
            uint64_t w;
            std::memcpy(&w, p + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= n) break;
        if (p[i] < 0x80) { ++i; continue; }
        int step = detail::utf8_step(p + i, n - i);
        if (step < 0) return static_cast<int64_t>(i);
        i += static_cast<size_t>(step);
    }
    return -1;
}

namespace detail {

void utf8_append(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// Length of the well-formed UTF-8 sequence at p[0, n) (> 0), or -(length of the maximal
// subpart of an ill-formed sequence to replace by one U+FFFD) (< 0), per Unicode Table 3-7.
static int utf8_step(const unsigned char* p, size_t n) {
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    int need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c == 0xE0) { need = 2; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) need = 2;
    else if (c == 0xED) { need = 2; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) need = 2;
    else if (c == 0xF0) { need = 3; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) need = 3;
    else if (c == 0xF4) { need = 3; hi = 0x8F; }
    else return -1;
    if (n < 2 || p[1] < lo || p[1] > hi) return -1;
    for (int k = 2; k <= need; ++k)
        if (static_cast<size_t>(k) >= n || p[k] < 0x80 || p[k] > 0xBF) return -k;
    return need + 1;
}

std::string utf8_lossy(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    size_t i = 0;
    const size_t n = bytes.size();
    while (i < n) {
        int step = utf8_step(p + i, n - i);
        if (step > 0) {
            out.append(bytes.data() + i, static_cast<size_t>(step));
            i += static_cast<size_t>(step);
        } else {
            out.append("\xEF\xBF\xBD");
            i += static_cast<size_t>(-step);
        }
    }
    return out;
}

// ---------------------------------------------------------------- Unicode properties

bool uni_is_whitespace(uint32_t c) {
    if (c < 0x80) return c == 0x20 || (c >= 0x09 && c <= 0x0D);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool py_is_space(uint32_t c) {
    return (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

bool uni_is_numeric(uint32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    utf8proc_category_t k = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}

bool uni_is_word(uint32_t c) {
    if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (c == 0x200C || c == 0x200D) return true;
    if ((c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
        (c >= 0x1F170 && c <= 0x1F189))
        return true;  // Other_Alphabetic symbols (circled / squared letters)
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
        case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
        case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND:
        case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
            return true;
        default:
            return false;
    }
}

// ---------------------------------------------------------------- NFC with alignments

static int ccc_of(uint32_t c) {
    if (c < 0x300) return 0;
    return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

// Primary composite of (a, b), or 0. utf8proc's composition step on an already decomposed pair.
static uint32_t compose_pair(uint32_t a, uint32_t b) {
    utf8proc_int32_t buf[2] = {static_cast<utf8proc_int32_t>(a), static_cast<utf8proc_int32_t>(b)};
    utf8proc_ssize_t n = utf8proc_normalize_utf32(buf, 2, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
    return n == 1 ? static_cast<uint32_t>(buf[0]) : 0u;
}

bool nfc_changes(std::string_view s, std::vector<std::pair<uint32_t, int>>* out) {
    // Below U+0300 nothing decomposes or combines.
    bool simple = true;
    for (size_t i = 0; i < s.size() && simple; ++i)
        if (static_cast<unsigned char>(s[i]) >= 0xCC) simple = false;  // lead byte of >= U+0300
    if (simple) return false;

    // 1. Canonical decomposition, each element tagged 0 (first of its input char) or 1
    //    (inserted), then canonical ordering of each starter + marks run (stable by ccc).
    struct D { uint32_t ch; int change; int ccc; };
    std::vector<D> dec;
    dec.reserve(s.size() + 8);
    size_t ready = 0;  // dec[ready..] is the pending block
    auto sort_pending = [&]() {
        std::stable_sort(dec.begin() + static_cast<std::ptrdiff_t>(ready), dec.end(),
                         [](const D& x, const D& y) { return x.ccc < y.ccc; });
        ready = dec.size();
    };
    auto push_back = [&](uint32_t ch, bool first) {
        int cls = ccc_of(ch);
        if (cls == 0) sort_pending();
        dec.push_back({ch, first ? 0 : 1, cls});
    };
    for (size_t i = 0; i < s.size();) {
        int len;
        uint32_t c = utf8_decode(s.data(), i, &len);
        i += static_cast<size_t>(len);
        if (c < 0xC0) {
            push_back(c, true);
            continue;
        }
        utf8proc_int32_t buf[8];
        int bc = 0;
        utf8proc_ssize_t n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), buf, 8,
                                                     UTF8PROC_DECOMPOSE, &bc);
        if (n <= 0 || n > 8) {
            push_back(c, true);
            continue;
        }
        for (utf8proc_ssize_t k = 0; k < n; ++k) push_back(static_cast<uint32_t>(buf[k]), k == 0);
    }
    sort_pending();

    // 2. Recomposition, following the alignment crate's state machine (composee + blocked marks).
    std::vector<std::pair<uint32_t, int>>& res = *out;
    res.clear();
    res.reserve(dec.size());
    bool has_composee = false;
    std::pair<uint32_t, int> composee{0, 0};
    int last_ccc = -1;  // -1 = none
    std::vector<std::pair<uint32_t, int>> buffer;
    for (const D& d : dec) {
        int cls = d.ccc;
        if (!has_composee) {
            if (cls != 0) {
                res.push_back({d.ch, d.change});
                continue;
            }
            composee = {d.ch, d.change};
            has_composee = true;
            continue;
        }
        if (last_ccc < 0) {
            if (uint32_t r = compose_pair(composee.first, d.ch)) {
                composee = {r, composee.second + d.change - 1};
                continue;
            }
            if (cls == 0) {
                res.push_back(composee);
                composee = {d.ch, d.change};
                continue;
            }
            buffer.push_back({d.ch, d.change});
            last_ccc = cls;
        } else {
            if (last_ccc >= cls) {
                if (cls == 0) {
                    res.push_back(composee);
                    res.insert(res.end(), buffer.begin(), buffer.end());
                    buffer.clear();
                    composee = {d.ch, d.change};
                    last_ccc = -1;
                    continue;
                }
                buffer.push_back({d.ch, d.change});
                last_ccc = cls;
                continue;
            }
            if (uint32_t r = compose_pair(composee.first, d.ch)) {
                composee = {r, composee.second + d.change - 1};
                continue;
            }
            buffer.push_back({d.ch, d.change});
            last_ccc = cls;
        }
    }
    if (has_composee) res.push_back(composee);
    res.insert(res.end(), buffer.begin(), buffer.end());

    // Unchanged? (same chars, every change 0)
    size_t k = 0;
    for (size_t i = 0; i < s.size(); ++k) {
        int len;
        uint32_t c = utf8_decode(s.data(), i, &len);
        i += static_cast<size_t>(len);
        if (k >= res.size() || res[k].first != c || res[k].second != 0) return true;
    }
    return k != res.size();
}

std::string nfc_string(std::string_view s) {
    std::vector<std::pair<uint32_t, int>> ch;
    if (!nfc_changes(s, &ch)) return std::string(s);
    std::string out;
    for (auto& c : ch) utf8_append(out, c.first);
    return out;
}

}  // namespace detail

}  // namespace cuset
