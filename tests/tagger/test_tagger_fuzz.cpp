// Robustness of the tagger: random bytes, random CUDA token soup, mutations and truncations of
// the real fixtures, and pathological inputs (deep nesting, thousands of launches). Fixed seeds
// and bounded iterations; every result must satisfy the span invariants and agree with
// tag_tokens; the spans are the same in fresh processes. Run it under
// CUSET_SANITIZE=address,undefined as well.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cuset/tagger/cuda_lexer.h"
#include "cuset/tagger/tagger.h"
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

namespace {

// The inputs of DeterministicResults: the fixtures, whole and cut, and random token soup (fixed
// seed), each with and without device-function tagging.
std::vector<std::pair<std::string, TaggerOptions>> determinism_inputs() {
    std::vector<std::string> texts;
    for (const std::string& src : {fixture("multi_kernel.cu"), fixture("response.md")}) {
        texts.push_back(src);
        for (size_t cut = 1; cut < 8; ++cut) texts.push_back(src.substr(0, src.size() * cut / 8));
    }
    std::mt19937 rng(7);
    const auto& vocab = vocabulary();
    for (int iter = 0; iter < 300; ++iter) {
        std::string s = iter % 2 ? "```cuda\n" : "";
        for (size_t k = 0, n = rng() % 200; k < n; ++k) s += vocab[rng() % vocab.size()] + (rng() % 3 ? " " : "");
        texts.push_back(s);
    }
    std::vector<std::pair<std::string, TaggerOptions>> out;
    for (const std::string& t : texts)
        for (uint32_t r : {0u, 1u}) out.emplace_back(t, options_for(r));
    return out;
}

// One line per input, in input order: its index, then each span as begin-end:bits. The inputs
// are tagged first to last, or last to first with `reverse`.
std::string dump_spans(const std::vector<std::pair<std::string, TaggerOptions>>& inputs, bool reverse) {
    std::vector<std::string> lines(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
        const size_t i = reverse ? inputs.size() - 1 - k : k;
        std::string line = std::to_string(i);
        for (const TagSpan& sp : cuset::tag_text(inputs[i].first, inputs[i].second))
            line += " " + std::to_string(sp.begin) + "-" + std::to_string(sp.end) + ":" + std::to_string(sp.bits);
        lines[i] = line + "\n";
    }
    std::string out;
    for (const std::string& l : lines) out += l;
    return out;
}

// "" when equal, else the first line where they differ, from both.
std::string first_difference(const std::string& a, const std::string& b) {
    if (a == b) return "";
    size_t at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
    auto line_at = [at](const std::string& s) {
        const size_t begin = s.rfind('\n', at == 0 ? 0 : at - 1);
        const size_t from = (begin == std::string::npos || at == 0) ? 0 : begin + 1;
        return s.substr(from, s.find('\n', from) - from);
    };
    return "first difference:\n  " + line_at(a) + "\n  " + line_at(b);
}

}  // namespace

// The same spans in two fresh processes (each with its own address layout, heap garbage made
// different by MALLOC_PERTURB_, and the inputs tagged in opposite orders) as in this one, twice:
// nothing may depend on addresses, uninitialised memory or what was tagged before. The program
// runs itself with CUSET_TAGGER_FUZZ_DUMP=FILE to be one of those processes.
TEST(TaggerFuzz, DeterministicResults) {
    const auto inputs = determinism_inputs();
    if (const char* out = std::getenv("CUSET_TAGGER_FUZZ_DUMP")) {
        const char* reverse = std::getenv("CUSET_TAGGER_FUZZ_REVERSE");
        cuset::test::write_file(out, dump_spans(inputs, reverse != nullptr && std::string(reverse) == "1"));
        return;
    }
    const std::string here = dump_spans(inputs, false);
    ASSERT_NE(here.find(':'), std::string::npos) << "no spans at all: nothing is compared";
    EXPECT_EQ(first_difference(here, dump_spans(inputs, true)), "") << "tagged again in reverse order";
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string dir = cuset::test::scratch_dir("tagger-fuzz-determinism");
    for (int k = 0; k < 2; ++k) {
        const std::string file = dir + "/spans" + std::to_string(k) + ".txt";
        auto r = cuset::test::run_command("CUSET_TAGGER_FUZZ_DUMP='" + file + "' CUSET_TAGGER_FUZZ_REVERSE=" +
                                          std::to_string(k) + " MALLOC_PERTURB_=" + (k ? "90" : "165") + " '" +
                                          self + "' --gtest_filter=TaggerFuzz.DeterministicResults");
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        EXPECT_EQ(first_difference(here, cuset::test::read_file(file)), "") << "process " << k;
    }
}
