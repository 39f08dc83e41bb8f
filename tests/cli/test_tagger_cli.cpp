// `cuset-train tag` through the real binary: plain, ANSI, JSON and HTML output, stdin, the
// tagger.device_functions override and the exit codes for bad input.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "test_util.h"

using cuset::test::count_of;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

std::string fixture_path(const std::string& name) {
    return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/tagger/" + name;
}

}  // namespace

TEST(TagCli, PlainBracketsWhenNotATerminal) {
    auto r = run_cuset("tag " + fixture_path("multi_kernel.cu"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("[[__global__ void saxpy("), std::string::npos);
    EXPECT_NE(r.out.find("[[saxpy<<<blocks, threads, 0, stream>>>(n, a, x, y);]]"), std::string::npos);
    EXPECT_NE(r.out.find("[[extern \"C\" __global__ void histogram256("), std::string::npos);
    // The launch in the string literal stays untouched.
    EXPECT_NE(r.out.find("std::printf(\"launch with saxpy<<<blocks, threads>>>(n, a, x, y)\\n\");"), std::string::npos);
    EXPECT_EQ(r.out.find("\x1b["), std::string::npos);
    // Six kernels (one __device__ helper) and nine launch statements / API calls + config lines.
    EXPECT_EQ(count_of(r.out, "[[__global__") + count_of(r.out, "[[template") + count_of(r.out, "[[extern") +
                  count_of(r.out, "[[__device__"),
              6);
}

TEST(TagCli, AnsiColours) {
    auto r = run_cuset("tag --format ansi " + fixture_path("response.md"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\x1b[48;5;17m__global__ void softmax_rows("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\x1b[0m"), std::string::npos);
}

TEST(TagCli, JsonSpansMatchTheText) {
    const std::string path = fixture_path("multi_kernel.cu");
    const std::string text = read_file(path);
    auto r = run_cuset("tag --format json " + path);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["bytes"].get<size_t>(), text.size());
    ASSERT_GT(j["spans"].size(), 20u);
    std::set<std::string> categories;
    uint32_t prev_end = 0;
    for (const auto& s : j["spans"]) {
        uint32_t b = s["begin"], e = s["end"];
        EXPECT_LE(prev_end, b);
        EXPECT_LT(b, e);
        EXPECT_EQ(s["text"].get<std::string>(), text.substr(b, e - b));
        for (const auto& c : s["categories"]) categories.insert(c.get<std::string>());
        prev_end = e;
    }
    EXPECT_EQ(categories, (std::set<std::string>{"kernel", "launch", "indexing", "shared_memory", "sync",
                                                 "memory_access", "bounds_check"}));
    EXPECT_GT(j["summary_bytes"]["kernel"].get<uint64_t>(), 2000u);
}

TEST(TagCli, HtmlPageWithLegend) {
    std::string out = scratch_dir("tag-html") + "/tag.html";
    auto r = run_cuset("tag --format html --out " + out + " " + fixture_path("response.md"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string html = read_file(out);
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    for (const char* name : {"kernel", "launch", "indexing", "shared_memory", "sync", "memory_access", "bounds_check"})
        EXPECT_NE(html.find(std::string("<td>") + name + "</td>"), std::string::npos) << name;
    EXPECT_NE(html.find("<span class=\"k\" title=\"kernel\">template &lt;int BLOCK&gt;\n__global__ void softmax_rows("),
              std::string::npos);
    EXPECT_NE(html.find("&lt;&lt;&lt;grid, kThreads, 0, stream&gt;&gt;&gt;"), std::string::npos);
    EXPECT_EQ(html.find("<<<"), std::string::npos);  // everything escaped
    EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(TagCli, StdinAndDeviceFunctionsOverride) {
    std::string dir = scratch_dir("tag-stdin");
    write_file(dir + "/in.cu", "__device__ int f() { return 1; }\n__global__ void k() {}\n");
    auto r = run_command("'" + std::string(CUSET_BINARY) + "' tag - < " + dir + "/in.cu");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "[[__device__ int f() { return 1; }]]\n[[__global__ void k() {}]]\n");
    auto off = run_cuset("tag " + dir + "/in.cu --set tagger.device_functions=false");
    ASSERT_EQ(off.exit_code, 0) << off.err;
    EXPECT_EQ(off.out, "__device__ int f() { return 1; }\n[[__global__ void k() {}]]\n");
}

TEST(TagCli, BadInputAndFormat) {
    auto missing = run_cuset("tag /nonexistent/x.cu");
    EXPECT_EQ(missing.exit_code, 3);
    EXPECT_EQ(count_of(missing.err, "\n"), 1) << missing.err;
    EXPECT_NE(missing.err.find("/nonexistent/x.cu"), std::string::npos);
    auto fmt = run_cuset("tag --format pdf " + fixture_path("response.md"));
    EXPECT_EQ(fmt.exit_code, 2);
    auto none = run_cuset("tag");
    EXPECT_EQ(none.exit_code, 2);
}
