// `data check --against`: the token spans a training sample shares with a benchmark task, on a
// hand-made benchmark and data set whose overlaps are counted by hand below.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/data/decontaminate.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

const std::string kReference =
    "__global__ void saxpy_ref(float alpha, const float* x, float* y, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = alpha * x[i] + y[i];\n"
    "}\n";

std::string tasks_file(const std::string& dir) {
    nlohmann::json a = {{"id", 7}, {"task_name", "SAXPY"}, {"task_description", "Scale and add two vectors."},
                        {"bench.cu", kReference}, {"inputs", {{{"name", "x"}}}}};
    nlohmann::json b = {{"id", 8}, {"level1_prompt", "Write a kernel that sums the rows of a matrix of floats into a vector."}};
    write_file(dir + "/tasks.jsonl", a.dump() + "\n" + b.dump() + "\n");
    return dir + "/tasks.jsonl";
}

std::string q(const std::string& s) { return "'" + s + "'"; }

}  // namespace

TEST(Decontaminate, TokensAreWordsAndSingleSymbols) {
    const std::string text = "int i = blockIdx.x*2;  // ok\n";
    std::vector<std::string> got;
    for (const auto& t : cuset::overlap_tokens(text)) got.push_back(text.substr(t.begin, t.end - t.begin));
    EXPECT_EQ(got, (std::vector<std::string>{"int", "i", "=", "blockIdx", ".", "x", "*", "2", ";", "/", "/", "ok"}));
}

TEST(Decontaminate, CountsSharedSpansOfNTokens) {
    std::string d = scratch_dir("decontaminate-unit");
    // The reference's tokens: "__global__ void saxpy_ref ( float alpha , const float * x , float * y ,
    // int n ) {" = 20, "int i = blockIdx . x * blockDim . x + threadIdx . x ;" = 15, "if ( i < n ) y [
    // i ] = alpha * x [ i ] + y [ i ] ;" = 23, "}" = 1: 59 tokens.
    ASSERT_EQ(cuset::overlap_tokens(kReference).size(), 59u);
    auto idx = cuset::benchmark_index_load(tasks_file(d), 10);
    ASSERT_EQ(idx.task_names, (std::vector<std::string>{"SAXPY", "8"}));
    // The reference's second and third lines, reformatted and with other case: 15 + 23 = 38 tokens,
    // so 38 - 10 + 1 = 29 shared 10-grams, all of task SAXPY.
    const std::string copied = "int I=BLOCKIDX.x*blockDim.x+threadIdx.x;\nif(i<n)y[i]=alpha*x[i]+y[i];";
    auto o = cuset::benchmark_overlap(idx, {copied});
    EXPECT_EQ(o.shared, 29);
    EXPECT_EQ(o.task_shared, 29);
    EXPECT_EQ(idx.task_names[o.task], "SAXPY");
    EXPECT_EQ(o.first, "int I=BLOCKIDX.x*blockDim.x");
    // Eight tokens of it (fewer than n) share nothing; a renamed variable breaks every span it is
    // in: of the 6 10-grams of this 15-token line, the 2 that hold "j" are gone.
    EXPECT_EQ(cuset::benchmark_overlap(idx, {"int i = blockIdx.x * blockDim"}).shared, 0);
    EXPECT_EQ(cuset::benchmark_overlap(idx, {"int j = blockIdx.x * blockDim.x + threadIdx.x;\n"}).shared, 4);
    // The second task's prompt (16 tokens, its final "." included) inside a longer one: 7 shared 10-grams.
    auto p = cuset::benchmark_overlap(idx, {"Please: write a kernel that sums the rows of a matrix of floats into a vector. Thanks"});
    EXPECT_EQ(p.shared, 7);
    EXPECT_EQ(idx.task_names[p.task], "8");
    // Spans do not run across two texts (the prompt and the response are separate).
    EXPECT_EQ(cuset::benchmark_overlap(idx, {"int i = blockIdx.x * blockDim", "x + threadIdx.x;"}).shared, 0);
}

TEST(Decontaminate, BadBenchmarkFilesNameTheLine) {
    std::string d = scratch_dir("decontaminate-bad");
    write_file(d + "/t.jsonl", "{\"id\": 1}\n[1, 2]\n");
    try {
        cuset::benchmark_index_load(d + "/t.jsonl");
        FAIL() << "no error";
    } catch (const cuset::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("t.jsonl:2: expected a JSON object"), std::string::npos) << e.what();
    }
    EXPECT_THROW(cuset::benchmark_index_load(d + "/missing.jsonl"), cuset::InputError);
}

