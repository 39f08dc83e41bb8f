// core/utf8_text: utf8_sanitize on hand-worked cases (0xFF, surrogates, overlongs, beyond
// U+10FFFF, truncated sequences, NUL), against Python's bytes.decode("utf-8", "replace") on those
// and on seeded random bytes (the replacement per maximal invalid subpart, byte for byte), and
// clipping with a 2-, 3- and 4-byte character at every position around the budget.
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuset/core/utf8_text.h"
#include "test_util.h"

using cuset::utf8_sanitize;
using cuset::utf8_valid;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string hex_of(const std::string& s) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string bytes_of_hex(const std::string& h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    return out;
}

// Byte strings that hit every branch of the decoder: each lead byte class, each continuation
// range, and sequences cut short at the end or by another lead.
std::vector<std::string> hand_cases() {
    return {
        "",
        "plain ascii",
        std::string("nul\0inside", 10),
        "\xFF",
        "a\xFF" "b\xFE",
        "\x80",
        "\xBF\x80\x80",
        "\xC0\x80",                  // overlong NUL: two replacements
        "\xC1\xBF",
        "\xC2",                      // cut short at the end
        "\xC2\x41",
        "\xC3\xA9",                  // é
        "\xE0\x80\x80",              // overlong: three
        "\xE0\x9F\xBF",
        "\xE0\xA0\x80",              // U+0800
        "\xE2\x82",                  // a cut euro sign: one
        "\xE2\x82\x41",
        "\xE2\x82\xAC",              // €
        "\xED\x9F\xBF",              // U+D7FF
        "\xED\xA0\x80",              // a lone high surrogate: three
        "\xED\xBF\xBF",              // a lone low surrogate
        "\xED\xA0\x80\xED\xB0\x80",  // a surrogate pair in CESU form: six
        "\xEE\x80\x80",
        "\xEF\xBF\xBF",              // U+FFFF
        "\xF0\x80\x80\x80",          // overlong
        "\xF0\x8F\xBF\xBF",
        "\xF0\x90\x80\x80",          // U+10000
        "\xF0\x9F\x98",              // a cut emoji: one
        "\xF0\x9F\x98\x80",          // 😀
        "\xF1\x80\x80",
        "\xF3\xBF\xBF\xBF",
        "\xF4\x8F\xBF\xBF",          // U+10FFFF
        "\xF4\x90\x80\x80",          // beyond U+10FFFF: four
        "\xF5\x80\x80\x80",
        "\xF8\x88\x80\x80\x80",
        "\xFC\x84\x80\x80\x80\x80",
        "\xE2\xF0\x9F\x98\x80",      // a cut sequence then a whole one
        "\xC3\xC3\xA9",
        "\xF0\x9F\xE2\x82\xAC",
        "x\xE2\x82\xAC\xED\xA0\x80y\xC0\xAFz\xF4\x90\x80\x80\xFF",
    };
}

// Seeded random strings, mostly of the bytes that matter (leads, edges of continuation ranges).
std::vector<std::string> random_cases(size_t n) {
    const unsigned char pool[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                                  0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFE, 0xFF};
    std::mt19937 rng(20240611);
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) {
        std::string s;
        const size_t len = rng() % 12;
        for (size_t k = 0; k < len; ++k)
            s += static_cast<char>(rng() % 4 == 0 ? rng() % 256 : pool[rng() % sizeof pool]);
        out.push_back(s);
    }
    return out;
}

}  // namespace

