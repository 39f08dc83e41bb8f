// Robustness of the tagger: random bytes, random CUDA token soup, mutations and truncations of
// the real fixtures, and pathological inputs (deep nesting, thousands of launches). Fixed seeds
// and bounded iterations; every result must satisfy the span invariants and agree with
// tag_tokens. Run it under CUSET_SANITIZE=address,undefined as well.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cuset/cuda_lexer.h"
#include "cuset/tagger.h"
#include "tagger_test_util.h"
#include "test_util.h"

using cuset::TagSpan;
using cuset::TaggerOptions;

namespace {

const std::vector<std::string>& vocabulary() {
    static const std::vector<std::string> v = {
        "__global__", "__device__", "__host__", "__shared__", "extern", "\"C\"", "template", "<", ">", ">>",
        "<<<", ">>>", "void", "int", "float", "*", "&", "k", "n", "i", "(", ")", "{", "}", "[", "]", "[[", "]]",
        ";", ",", "=", "+=", "threadIdx", "blockIdx", ".", "x", "if", "for", "while", "else", "return", "\"",
        "'", "/*", "*/", "//", "\n", "#", "#define X ", "```", "```cuda\n", "\n```\n", "~~~\n", "atomicAdd",
        "__syncthreads", "cudaLaunchKernel", "cudaLaunchKernelEx", "cudaFuncSetAttribute", "dim3", "::",
        "->", "operator", "R\"x(", ")x\"", "\\\n", "__launch_bounds__", "cg", "sync", "thread_rank", " ",
        "  ", "\t", "0", "256", "?", ":", "<=", "&&", "\xC3\xA9", "\x80", "\r\n", "@", "`"};
    return v;
}

std::string fixture(const std::string& name) {
    return cuset::test::read_file(std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/tagger/" + name);
}

// Invariants of tag_text and agreement of tag_tokens with the per-byte bits.
void check(const std::string& text, const TaggerOptions& opts) {
    std::vector<TagSpan> spans = cuset::tag_text(text, opts);
    cuset::test::check_span_invariants(text, spans);
    if (testing::Test::HasFatalFailure()) return;
    auto bytes = cuset::test::bits_per_byte(spans, text.size());
    std::vector<std::pair<int32_t, int32_t>> toks;
    for (size_t b = 0; b < text.size(); b += 3) toks.emplace_back(int32_t(b), int32_t(std::min(b + 3, text.size())));
    toks.emplace_back(-1, -1);
    auto tok_bits = cuset::tag_tokens(spans, toks);
    for (size_t i = 0; i + 1 < toks.size(); ++i) {
        uint32_t want = 0;
        for (int32_t k = toks[i].first; k < toks[i].second; ++k) want |= bytes[k];
        ASSERT_EQ(tok_bits[i], want) << "token " << i;
    }
    ASSERT_EQ(tok_bits.back(), 0u);
}

#define CHECK_INPUT(text, opts)                                                             \
    do {                                                                                    \
        check(text, opts);                                                                  \
        if (HasFatalFailure()) {                                                            \
            ADD_FAILURE() << "input (" << (text).size() << " bytes): " << testing::PrintToString(text); \
            return;                                                                         \
        }                                                                                   \
    } while (0)

TaggerOptions options_for(uint32_t r) {
    TaggerOptions o;
    o.device_functions = (r & 1u) == 0;
    return o;
}

}  // namespace

TEST(TaggerFuzz, RandomBytes) {
    std::mt19937 rng(1234);
    for (int iter = 0; iter < 1500; ++iter) {
        std::string s;
        size_t len = rng() % 400;
        for (size_t k = 0; k < len; ++k) s += static_cast<char>(rng() % 256);
        if (iter % 2 == 0) s = "```\n" + s;  // also inside a fence
        CHECK_INPUT(s, options_for(rng()));
    }
}

TEST(TaggerFuzz, RandomTokenSoup) {
    std::mt19937 rng(99);
    const auto& vocab = vocabulary();
    for (int iter = 0; iter < 2500; ++iter) {
        std::string s;
        size_t n = rng() % 160;
        for (size_t k = 0; k < n; ++k) {
            s += vocab[rng() % vocab.size()];
            if (rng() % 3 == 0) s += ' ';
        }
        CHECK_INPUT(s, options_for(rng()));
    }
}

TEST(TaggerFuzz, MutatedFixtures) {
    std::mt19937 rng(2024);
    const auto& vocab = vocabulary();
    const std::vector<std::string> sources = {fixture("multi_kernel.cu"), fixture("response.md")};
    for (int iter = 0; iter < 600; ++iter) {
        std::string s = sources[iter % sources.size()];
        int n_mut = 1 + static_cast<int>(rng() % 6);
        for (int m = 0; m < n_mut && !s.empty(); ++m) {
            size_t a = rng() % s.size();
            size_t len = std::min<size_t>(rng() % 64, s.size() - a);
            switch (rng() % 5) {
                case 0: s.erase(a, len); break;                              // delete
                case 1: s.insert(a, s.substr(a, len)); break;                // duplicate
                case 2: s.insert(a, vocab[rng() % vocab.size()]); break;     // insert a token
                case 3: s[a] = static_cast<char>(rng() % 256); break;        // flip a byte
                default: s.resize(a); break;                                 // truncate
            }
        }
        CHECK_INPUT(s, options_for(rng()));
    }
}

TEST(TaggerFuzz, EveryPrefixOfTheFixtures) {
    for (const std::string& src : {fixture("multi_kernel.cu"), fixture("response.md")}) {
        ASSERT_FALSE(src.empty());
        for (size_t cut = 0; cut <= src.size(); cut += 11) {
            std::string s = src.substr(0, cut);
            CHECK_INPUT(s, TaggerOptions{});
        }
    }
}

TEST(TaggerFuzz, PathologicalInputsFinish) {
    const std::vector<std::string> inputs = {
        std::string(100000, '{'),
        std::string(100000, '}'),
        std::string(50000, '(') + std::string(50000, ']'),
        [] { std::string s; for (int i = 0; i < 20000; ++i) s += "k<<<"; return s; }(),
        [] { std::string s; for (int i = 0; i < 20000; ++i) s += "__global__ "; return s; }(),
        [] { std::string s; for (int i = 0; i < 20000; ++i) s += "template <"; return s; }(),
        [] { std::string s; for (int i = 0; i < 10000; ++i) s += "a<b<c<<<"; return s; }(),
        [] { std::string s; for (int i = 0; i < 5000; ++i) s += "```\n__global__ void k() {\n"; return s; }(),
        [] {
            std::string s = "__global__ void k(int* p) {\n";
            for (int i = 0; i < 20000; ++i) s += "int i" + std::to_string(i) + " = threadIdx.x + i" + std::to_string(i ? i - 1 : 0) + ";\n";
            return s + "}\n";
        }(),
        [] {
            std::string s = "void h() {\n";
            for (int i = 0; i < 5000; ++i) s += "int b" + std::to_string(i) + " = 1; k<<<b" + std::to_string(i) + ", 1>>>();\n";
            return s + "}\n";
        }(),
        [] { std::string s(200000, '"'); return s; }(),
        [] { std::string s; for (int i = 0; i < 30000; ++i) s += "R\"x("; return s; }(),
    };
    for (const std::string& s : inputs) CHECK_INPUT(s, TaggerOptions{});
}

TEST(TaggerFuzz, DeterministicResults) {
    std::string src = fixture("multi_kernel.cu");
    EXPECT_EQ(cuset::tag_text(src), cuset::tag_text(src));
}
