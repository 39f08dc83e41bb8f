// databuild: the keep policies and duplicate rules on hand-made candidates (hand-worked shingle
// similarities), the attempt log (appended lines read back, a torn last line cut off) and the
// candidates file's forms and errors.
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/databuild/attempt_log.h"
#include "cuset/databuild/build_run.h"
#include "cuset/databuild/candidates.h"
#include "cuset/databuild/keep.h"
#include "cuset/eval/cudabench.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace cuset::databuild;
using cuset::test::read_file;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

Candidate cand(size_t task, int64_t sample, int64_t tokens, const std::string& program, double run_s = -1) {
    Candidate c;
    c.task = task;
    c.sample = sample;
    c.tokens = tokens;
    c.run_seconds = run_s;
    c.prompt = "prompt of task " + std::to_string(task);
    c.program = program;
    return c;
}

}  // namespace

TEST(BuildKeep, ShingleSimilarityByHand) {
    // Six tokens a..f: shingles {abcde, bcdef}; the other's last token differs: {abcde, bcdeg}.
    // One shingle of three distinct ones is shared: 1/3.
    EXPECT_DOUBLE_EQ(shingle_similarity("a b c d e f", "a b c d e g"), 1.0 / 3);
    // Whitespace and case do not count (the tokens are compared lower-cased).
    EXPECT_DOUBLE_EQ(shingle_similarity("int  x=1;\n", "INT x = 1;"), 1.0);
    // Punctuation is a token of its own: "x=1;" is x = 1 ; (4 tokens, one shingle of 4) vs x = 2 ;.
    EXPECT_DOUBLE_EQ(shingle_similarity("x=1;", "x=2;"), 0.0);
    EXPECT_DOUBLE_EQ(shingle_similarity("", ""), 1.0);
}

TEST(BuildKeep, PoliciesPickPerTask) {
    const std::vector<Candidate> c = {cand(0, 1, 50, "long program one two three four five six", 0.30),
                                      cand(0, 2, 20, "short kernel alpha beta gamma delta", 0.10),
                                      cand(0, 3, 20, "another short kernel zeta eta theta iota", 0.05),
                                      cand(1, 2, 9, "task one kernel omega psi chi phi upsilon")};
    KeepResult first = keep_select(c, KeepPolicy::kFirst);
    EXPECT_EQ(first.kept, (std::vector<size_t>{0, 3}));
    KeepResult shortest = keep_select(c, KeepPolicy::kShortest);
    EXPECT_EQ(shortest.kept, (std::vector<size_t>{1, 3}));  // 20 tokens, the tie goes to the lower sample
    KeepResult fastest = keep_select(c, KeepPolicy::kFastest);
    EXPECT_EQ(fastest.kept, (std::vector<size_t>{2, 3}));  // task 1's only candidate has no time and stays
    KeepResult all = keep_select(c, KeepPolicy::kDistinct);
    EXPECT_EQ(all.kept, (std::vector<size_t>{0, 1, 2, 3}));
    EXPECT_EQ(all.exact_duplicates + all.near_duplicates, 0);
}

TEST(BuildKeep, DuplicatesExactOverallNearWithinATask) {
    const std::string prog = "__global__ void k(float* y, const float* x) { int i = threadIdx.x; y[i] = x[i] * 2.0f; }";
    std::string spaced = prog;
    spaced.replace(spaced.find("{ int"), 5, "{\n    int");  // whitespace only: an exact duplicate
    std::string commented = prog + " // doubled";            // 3 tokens more: near (Jaccard >= 0.9)
    std::vector<Candidate> c = {cand(0, 1, 10, prog), cand(0, 2, 10, spaced), cand(0, 3, 10, commented),
                                cand(1, 1, 10, prog), cand(1, 2, 10, commented)};
    ASSERT_GE(shingle_similarity(prog, commented), kNearDuplicate);
    KeepResult r = keep_select(c, KeepPolicy::kDistinct);
    // Task 1 has another prompt: its copy of the program is no duplicate of task 0's; its near copy of
    // its own first program is.
    EXPECT_EQ(r.kept, (std::vector<size_t>{0, 3}));
    EXPECT_EQ(r.exact_duplicates, 1);
    EXPECT_EQ(r.near_duplicates, 2);
    EXPECT_THROW(keep_policy_parse("best"), cuset::UsageError);
    EXPECT_EQ(keep_policy_parse("shortest"), KeepPolicy::kShortest);
}