TEST(Utf8Text, HandWorkedReplacements) {
    // One U+FFFD per maximal invalid subpart (worked out from Unicode table 3-7).
    EXPECT_EQ(utf8_sanitize("\xFF"), kFffd);
    EXPECT_EQ(utf8_sanitize("a\xFF" "b"), "a" + kFffd + "b");
    EXPECT_EQ(utf8_sanitize("\xED\xA0\x80"), kFffd + kFffd + kFffd) << "ED takes only 80..9F next";
    EXPECT_EQ(utf8_sanitize("\xED\xBF\xBF"), kFffd + kFffd + kFffd);
    EXPECT_EQ(utf8_sanitize("\xC0\x80"), kFffd + kFffd) << "C0 never starts a character";
    EXPECT_EQ(utf8_sanitize("\xE0\x80\x80"), kFffd + kFffd + kFffd) << "E0 takes only A0..BF next";
    EXPECT_EQ(utf8_sanitize("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd) << "F4 takes only 80..8F next";
    EXPECT_EQ(utf8_sanitize("\xE2\x82"), kFffd) << "a cut character is one subpart";
    EXPECT_EQ(utf8_sanitize("\xE2\x82" "A"), kFffd + "A");
    EXPECT_EQ(utf8_sanitize("\xF0\x9F\x98" "\xC3\xA9"), kFffd + "\xC3\xA9");
    const std::string nul("a\0b", 3);
    EXPECT_EQ(utf8_sanitize(nul), nul) << "NUL is kept: valid UTF-8, written \\u0000 in JSON";
    const std::string valid = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF \xEF\xBF\xBF";
    EXPECT_EQ(utf8_sanitize(valid), valid);
    EXPECT_TRUE(utf8_valid(valid));
    EXPECT_TRUE(utf8_valid(nul));
    for (const char* bad : {"\xFF", "\xED\xA0\x80", "\xC0\x80", "\xE0\x80\x80", "\xF4\x90\x80\x80", "\xE2\x82", "\x80"})
        EXPECT_FALSE(utf8_valid(bad)) << hex_of(bad);
}

// Python decodes every case with errors="replace"; utf8_sanitize must give the same bytes.
TEST(Utf8Text, SameAsPythonsReplaceDecode) {
    std::vector<std::string> cases = hand_cases();
    for (std::string& s : random_cases(3000)) cases.push_back(std::move(s));
    const std::string dir = cuset::test::scratch_dir("utf8_python");
    std::string in;
    for (const std::string& s : cases) in += hex_of(s) + "\n";
    cuset::test::write_file(dir + "/in.txt", in);
    const auto r = cuset::test::run_command(
        std::string("'") + CUSET_PYTHON +
        "' -c \"import sys\nfor l in open(sys.argv[1]):\n"
        "    print(bytes.fromhex(l.strip()).decode('utf-8', 'replace').encode('utf-8').hex())\" '" + dir + "/in.txt'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream out(r.out);
    std::string line;
    size_t i = 0, differ = 0;
    for (; std::getline(out, line) && i < cases.size(); ++i) {
        const std::string want = bytes_of_hex(line), got = utf8_sanitize(cases[i]);
        if (got != want && ++differ <= 10)
            ADD_FAILURE() << "input " << hex_of(cases[i]) << ": Python " << line << ", utf8_sanitize " << hex_of(got);
        EXPECT_TRUE(utf8_valid(got)) << hex_of(cases[i]);
        EXPECT_EQ(utf8_valid(cases[i]), got == cases[i]) << hex_of(cases[i]);
    }
    EXPECT_EQ(i, cases.size()) << "Python answered for every case";
    EXPECT_EQ(differ, 0u);
}

// A character of 2, 3 and 4 bytes at every position around the budget: the clip never splits
// it, never goes over the budget (before its "..."), and keeps as much as fits.
TEST(Utf8Text, ClipsOnACharacterBoundary) {
    const size_t budget = 10;
    const std::string dots(cuset::kUtf8Clipped);
    for (const std::string& ch : std::vector<std::string>{"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", kFffd}) {
        for (size_t at = 0; at <= budget + 4; ++at) {
            const std::string input = std::string(at, 'a') + ch + std::string(budget, 'b');
            const std::string r = utf8_sanitize(input, budget);
            SCOPED_TRACE(hex_of(input));
            EXPECT_TRUE(utf8_valid(r)) << hex_of(r);
            ASSERT_LE(r.size(), budget + dots.size());
            ASSERT_GT(input.size(), budget);
            ASSERT_EQ(r.substr(r.size() - 3), dots);
            const std::string kept = r.substr(0, r.size() - 3);
            EXPECT_EQ(input.compare(0, kept.size(), kept), 0) << "a prefix of the input";
            EXPECT_LE(kept.size(), budget);
            // The next character did not fit: the clip keeps all that the budget allows.
            const size_t next = kept.size() == at ? ch.size() : 1;
            EXPECT_GT(kept.size() + next, budget) << hex_of(r);
        }
    }
    // Invalid bytes around the budget: the clipped text is a prefix of the whole sanitized text.
    for (const std::string& s : hand_cases()) {
        for (size_t at = 0; at <= 8; ++at) {
            const std::string input = std::string(at, 'a') + s + s;
            const std::string whole = utf8_sanitize(input);
            for (size_t b = 0; b <= 12; ++b) {
                const std::string r = utf8_sanitize(input, b);
                EXPECT_TRUE(utf8_valid(r)) << hex_of(input) << " at " << b;
                if (whole.size() <= b) {
                    EXPECT_EQ(r, whole);
                    continue;
                }
                ASSERT_LE(r.size(), b + dots.size());
                EXPECT_EQ(whole.compare(0, r.size() - 3, r, 0, r.size() - 3), 0) << hex_of(input) << " at " << b;
            }
        }
    }
    EXPECT_EQ(utf8_sanitize("abc", 3), "abc") << "what fits is not clipped";
    EXPECT_EQ(utf8_sanitize("abcd", 3), "abc...");
    EXPECT_EQ(utf8_sanitize("\xC3\xA9", 1), "...");
    std::string e200;
    for (int i = 0; i < 200; ++i) e200 += "\xC3\xA9";
    EXPECT_EQ(utf8_sanitize(e200, 241), e200.substr(0, 240) + "...") << "the judge's clip of 200 \u00e9 at 240 bytes";
}

// Every control character but tab and newline becomes a visible character: C0 and DEL their
// Control Pictures (U+2400 + code, U+2421), C1 the text "\u00XX"; "\r\n" a newline.
TEST(Utf8Text, VisibleShowsEveryControlCharacterAsText) {
    using cuset::utf8_visible;
    EXPECT_EQ(utf8_visible("a\tb\nc"), "a\tb\nc");
    EXPECT_EQ(utf8_visible("line\r\nnext"), "line\nnext");
    EXPECT_EQ(utf8_visible("\x1b[2J\x07"), "\xE2\x90\x9B[2J\xE2\x90\x87");  // U+241B [2J U+2407
    EXPECT_EQ(utf8_visible(std::string("x\0y", 3)), "x\xE2\x90\x80y");        // U+2400
    EXPECT_EQ(utf8_visible("over\rwrite"), "over\xE2\x90\x8Dwrite");           // U+240D
    EXPECT_EQ(utf8_visible("\x08\x7f"), "\xE2\x90\x88\xE2\x90\xA1");            // U+2408 U+2421
    EXPECT_EQ(utf8_visible("\xC2\x85\xC2\x9B" "31m"), "\\u0085\\u009b31m");      // NEL, CSI
    EXPECT_EQ(utf8_visible("\xC2\xA0\xC3\xA9"), "\xC2\xA0\xC3\xA9");             // U+00A0, U+00E9 kept
    EXPECT_EQ(utf8_visible("\xff\x1b"), "\xEF\xBF\xBD\xE2\x90\x9B");            // U+FFFD, then ESC
    // Nothing below U+0020 but tab and newline, no DEL, no U+0080..U+009F is left, over all bytes.
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    for (int b = 0x80; b < 0xA0; ++b) all += std::string("\xC2") + static_cast<char>(b);
    const std::string v = utf8_visible(all);
    EXPECT_TRUE(cuset::utf8_valid(v));
    for (size_t i = 0; i < v.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(v[i]);
        EXPECT_TRUE(c >= 0x20 || c == '\t' || c == '\n') << "byte " << i;
        EXPECT_NE(c, 0x7F) << "byte " << i;
        if (c == 0xC2 && i + 1 < v.size()) {
            EXPECT_GE(static_cast<unsigned char>(v[i + 1]), 0xA0) << "byte " << i;
        }
    }
}