TEST(Decontaminate, DataCheckAgainstRejectsAndDropsOverlappingSamples) {
    std::string d = scratch_dir("decontaminate-cli");
    const std::string tasks = tasks_file(d);
    nlohmann::json clean = {{"prompt", "Write a vector add kernel."},
                            {"response", "```cuda\n__global__ void add(const float* a, const float* b, float* c, int n) {\n"
                                         "  int k = blockIdx.x * blockDim.x + threadIdx.x;\n  if (k < n) c[k] = a[k] + b[k];\n}\n```"}};
    nlohmann::json copied = {{"prompt", "Write SAXPY."}, {"response", "```cuda\n" + kReference + "```"}};
    nlohmann::json prompt_only = {{"prompt", "Write a kernel that sums the rows of a matrix of floats into a vector."},
                                  {"response", "Here it is."}};
    nlohmann::json system_only = {{"messages", {{{"role", "system"}, {"content", kReference}},
                                                {{"role", "user"}, {"content", "hi"}},
                                                {{"role", "assistant"}, {"content", "hello"}}}}};
    const std::string input = clean.dump() + "\n" + copied.dump() + "\n" + prompt_only.dump() + "\n" + system_only.dump() + "\n";
    write_file(d + "/in.jsonl", input);
    // 16-token spans: the clean sample's index line (15 tokens) is too short to count.
    auto r = cuset::test::run_cuset("data check " + q(d + "/in.jsonl") + " --against " + q(tasks) + " --ngram 16 --out " +
                                    q(d + "/kept.jsonl") + " --report " + q(d + "/rep.json") + " --progress never");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    // The copied reference: its 59 tokens in the response block, 44 16-grams, all of SAXPY.
    EXPECT_NE(r.out.find("line 2 REJECTED: contaminated: shares 44 16-token span(s) with " + tasks +
                         ", 44 of them with task 'SAXPY' (first: '__global__ void saxpy_ref(float alpha, const float* x, float* y,')"),
              std::string::npos) << r.out;
    // The second task's prompt, 16 tokens: one span.
    EXPECT_NE(r.out.find("line 3 REJECTED: contaminated: shares 1 16-token span(s) with " + tasks +
                         ", 1 of them with task '8' (first: 'Write a kernel that sums the rows of a matrix of floats into a vector.')"),
              std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("line 1 REJECTED"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("against " + tasks + " (2 tasks, 16-token spans): 2 sample(s) overlap"), std::string::npos) << r.out;
    EXPECT_EQ(read_file(d + "/kept.jsonl"), clean.dump() + "\n" + system_only.dump() + "\n");
    auto rep = nlohmann::json::parse(read_file(d + "/rep.json"));
    EXPECT_EQ(rep["against"]["contaminated"], 2);
    EXPECT_EQ(rep["rejected_by_reason"]["contaminated"], 2);
    EXPECT_EQ(read_file(d + "/in.jsonl"), input);
    // The default span (50 tokens): only the copied reference (59 tokens: 10 spans) remains.
    auto r50 = cuset::test::run_cuset("data check " + q(d + "/in.jsonl") + " --against " + q(tasks) + " --progress never");
    EXPECT_EQ(r50.exit_code, 3) << r50.err;
    EXPECT_NE(r50.out.find("line 2 REJECTED: contaminated: shares 10 50-token span(s)"), std::string::npos) << r50.out;
    EXPECT_EQ(r50.out.find("line 3 REJECTED"), std::string::npos) << r50.out;
    // The output may not be the benchmark file.
    auto same = cuset::test::run_cuset("data check " + q(d + "/in.jsonl") + " --against " + q(tasks) + " --out " + q(tasks));
    EXPECT_EQ(same.exit_code, 2) << same.err;
    EXPECT_NE(same.err.find("is the input"), std::string::npos) << same.err;
}

TEST(Decontaminate, BundledDataIsCleanAgainstTheFixtureTasks) {
    // The bundled set against the project's CUDABench-format tasks (tests/fixtures/cudabench).
    const std::string src = CUSET_SOURCE_DIR;
    for (const char* f : {"train.jsonl", "eval.jsonl"}) {
        auto r = cuset::test::run_cuset("data check " + q(src + "/data/cuda-sft/" + f) + " --against " +
                                        q(src + "/tests/fixtures/cudabench/tasks.jsonl") + " --progress never");
        EXPECT_NE(r.out.find("4 tasks, 50-token spans): 0 sample(s) overlap"), std::string::npos) << r.out << r.err;
    }
}