TEST(BuildLog, AppendedAttemptsComeBackAndATornLineIsCut) {
    const std::string dir = scratch_dir("build_log");
    const std::string path = dir + "/build.jsonl";
    {
        AttemptLog log(path);
        EXPECT_EQ(log.resumed(), 0);
        AttemptRecord a;
        a.key = {"7", 2, 1};
        a.status = "compile-error";
        a.error = "kernel.cu(1): error: expected a \";\"";
        a.response = "```cuda\nint main( {\n```";
        a.tokens = 12;
        a.seconds = 0.5;
        log.append(a);
        a.key.round = 2;
        a.status = "pass";
        a.error = "";
        a.run_seconds = 0.25;
        log.append(a);
    }
    // A write cut short: half a line without its newline.
    const std::string whole = read_file(path);
    EXPECT_EQ(cuset::test::count_of(whole, "\n"), 2);
    write_file(path, whole + "{\"task\": \"7\", \"sam");
    AttemptLog back(path);
    EXPECT_EQ(back.torn_bytes(), 18);
    EXPECT_EQ(read_file(path), whole);
    ASSERT_EQ(back.resumed(), 2);
    const AttemptRecord& r1 = back.records().at(AttemptKey{"7", 2, 1});
    EXPECT_EQ(r1.status, "compile-error");
    EXPECT_EQ(r1.error, "kernel.cu(1): error: expected a \";\"");
    EXPECT_EQ(r1.response, "```cuda\nint main( {\n```");
    EXPECT_EQ(r1.tokens, 12);
    EXPECT_EQ(r1.run_seconds, -1);
    EXPECT_EQ(back.records().at(AttemptKey{"7", 2, 2}).run_seconds, 0.25);
    write_file(dir + "/bad.jsonl", "{\"task\": 1}\n");
    EXPECT_NE(cuset::test::input_error_of([&] { AttemptLog bad(dir + "/bad.jsonl"); }).find("bad.jsonl:1: not an attempt of a build"),
              std::string::npos);
}

TEST(BuildCandidates, BothFormsAndTheirErrors) {
    const std::string dir = scratch_dir("build_candidates");
    std::vector<cuset::eval::Task> tasks(2);
    tasks[0].id_text = "0";
    tasks[1].id_text = "abc";
    write_file(dir + "/c.jsonl",
               "{\"id\": 0, \"response\": \"one\"}\n"
               "{\"id\": 0, \"sample\": 2, \"round\": 3, \"response\": \"two\"}\n\n"
               "{\"id\": \"abc\", \"task_name\": \"X\", \"code1\": \"int main(){}\", \"response1\": null, "
               "\"code2\": null, \"response2\": \"r2\", \"code3\": null, \"response3\": null}\n");
    FileCandidates f(dir + "/c.jsonl", tasks);
    EXPECT_EQ(f.size(), 4u);
    std::vector<Request> q(5);
    q[0].key = {"0", 1, 1};
    q[1].key = {"0", 2, 3};
    q[2].key = {"abc", 1, 1};
    q[3].key = {"abc", 2, 1};
    q[4].key = {"abc", 3, 1};
    std::vector<Answer> a = f.answer(q);
    EXPECT_EQ(a[0].response, "one");
    EXPECT_EQ(a[1].response, "two");
    EXPECT_EQ(a[2].response, "```cuda\nint main(){}\n```");
    EXPECT_EQ(a[3].response, "r2");
    EXPECT_EQ(a[4].response, std::nullopt);
    auto error_of = [&](const std::string& text) {
        write_file(dir + "/bad.jsonl", text);
        return cuset::test::input_error_of([&] { FileCandidates bad(dir + "/bad.jsonl", tasks); });
    };
    EXPECT_NE(error_of("{\"id\": 0, \"response\": \"a\"}\n{\"id\": 0, \"response\": \"b\"}\n")
                  .find("bad.jsonl:2: a second answer for task 0, sample 1, round 1"),
              std::string::npos);
    EXPECT_NE(error_of("{\"id\": 5, \"response\": \"a\"}\n").find("bad.jsonl:1: id 5 is not a task"), std::string::npos);
    EXPECT_NE(error_of("{\"id\": 0, \"sample\": 0, \"response\": \"a\"}\n").find("\"sample\" must be an integer >= 1"),
              std::string::npos);
    EXPECT_NE(error_of("{\"id\": 0}\n").find("bad.jsonl:1: a candidate needs \"response\""), std::string::npos);
    EXPECT_NE(error_of("[1]\n").find("must be a JSON object"), std::string::npos);
    EXPECT_NE(error_of("{\"id\": 0, \"response\": \"a\"\n").find("bad.jsonl:1: not valid JSON"), std::string::npos);
}
