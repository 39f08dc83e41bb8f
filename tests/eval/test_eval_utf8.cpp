// eval never dies on a program's bytes: failing programs that print 0xFF, a lone surrogate
// (ED A0 80), NUL and a line of 200 'é' (clipped at 240 bytes, inside a character when the line
// is odd), on stdout and on stderr; compiler errors that hold such bytes; gen.py and compare.py
// lines that do. The command exits 0 and eval.json, eval.html and judged.jsonl are valid UTF-8,
// checked byte by byte and by nlohmann's strict parser.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuset/core/utf8_text.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"
#include "cuset/eval/report.h"
#include "cuset/judge/toolchain.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace cuset::eval;
using cuset::utf8_valid;
using cuset::test::read_file;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

std::string tasks_path() { return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl"; }

std::string q(const std::string& s) { return "'" + s + "'"; }

std::string repeat(const std::string& piece, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += piece;
    return s;
}

std::string e_acute(int n) { return repeat("\xC3\xA9", n); }

// A program whose compiler messages start with the file name `escaped` (octal escapes of a C
// string): the preprocessor prints a #line name as raw bytes, where it writes other non-ASCII text
// of a message as \U escapes under the judge's C.UTF-8.
std::string line_error(const std::string& escaped) { return "#line 1 \"" + escaped + "\"\n#error here\nint main() { return 0; }\n"; }

// A file's bytes are valid UTF-8 and, for JSON, parse under nlohmann's strict UTF-8 check
// (accept() runs the parser without building the value).
void expect_valid_file(const std::string& path, bool json, bool jsonl = false) {
    SCOPED_TRACE(path);
    ASSERT_TRUE(fs::exists(path));
    const std::string text = read_file(path);
    EXPECT_TRUE(utf8_valid(text));
    if (json) {
        EXPECT_TRUE(nlohmann::json::accept(text));
    }
    if (jsonl) {
        for (const std::string& line : cuset::test::lines_of(path)) EXPECT_TRUE(nlohmann::json::accept(line)) << line;
    }
}

// Programs whose bytes the judge keeps. The sources are ASCII (a results file is JSON): the bad
// bytes come from their escapes when they run, and from #line for the compiler (line_error).
const char* const kStdout = R"cu(#include <cstdio>
int main() {
    std::fputs("bad byte \xff\n", stdout);
    std::fputs("lone surrogate \xed\xa0\x80\n", stdout);
    std::fwrite("nul a\0b\n", 1, 8, stdout);
    std::fputs("x", stdout);
    for (int i = 0; i < 200; ++i) std::fputs("\xc3\xa9", stdout);
    std::fputs("\n", stdout);
    return 1;
}
)cu";
const char* const kStderr = R"cu(#include <cstdio>
int main() {
    for (int i = 0; i < 200; ++i) std::fputs("\xc3\xa9", stderr);
    std::fputs("\n", stderr);
    std::fwrite("\xff \xed\xa0\x80 nul a\0b\n", 1, 14, stderr);
    return 2;
}
)cu";
// Writes its declared output; the checker of task 100 prints it back as its last lines.
const char* const kOutputFile = R"cu(#include <cstdio>
int main() {
    std::FILE* f = std::fopen("data/c.bin", "wb");
    if (!f) return 5;
    std::fwrite("\xff \xed\xa0\x80 a\0b\n", 1, 10, f);
    std::fputs("y", f);
    for (int i = 0; i < 200; ++i) std::fputs("\xc3\xa9", f);
    std::fclose(f);
    return 0;
}
)cu";

}  // namespace

