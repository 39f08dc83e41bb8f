// Robustness of the emulator's source rewrite: random bytes, random CUDA token soup, truncations
// and byte mutations of the bundled programs, and pathological inputs (deep nesting, thousands of
// launches, long runs that a backtracking matcher would revisit). Every input either rewrites or
// throws cuset::InputError, within a time bound, with an output linear in the input and the same
// on a second call. Fixed seeds and bounded iterations; run it under
// CUSET_SANITIZE=address,undefined as well.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cuset/core/error.h"
#include "cuset/emu/transform.h"
#include "test_util.h"

using cuset::emu::transform_program;

namespace {

const std::vector<std::string>& vocabulary() {
    static const std::vector<std::string> v = {
        "__global__", "__device__", "__shared__", "extern", "template", "<", ">", ">>", "<<", "<<<", ">>>", "void",
        "int", "float", "*", "&", "k", "n", "i", "(", ")", "()", "{", "}", "[", "]", "[]", ";", ",", "=", "::",
        "\"", "'", "\\", "/*", "*/", "//", "\n", "\r", "\r\n", " ", "  ", "\t", "#", "0", "256", "dim3(", "cudaLaunchKernel(",
        "cudaLaunchCooperativeKernel(", "(void*)", "(const void*)", "/*@prompt\n", "\n@*/\n", "__syncthreads();",
        "extern __shared__ float s[];", "__shared__ int a, b[4];", "k<<<1, 1>>>(x);", "\xC3\xA9", "\x80", "\x1c", "@"};
    return v;
}

// Rewrites `text` (throwing InputError is fine), checks the bound on time and size and that a
// second rewrite gives the same result.
void check(const std::string& text, double max_seconds = 2.0) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string out, again, err, err_again;
    try {
        out = transform_program(text);
    } catch (const cuset::InputError& e) {
        err = e.what();
    }
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(dt, max_seconds) << "input of " << text.size() << " bytes";
    if (err.empty()) {
        EXPECT_LE(out.size(), 64 * (text.size() + 1)) << "output not linear in the input";
    } else {
        EXPECT_EQ(err.find('\n'), std::string::npos) << "a message of more than one line: " << err;
        EXPECT_EQ(err.rfind("emulator rewrite: ", 0), 0u) << err;
    }
    try {
        again = transform_program(text);
    } catch (const cuset::InputError& e) {
        err_again = e.what();
    }
    EXPECT_EQ(again, out);
    EXPECT_EQ(err_again, err);
}

std::vector<std::string> bundled_programs() {
    std::vector<std::string> out;
    const std::string dir = std::string(CUSET_SOURCE_DIR) + "/data/cuda-sft/src";
    std::vector<std::string> paths;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".cu") paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    for (const std::string& p : paths) out.push_back(cuset::test::read_file(p));
    return out;
}

std::string repeat(const std::string& s, size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (size_t i = 0; i < n; ++i) out += s;
    return out;
}

}  // namespace

TEST(EmuTransformFuzz, RandomBytes) {
    std::mt19937 rng(1234);
    for (int it = 0; it < 2000; ++it) {
        std::string s(rng() % 200, '\0');
        for (char& c : s) c = static_cast<char>(rng() % 256);
        check(s);
        if (HasFailure()) return;
    }
}

TEST(EmuTransformFuzz, TokenSoup) {
    std::mt19937 rng(99);
    const auto& v = vocabulary();
    for (int it = 0; it < 3000; ++it) {
        std::string s;
        const size_t n = rng() % 80;
        for (size_t i = 0; i < n; ++i) s += v[rng() % v.size()];
        check(s);
        if (HasFailure()) return;
    }
}

TEST(EmuTransformFuzz, TruncationsAndMutationsOfTheBundledPrograms) {
    const std::vector<std::string> programs = bundled_programs();
    ASSERT_GE(programs.size(), 100u);
    std::mt19937 rng(7);
    const auto& v = vocabulary();
    for (size_t p = 0; p < programs.size(); ++p) {
        const std::string& src = programs[p];
        for (int k = 0; k < 6; ++k) check(src.substr(0, rng() % (src.size() + 1)));  // truncations
        for (int k = 0; k < 6; ++k) {  // a few random edits: byte flips, token insertions, deletions
            std::string s = src;
            for (int e = 0; e < 1 + static_cast<int>(rng() % 4); ++e) {
                const size_t at = rng() % (s.size() + 1);
                switch (rng() % 3) {
                case 0:
                    if (at < s.size()) s[at] = static_cast<char>(rng() % 256);
                    break;
                case 1: s.insert(at, v[rng() % v.size()]); break;
                default: s.erase(at, rng() % 40); break;
                }
            }
            check(s);
        }
        if (HasFailure()) return;
    }
}

TEST(EmuTransformFuzz, PathologicalInputsStayLinear) {
    const size_t n = 200000;
    check("k<<<1, 1>>>(" + std::string(n, '('));                       // unbalanced: throws
    check("k<<<1, 1>>>(" + std::string(n, '(') + std::string(n, ')') + ");");
    check(repeat("k<<<1, 1>>>(x);\n", n / 16));                        // many launches
    check(repeat("k<T><<<1, 1>>>(x);", n / 16));
    check("/*" + std::string(n, '<') + "*/" + repeat("a><<<1>>>();", n / 11));  // long backward scans
    check(repeat("__shared__ ", n / 11));                               // declarations without ';'
    check(repeat("__shared__ int a", n / 16) + ";");
    check("__shared__ " + std::string(n, ' ') + "x" + repeat(" ()", n / 3) + ";");
    check("extern __shared__ " + repeat("a ", n / 2));                  // a type that never ends
    check("extern __shared__" + std::string(n, ' ') + "x[];");
    check(repeat("extern __shared__ float s[];", n / 28));
    check(repeat("cudaLaunchKernel((void*)", n / 24));
    check("\"" + std::string(n, '\\'));
    check(repeat("/* */", n / 5) + "/*");
    check(repeat("//\n", n / 3) + "k<<<1,1>>>(x);");
    check(std::string(n, '<') + std::string(n, '>'));
    check(std::string(n, '>') + "<<<1>>>(x);");
}
