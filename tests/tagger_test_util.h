// Helpers for the tagger tests: hand-labelled expectations written inline as nested markup
// «LETTERS|text» (K kernel, L launch, I indexing, S shared memory, Y sync, M memory access,
// B bounds check), a canonical flat rendering of per-byte bits to compare and print, and the
// invariants every tag_text result must satisfy.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "cuset/tagger/tagger.h"

namespace cuset {
// gtest prints spans as {begin, end, bits}.
inline void PrintTo(const TagSpan& s, std::ostream* os) {
    *os << "{" << s.begin << ", " << s.end << ", " << s.bits << "}";
}
}  // namespace cuset

namespace cuset::test {

inline const char* tag_letters() { return "KLISYMB"; }

struct Marked {
    std::string text;                // the markup with the markers removed
    std::vector<uint32_t> bits;      // expected bits per byte of `text`
};

// «KI|...» opens (the letters' bits OR the enclosing ones), » closes.
inline Marked parse_markup(const std::string& markup) {
    static const std::string kOpen = "\xC2\xAB";   // «
    static const std::string kClose = "\xC2\xBB";  // »
    Marked m;
    std::vector<uint32_t> stack{0};
    for (size_t i = 0; i < markup.size();) {
        if (markup.compare(i, kOpen.size(), kOpen) == 0) {
            size_t bar = markup.find('|', i);
            uint32_t bits = stack.back();
            for (size_t k = i + kOpen.size(); k < bar; ++k) {
                const char* p = std::strchr(tag_letters(), markup[k]);
                if (p == nullptr) ADD_FAILURE() << "bad markup letter " << markup[k];
                else bits |= 1u << (p - tag_letters());
            }
            stack.push_back(bits);
            i = bar + 1;
        } else if (markup.compare(i, kClose.size(), kClose) == 0) {
            stack.pop_back();
            i += kClose.size();
        } else {
            m.text += markup[i];
            m.bits.push_back(stack.back());
            ++i;
        }
    }
    if (stack.size() != 1) ADD_FAILURE() << "unbalanced markup";
    return m;
}

inline std::vector<uint32_t> bits_per_byte(const std::vector<TagSpan>& spans, size_t n) {
    std::vector<uint32_t> bits(n, 0);
    for (const TagSpan& s : spans)
        for (size_t k = s.begin; k < s.end && k < n; ++k) bits[k] |= s.bits;
    return bits;
}

// Flat markup: every maximal run of equal non-zero bits as «LETTERS|run».
inline std::string render_markup(const std::string& text, const std::vector<uint32_t>& bits) {
    std::string out;
    for (size_t i = 0; i < text.size();) {
        size_t j = i;
        while (j < text.size() && bits[j] == bits[i]) ++j;
        if (bits[i] == 0) {
            out += text.substr(i, j - i);
        } else {
            out += "\xC2\xAB";
            for (int b = 0; b < kTagBitCount; ++b)
                if (bits[i] >> b & 1u) out += tag_letters()[b];
            out += "|" + text.substr(i, j - i) + "\xC2\xBB";
        }
        i = j;
    }
    return out;
}

// Sorted, in bounds, non-empty, disjoint, merged, known bits, finer bits only with kernel.
inline void check_span_invariants(const std::string& text, const std::vector<TagSpan>& spans) {
    for (size_t i = 0; i < spans.size(); ++i) {
        const TagSpan& s = spans[i];
        ASSERT_LT(s.begin, s.end) << "span " << i;
        ASSERT_LE(s.end, text.size()) << "span " << i;
        ASSERT_NE(s.bits, 0u) << "span " << i;
        ASSERT_EQ(s.bits & ~kTagAll, 0u) << "span " << i;
        if (s.bits & kTagFiner) {
            ASSERT_TRUE(s.bits & kTagKernel) << "span " << i << " bits " << s.bits;
        }
        if (i > 0) {
            ASSERT_LE(spans[i - 1].end, s.begin) << "span " << i << " overlaps or is out of order";
            if (spans[i - 1].end == s.begin) {
                ASSERT_NE(spans[i - 1].bits, s.bits) << "span " << i << " not merged";
            }
        }
    }
}

// tag_text on the markup's text must give exactly the labelled bytes.
inline void expect_tags(const std::string& markup, const TaggerOptions& opts = {}) {
    Marked m = parse_markup(markup);
    std::vector<TagSpan> spans = tag_text(m.text, opts);
    check_span_invariants(m.text, spans);
    EXPECT_EQ(render_markup(m.text, bits_per_byte(spans, m.text.size())), render_markup(m.text, m.bits));
}

}  // namespace cuset::test