TEST(EvalUtf8, EvalExitsZeroOnAProgramsBytes) {
    const std::string dir = scratch_dir("eval_utf8_cli");
    // Task 0 as it is; task 100 with a checker that prints the program's output file back;
    // task 101 with a gen.py that fails printing bad bytes.
    const std::string fixture = read_file(tasks_path());
    nlohmann::ordered_json t0 = nlohmann::ordered_json::parse(fixture.substr(0, fixture.find('\n')));
    nlohmann::ordered_json t100 = t0, t101 = t0;
    t100["id"] = 100;
    t100["compare.py"] = "import sys\nout, ref = \"data/c.bin\", \"data/c_ref.bin\"\n"
                         "sys.stdout.buffer.write(open(out, \"rb\").read())\n";
    t101["id"] = 101;
    t101["gen.py"] = "import sys\nsys.stderr.buffer.write(b\"gen \\xff \\xed\\xa0\\x80 a\\x00b \" + \"\\u00e9\".encode() * 200)\n"
                     "sys.exit(1)\n";
    write_file(dir + "/tasks.jsonl", t0.dump() + "\n" + t100.dump() + "\n" + t101.dump() + "\n");
    const std::string ref = t0["bench.cu"];

    ResultRecord a, b, c;
    a.id = 0;
    a.task_name = "Vector_Add";
    a.codes = {ref, std::string(kStdout), std::string(kStderr), line_error("\\377\\355\\240\\200kernel.cu"),
               line_error(repeat("\\303\\251", 200)), line_error("x" + repeat("\\303\\251", 200))};
    b.id = 100;
    b.task_name = "Vector_Add";
    b.codes = {std::string(kOutputFile)};
    c.id = 101;
    c.task_name = "Vector_Add";
    c.codes = {ref};
    for (ResultRecord* r : {&a, &b, &c})
        for (const auto& code : r->codes) r->responses.push_back("```cuda\n" + *code + "\n```");
    write_results(dir + "/results.jsonl", {a, b, c});

    const std::string out = dir + "/out";
    auto r = cuset::test::run_cuset("eval --results " + q(dir + "/results.jsonl") + " --tasks " + q(dir + "/tasks.jsonl") +
                                    " --judge emulate --out " + q(out) + " --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_valid_file(out + "/eval.json", /*json=*/true);
    expect_valid_file(out + "/eval.html", /*json=*/false);
    EXPECT_TRUE(utf8_valid(r.out)) << "the console table";

    const nlohmann::json j = nlohmann::json::parse(read_file(out + "/eval.json"));
    ASSERT_EQ(j["tasks"].size(), 3u);
    const auto& s = j["tasks"][0]["samples"];
    ASSERT_EQ(s.size(), 6u);
    auto error_of = [&](const nlohmann::json& sample) { return sample["error"].get<std::string>(); };
    EXPECT_EQ(s[0]["status"], "pass") << error_of(s[0]);
    EXPECT_EQ(s[1]["status"], "run-failed") << error_of(s[1]);
    EXPECT_EQ(s[2]["status"], "run-failed") << error_of(s[2]);
    for (int i = 3; i < 6; ++i) EXPECT_EQ(s[i]["status"], "compile-error") << error_of(s[i]);
    // stdout's last line: "x" and 200 'é', clipped on a character boundary, never split.
    EXPECT_NE(error_of(s[1]).find("x" + e_acute(119) + "..."), std::string::npos) << error_of(s[1]);
    // stderr's last line: each invalid subpart a U+FFFD, the NUL kept (JSON's \u0000).
    EXPECT_NE(error_of(s[2]).find(kFffd + " " + kFffd + kFffd + kFffd + " nul a" + std::string(1, '\0') + "b"), std::string::npos)
        << error_of(s[2]);
    EXPECT_EQ(error_of(s[3]).rfind(kFffd + kFffd + kFffd + kFffd + "kernel.cu:", 0), 0u) << error_of(s[3]);
    // 200 'é' of a file name, clipped at 240 bytes: on a character boundary, whichever the parity.
    EXPECT_EQ(error_of(s[4]), e_acute(120) + "...") << error_of(s[4]);
    EXPECT_EQ(error_of(s[5]), "x" + e_acute(119) + "...") << error_of(s[5]);
    const auto& checker = j["tasks"][1]["samples"][0];
    EXPECT_EQ(checker["status"], "no-verdict") << checker.dump();
    EXPECT_NE(error_of(checker).find("y" + e_acute(20)), std::string::npos) << error_of(checker);
    const auto& gen = j["tasks"][2]["samples"][0];
    EXPECT_EQ(gen["status"], "gen-failed") << gen.dump();
    EXPECT_NE(error_of(gen).find("gen " + kFffd + " " + kFffd + kFffd + kFffd), std::string::npos) << error_of(gen);
    for (const auto& t : j["tasks"])
        for (const auto& sample : t["samples"]) EXPECT_LE(error_of(sample).size(), 400u) << error_of(sample);
    // The page shows no NUL: html_escape writes it as U+2400, a visible character.
    EXPECT_EQ(read_file(out + "/eval.html").find('\0'), std::string::npos);
}

// Through the library, with the bad bytes in the program's source itself (no results file can
// carry them): the compiler's messages hold them raw, and the journal, eval.json and eval.html
// are still valid UTF-8.
TEST(EvalUtf8, RawBytesInASourceReachNoFile) {
    const std::string dir = scratch_dir("eval_utf8_lib");
    const std::vector<Task> tasks = {load_tasks(tasks_path())[0]};
    ResultRecord r;
    r.id = 0;
    r.task_name = "Vector_Add";
    r.codes = {std::string("#error \xff\xfe bad \xed\xa0\x80 end\nint main() {}\n"),
               "#line 1 \"\xf4\x90\x80\x80\xc0\x80" + e_acute(200) + "\"\n#error here\nint main() {}\n",
               "#line 1 \"x" + e_acute(200) + "\"\n#error here\nint main() {}\n"};
    r.responses = {std::string("a"), std::string("b"), std::string("c")};
    JudgeOptions o;
    o.runner.mode = JudgeMode::kCompile;
    o.runner.work_dir = dir + "/work";
    o.runner.nvcc = cuset::judge::find_nvcc("", "eval.nvcc");
    o.runner.python = cuset::judge::find_python(CUSET_PYTHON, "eval.python");
    o.jobs = 2;
    o.journal = dir + "/judged.jsonl";
    JudgeSummary s = judge_results(tasks, {r}, o);
    ASSERT_EQ(s.tasks[0].samples.size(), 3u);
    for (const SampleResult& v : s.tasks[0].samples) {
        EXPECT_EQ(v.status, SampleStatus::kCompileError) << v.error;
        EXPECT_TRUE(utf8_valid(v.error)) << v.error;
    }
    EXPECT_NE(s.tasks[0].samples[0].error.find(kFffd + kFffd + " bad " + kFffd + kFffd + kFffd), std::string::npos)
        << s.tasks[0].samples[0].error;
    EXPECT_EQ(s.tasks[0].samples[1].error.rfind(kFffd + kFffd + kFffd + kFffd + kFffd + kFffd + e_acute(111) + "...", 0), 0u)
        << s.tasks[0].samples[1].error;
    EXPECT_EQ(s.tasks[0].samples[2].error, "x" + e_acute(119) + "...");
    expect_valid_file(o.journal, /*json=*/false, /*jsonl=*/true);
    // A program's message that would act on a terminal or a page (clear the screen, ring the
    // bell, return the carriage, a C1 CSI) reaches eval.html only as visible text, and eval.json
    // carries it byte for byte in JSON's escapes.
    const std::string acting = "\x1b[2J\x07over\rwrite \xC2\x9B" "31m";
    s.tasks[0].samples[0].error += acting;
    write_report(make_report(s, tasks_path(), ""), dir + "/out");
    expect_valid_file(dir + "/out/eval.json", /*json=*/true);
    expect_valid_file(dir + "/out/eval.html", /*json=*/false);
    const std::string page = read_file(dir + "/out/eval.html");
    for (size_t i = 0; i < page.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(page[i]);
        ASSERT_TRUE(c >= 0x20 || c == '\t' || c == '\n') << "control byte " << int(c) << " at " << i;
        if (c == 0xC2 && i + 1 < page.size()) {
            ASSERT_GE(static_cast<unsigned char>(page[i + 1]), 0xA0) << "C1 at " << i;
        }
    }
    EXPECT_NE(page.find("\xE2\x90\x9B[2J\xE2\x90\x87over\xE2\x90\x8Dwrite \\u009b31m"), std::string::npos);
    const nlohmann::json j = nlohmann::json::parse(read_file(dir + "/out/eval.json"));
    EXPECT_NE(j["tasks"][0]["samples"][0]["error"].get<std::string>().find(acting), std::string::npos);
}
