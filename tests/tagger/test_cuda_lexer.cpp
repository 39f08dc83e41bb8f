// The C/C++/CUDA lexer: token kinds and exact extents for every literal, comment and
// punctuator form, unterminated constructs, absolute offsets in sub-ranges, and coverage
// invariants on arbitrary bytes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cuset/tagger/cuda_lexer.h"

using cuset::CudaToken;
using cuset::CudaTokenKind;
using cuset::cuda_lex;

namespace {

// "kind:text" per token, one per line.
std::string dump(const std::string& src) {
    std::string out;
    for (const CudaToken& t : cuda_lex(src))
        out += std::string(cuset::cuda_token_kind_name(t.kind)) + ":" + src.substr(t.begin, t.end - t.begin) + "\n";
    return out;
}

void check_invariants(const std::string& src, const std::vector<CudaToken>& toks, uint32_t lo, uint32_t hi) {
    uint32_t pos = lo;
    for (const CudaToken& t : toks) {
        ASSERT_LT(t.begin, t.end);
        ASSERT_LE(pos, t.begin);
        ASSERT_LE(t.end, hi);
        // Only whitespace and backslash-newline splices between tokens.
        for (uint32_t k = pos; k < t.begin; ++k) {
            char c = src[k];
            bool splice = c == '\\' && k + 1 < hi && (src[k + 1] == '\n' || src[k + 1] == '\r');
            ASSERT_TRUE(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || splice)
                << "byte " << k << " (" << int(static_cast<unsigned char>(c)) << ") not in a token";
        }
        pos = t.end;
    }
}

}  // namespace

TEST(CudaLexer, IdentifiersNumbersPunctuators) {
    EXPECT_EQ(dump("k<<<g, b>>>(x_1, 0x1Fu, 1.5e-3f, 1'000'000, .5, 3.f);"),
              "identifier:k\npunct:<<<\nidentifier:g\npunct:,\nidentifier:b\npunct:>>>\npunct:(\n"
              "identifier:x_1\npunct:,\nnumber:0x1Fu\npunct:,\nnumber:1.5e-3f\npunct:,\nnumber:1'000'000\n"
              "punct:,\nnumber:.5\npunct:,\nnumber:3.f\npunct:)\npunct:;\n");
    EXPECT_EQ(dump("a->*b ... c<=>d :: e<<=1 >>= >> << -> ++ ## ~"),
              "identifier:a\npunct:->*\nidentifier:b\npunct:...\nidentifier:c\npunct:<=>\nidentifier:d\n"
              "punct:::\nidentifier:e\npunct:<<=\nnumber:1\npunct:>>=\npunct:>>\npunct:<<\npunct:->\npunct:++\n"
              "punct:##\npunct:~\n");
    // UTF-8 bytes are identifier characters; '@' and '`' are one-byte punctuators.
    EXPECT_EQ(dump("caf\xC3\xA9 @`"), "identifier:caf\xC3\xA9\npunct:@\npunct:`\n");
}

TEST(CudaLexer, StringAndCharLiterals) {
    EXPECT_EQ(dump(R"(s = "a\"<<<b" 'x' '\'' u8"u" L'w' U"z";)"),
              "identifier:s\npunct:=\nstring:\"a\\\"<<<b\"\nchar:'x'\nchar:'\\''\nstring:u8\"u\"\n"
              "char:L'w'\nstring:U\"z\"\npunct:;\n");
    // Raw strings: the delimiter must match, so )" inside does not end it.
    EXPECT_EQ(dump("R\"x(a)\" <<< )x\" k"), "string:R\"x(a)\" <<< )x\"\nidentifier:k\n");
    EXPECT_EQ(dump("LR\"(q)\""), "string:LR\"(q)\"\n");
    // Not a raw string (space in the delimiter): an identifier R and an ordinary string.
    EXPECT_EQ(dump("R\"a b(\" c"), "string:R\"a b(\"\nidentifier:c\n");
}

TEST(CudaLexer, UnterminatedLiteralsEndAtTheLine) {
    EXPECT_EQ(dump("don't <<<\nk<<<1,1>>>();"),
              "identifier:don\nchar:'t <<<\nidentifier:k\npunct:<<<\nnumber:1\npunct:,\nnumber:1\n"
              "punct:>>>\npunct:(\npunct:)\npunct:;\n");
    EXPECT_EQ(dump("\"abc\nx"), "string:\"abc\nidentifier:x\n");
    // A backslash-newline continues a string.
    EXPECT_EQ(dump("\"a\\\nb\" c"), "string:\"a\\\nb\"\nidentifier:c\n");
    // An unterminated raw string and block comment run to the end.
    EXPECT_EQ(dump("R\"(abc\n<<<"), "string:R\"(abc\n<<<\n");
    EXPECT_EQ(dump("/* <<< \n k"), "block_comment:/* <<< \n k\n");
    EXPECT_EQ(dump("x \\"), "identifier:x\npunct:\\\n");
}

TEST(CudaLexer, CommentsAndPreprocessor) {
    EXPECT_EQ(dump("a // k<<<1,1>>>() \\\n still comment\nb /* x\n y */ c"),
              "identifier:a\nline_comment:// k<<<1,1>>>() \\\n still comment\nidentifier:b\n"
              "block_comment:/* x\n y */\nidentifier:c\n");
    EXPECT_EQ(dump("#define L(k) \\\n  k<<<1, 1>>>()\n  # pragma unroll /* a\n b */ x\ny"),
              "preprocessor:#define L(k) \\\n  k<<<1, 1>>>()\n"
              "preprocessor:# pragma unroll /* a\n b */ x\nidentifier:y\n");
    EXPECT_EQ(dump("#include \"a//b.h\" // c\nz"), "preprocessor:#include \"a//b.h\" // c\nidentifier:z\n");
    // '#' not at the start of a line is a punctuator (stringising in a macro body, or prose).
    EXPECT_EQ(dump("a # b"), "identifier:a\npunct:#\nidentifier:b\n");
    // CRLF line ends.
    EXPECT_EQ(dump("#if X\r\nint\r\n"), "preprocessor:#if X\r\nidentifier:int\n");
}

TEST(CudaLexer, SubRangeOffsetsAreAbsolute) {
    std::string src = "prose ```\nint x;\n``` tail";
    auto toks = cuda_lex(src, 10, 17);
    ASSERT_EQ(toks.size(), 3u);
    EXPECT_EQ(toks[0].begin, 10u);
    EXPECT_EQ(toks[0].end, 13u);
    EXPECT_EQ(toks[2].begin, 15u);
    EXPECT_EQ(toks[2].end, 16u);
    // A range ending inside a literal or comment never reads past it.
    auto cut = cuda_lex(src, 0, 3);
    ASSERT_EQ(cut.size(), 1u);
    EXPECT_EQ(cut[0].end, 3u);
    std::string s2 = "\"abc\" /* c */";
    auto t2 = cuda_lex(s2, 0, 8);
    ASSERT_EQ(t2.size(), 2u);
    EXPECT_EQ(t2[1].kind, CudaTokenKind::kBlockComment);
    EXPECT_EQ(t2[1].end, 8u);
    EXPECT_TRUE(cuda_lex("", 0, 0).empty());
}

TEST(CudaLexer, ArbitraryBytesAreCoveredInOrder) {
    std::mt19937 rng(7);
    const std::string alphabet = "ab_1.'\"\\/*#<>(){}[];,:=+-xR\n\t \r\x80\xC3\xA9\x01";
    for (int iter = 0; iter < 2000; ++iter) {
        std::string src;
        size_t len = rng() % 200;
        for (size_t k = 0; k < len; ++k)
            src += (rng() % 8 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
        uint32_t lo = static_cast<uint32_t>(src.empty() ? 0 : rng() % (src.size() + 1));
        uint32_t hi = lo + static_cast<uint32_t>(rng() % (src.size() - lo + 1));
        check_invariants(src, cuda_lex(src, lo, hi), lo, hi);
        if (HasFatalFailure()) {
            ADD_FAILURE() << "input: " << testing::PrintToString(src) << " range " << lo << ".." << hi;
            return;
        }
    }
}
