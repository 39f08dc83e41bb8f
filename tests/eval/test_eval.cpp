// eval: CUDABench's tasks file, prompts (against prompts worked out by hand from its builder),
// program extraction, the results file (read back field by field and by Python's json), the
// judge on the fixture tasks (tests/fixtures/cudabench: references compile; a broken program
// gives its compiler error line; a hanging compile times out; without a GPU the run stages are
// skipped with a notice; emulated, the references pass and wrong programs fail), pass@k.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/core/process.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"
#include "cuset/eval/report.h"
#include "cuset/judge/toolchain.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace cuset::eval;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

std::string tasks_path() { return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl"; }

const std::vector<Task>& fixture_tasks() {
    static const std::vector<Task> t = load_tasks(tasks_path());
    return t;
}

// The judge's tools are part of a machine set up by the README: their absence fails, never skips.
JudgeOptions options(const std::string& work, JudgeMode mode = JudgeMode::kCompile) {
    JudgeOptions o;
    o.runner.mode = mode;
    o.runner.work_dir = work;
    o.runner.nvcc = cuset::judge::find_nvcc("", "eval.nvcc");
    o.runner.python = cuset::judge::find_python(CUSET_PYTHON, "eval.python");
    o.jobs = 2;
    return o;
}

}  // namespace

TEST(EvalTasks, LoadsTheFixtureTasks) {
    const auto& t = fixture_tasks();
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[0].id, 0);
    EXPECT_EQ(t[0].id_text, "0");
    EXPECT_EQ(t[0].task_name, "Vector_Add");
    ASSERT_EQ(t[0].inputs.size(), 2u);
    EXPECT_EQ(t[0].inputs[1].name, "b");
    EXPECT_EQ(t[0].inputs[1].shape, "(1024,)");
    EXPECT_EQ(t[1].gpu, "NVIDIA H100");
    EXPECT_EQ(t[2].inputs[0].shape, "[32, 64]");  // a JSON list, as Python's str() writes it
    EXPECT_NE(t[3].bench_cu.find("__global__"), std::string::npos);
    EXPECT_NE(t[3].compare_py.find("exit(0)"), std::string::npos);
    EXPECT_EQ(t[3].line, 4);
}

TEST(EvalTasks, ErrorsNameFileAndLine) {
    std::string dir = scratch_dir("eval_tasks_errors");
    std::string good = read_file(tasks_path());
    std::string first = good.substr(0, good.find('\n') + 1);
    write_file(dir + "/bad_json.jsonl", first + "\n{\"id\": 1, \n");
    EXPECT_NE(cuset::test::input_error_of([&] { load_tasks(dir + "/bad_json.jsonl"); }).find("bad_json.jsonl:3: not valid JSON"),
              std::string::npos);
    write_file(dir + "/dup.jsonl", first + first);
    EXPECT_NE(cuset::test::input_error_of([&] { load_tasks(dir + "/dup.jsonl"); }).find("dup.jsonl:2: duplicate task id 0"), std::string::npos);
    nlohmann::json j = nlohmann::json::parse(first);
    j.erase("gen.py");
    write_file(dir + "/missing.jsonl", j.dump() + "\n");
    EXPECT_NE(cuset::test::input_error_of([&] { load_tasks(dir + "/missing.jsonl"); }).find("missing.jsonl:1: task has no \"gen.py\" field"),
              std::string::npos);
    j = nlohmann::json::parse(first);
    j["level2_prompt"] = 5;
    write_file(dir + "/type.jsonl", j.dump() + "\n");
    EXPECT_NE(cuset::test::input_error_of([&] { load_tasks(dir + "/type.jsonl"); }).find("type.jsonl:1: task field \"level2_prompt\" must be a string"),
              std::string::npos);
    EXPECT_NE(cuset::test::input_error_of([&] { load_tasks(dir + "/absent.jsonl"); }).find("cannot read tasks file"), std::string::npos);
}

TEST(EvalTasks, PythonStr) {
    using oj = nlohmann::ordered_json;
    EXPECT_EQ(python_str(oj::parse("[128, 128, 4]")), "[128, 128, 4]");
    EXPECT_EQ(python_str(oj::parse("\"(1, 2)\"")), "(1, 2)");
    EXPECT_EQ(python_str(oj::parse("[\"a\", \"it's\", true, null, 1.5, 1e-05, 100000000000000000.0]")),
              "['a', \"it's\", True, None, 1.5, 1e-05, 1e+17]");
    EXPECT_EQ(python_str(oj::parse("{\"n\": 2.0, \"m\": [0.1]}")), "{'n': 2.0, 'm': [0.1]}");
}

TEST(EvalPrompt, SystemPromptIsCudaBenchsAsSent) {
    const std::string& s = system_prompt();
    EXPECT_EQ(s.size(), 3667u);
    // Sent unformatted: the placeholder and the doubled braces reach the model.
    EXPECT_NE(s.find("Optimize for the {gpu}."), std::string::npos);
    EXPECT_NE(s.find("size_t size) {{\n"), std::string::npos);
    EXPECT_NE(s.find("1. **Output Format**: \n"), std::string::npos);  // its trailing spaces too
    // SHA-256 of CUDABench's SYSTEM_PROMPT (Generate/prompt.py), computed with Python.
    std::string dir = scratch_dir("eval_system_prompt");
    write_file(dir + "/s.txt", s);
    auto r = run_command(std::string("'") + CUSET_PYTHON + "' -c \"import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],'rb').read()).hexdigest())\" " + dir + "/s.txt");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "30cd6560c81703163f414fc08de357a9aaa2a4acebbe0a57a9eed1321f44b90e\n");
}

TEST(EvalPrompt, UserPromptsAsCudaBenchBuildsThem) {
    const auto& t = fixture_tasks();
    // Worked out by hand from CUDABench's template (Generate/prompt.py PROMPT, prompt_builder.py).
    EXPECT_EQ(build_user_prompt(t[2], 1, kDefaultGpuName),
              "\n### TASK SPECIFICATION\n\nTask Name:\nReLU_Activation\n\nTask Description:\n"
              "Implement the ReLU_Activation kernel: y = max(x, 0) for every element of a 32x64 float32 matrix \"x\"."
              "\n\nInput:\nx: float32, shape = [32, 64]\n\nOutput:\ny: float32, shape = [32, 64]\n\nGPU:\n"
              "NVIDIA GeForce RTX 4090\n\nCUDA program:\n");
    EXPECT_EQ(build_user_prompt(t[0], 2, ""),
              "\n### TASK SPECIFICATION\n\nTask Name:\nVector_Add\n\nTask Description:\n"
              "Add two vectors of 1024 floats element by element.\n\nInput:\na: float32, shape = (1024,)\n"
              "b: float32, shape = (1024,)\n\nOutput:\nc: float32, shape = (1024,)\n\nGPU:\nunknown\n\nCUDA program:\n");
    EXPECT_EQ(build_user_prompt(t[1], 3, ""),
              "\n### TASK SPECIFICATION\n\nTask Name:\nVector_Add\n\nTask Description:\n"
              "Compute the Vector_Add kernel on GPU using CUDA.\n\nInput:\na: float32, shape = (4096,)\n"
              "b: float32, shape = (4096,)\n\nOutput:\nc: float32, shape = (4096,)\n\nGPU:\nNVIDIA H100\n\nCUDA program:\n");
    EXPECT_EQ(build_user_prompt(t[3], 1, "A100").substr(build_user_prompt(t[3], 1, "A100").size() - 25),
              "GPU:\nA100\n\nCUDA program:\n");
    EXPECT_THROW(build_user_prompt(t[0], 4, ""), cuset::UsageError);
}

// A KernelBench problem's answer is read by KernelBench's extract_first_code(["python", "cpp"]):
// the first block whatever its word, then a leading "python", then a leading "cpp", removed.
TEST(EvalExtract, KernelBenchAnswersByKernelBenchsRule) {
    Task kb;
    kb.kernelbench = Task::KernelBench{};
    EXPECT_EQ(extract_code(kb, "x\n```python\nimport torch\n```\n```cpp\nint y;\n```"), "import torch");
    EXPECT_EQ(extract_code(kb, "```pythoncpp\nA\n```"), "A");  // both words, in that order
    EXPECT_EQ(extract_code(kb, "```py\nA\n```"), "py\nA");    // CUDABench's rule would drop "py"
    EXPECT_EQ(extract_code(Task{}, "```py\nA\n```"), "A");
    EXPECT_EQ(extract_code(kb, "```python\nA"), std::nullopt);
    EXPECT_EQ(system_prompt(kb), "You are a helpful assistant");
    kb.kernelbench->prompt = "KernelBench's prompt";
    EXPECT_EQ(build_user_prompt(kb, 3, "GPU"), "KernelBench's prompt");
}

TEST(EvalExtract, FirstFencedBlockStripped) {
    EXPECT_EQ(extract_code("Here:\n```cpp\nint main() {}\n```\nand\n```\nsecond\n```"), "int main() {}");
    EXPECT_EQ(extract_code("```cuda   \n\n  __global__ void k();  \n\n```"), "__global__ void k();");
    EXPECT_EQ(extract_code("```\nno language\n```"), "no language");
    EXPECT_EQ(extract_code("```c++\nx\n```"), "++\nx");  // \w+ stops at the first '+', as in its regex
    EXPECT_EQ(extract_code("a```cpp\n````x```"), "");  // the first closing ``` ends the block
    EXPECT_EQ(extract_code("```cpp#include <x>\n```"), "#include <x>");
    EXPECT_EQ(extract_code("``````"), "");
    EXPECT_EQ(extract_code("```cpp\xc3\xa9\nx```"), "x");              // Python's \w takes the letter
    EXPECT_EQ(extract_code("```cpp \xe2\x9c\x93 x```"), "\xe2\x9c\x93 x");  // but not a symbol
    EXPECT_EQ(extract_code("```\xc2\xa0y\xc2\xa0```"), "y");            // NBSP is whitespace
    EXPECT_EQ(extract_code("no fence at all"), std::nullopt);
    EXPECT_EQ(extract_code("```cpp\nnever closed"), std::nullopt);
    EXPECT_EQ(extract_code(""), std::nullopt);
}

TEST(EvalResults, WrittenAsCudaBenchAndReadBack) {
    std::string dir = scratch_dir("eval_results");
    ResultRecord a;
    a.id = 3;
    a.task_name = "Row_Sum";
    a.prompt = "\n### TASK\n\"quoted\" \\ tab\t ctrl\x01 caf\xc3\xa9 \xe2\x9c\x93\n";
    a.run_id = "0badcafe";
    a.codes = {std::string("int main() {}"), std::nullopt, std::string("x")};
    a.responses = {std::string("```cpp\nint main() {}\n```"), std::string("no code"), std::string("```\nx\n```")};
    ResultRecord b;
    b.id = 0;
    b.task_name = "Vector_Add";
    b.prompt = "p";
    b.run_id = "0badcafe";
    b.codes = {std::nullopt};
    b.responses = {std::nullopt};
    write_results(dir + "/results.jsonl", {a, b});
    std::string text = read_file(dir + "/results.jsonl");
    EXPECT_EQ(text.substr(0, text.find('\n')),
              "{\"id\": 3, \"task_name\": \"Row_Sum\", \"prompt\": \"\\n### TASK\\n\\\"quoted\\\" \\\\ tab\\t ctrl\\u0001 "
              "caf\xc3\xa9 \xe2\x9c\x93\\n\", \"run_id\": \"0badcafe\", \"code1\": \"int main() {}\", \"response1\": "
              "\"```cpp\\nint main() {}\\n```\", \"code2\": null, \"response2\": \"no code\", \"code3\": \"x\", "
              "\"response3\": \"```\\nx\\n```\"}");
    // Python's json.dumps(ensure_ascii=False) writes the same bytes, key order included.
    auto r = run_command(std::string("'") + CUSET_PYTHON + "' -c \"import json,sys\nfor l in open(sys.argv[1], encoding='utf-8'):\n"
                         "    l = l.rstrip('\\n')\n    assert json.dumps(json.loads(l), ensure_ascii=False) == l, l\nprint('same')\" " +
                         dir + "/results.jsonl");
    EXPECT_EQ(r.out, "same\n") << r.err;
    auto back = load_results(dir + "/results.jsonl");
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].id, 3);
    EXPECT_EQ(back[0].task_name, "Row_Sum");
    EXPECT_EQ(back[0].prompt, a.prompt);
    EXPECT_EQ(back[0].run_id, "0badcafe");
    EXPECT_EQ(back[0].codes, a.codes);
    EXPECT_EQ(back[0].responses, a.responses);
    EXPECT_EQ(back[0].line, 1);
    EXPECT_EQ(back[1].codes.size(), 1u);
    EXPECT_EQ(back[1].codes[0], std::nullopt);
    EXPECT_EQ(back[1].responses[0], std::nullopt);
    // CUDABench's single-code form and errors with file:line.
    write_file(dir + "/single.jsonl", "{\"id\": 1, \"code\": \"k\"}\n\n{\"task_name\": \"x\"}\n");
    std::string e = cuset::test::input_error_of([&] { load_results(dir + "/single.jsonl"); });
    EXPECT_NE(e.find("single.jsonl:3: result has no integer or string \"id\""), std::string::npos) << e;
    write_file(dir + "/single.jsonl", "{\"id\": 1, \"code\": \"k\"}\n");
    auto s = load_results(dir + "/single.jsonl");
    ASSERT_EQ(s[0].codes.size(), 1u);
    EXPECT_EQ(s[0].codes[0], "k");
    EXPECT_EQ(s[0].task_name, "Unknown");
    EXPECT_EQ(new_run_id().size(), 8u);
}

// KernelBench's fast_p, worked by hand: six problems, sample 1 of five correct with speed-ups
// 0.5, 1.1, 1.3, 2.5 and 12 (flagged: above 10x, never credited), one wrong; a CUDABench task
// beside them is no problem of KernelBench's. fast_0 = 5/6, fast_1 = 3/6 (1.1, 1.3, 2.5),
// fast_1.2 = 2/6, fast_1.5 = fast_2 = 1/6.
TEST(EvalReport, KernelBenchFastPWorkedByHand) {
    std::vector<TaskResult> tasks;
    auto add = [&](bool kb, SampleStatus st, std::optional<double> speedup) {
        TaskResult t;
        t.kernelbench = kb;
        SampleResult s;
        s.status = st;
        s.speedup = speedup;
        t.samples.push_back(s);
        tasks.push_back(t);
    };
    for (double v : {0.5, 1.1, 1.3, 2.5, 12.0}) add(true, SampleStatus::kPass, v);
    add(true, SampleStatus::kMismatch, std::nullopt);
    add(false, SampleStatus::kPass, 3.0);
    const std::optional<FastP> f = kernelbench_fast_p(tasks, JudgeMode::kGpu);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->tasks, 6);
    EXPECT_EQ(f->correct, 5);
    EXPECT_EQ(f->timed, 5);
    EXPECT_EQ(f->flagged, 1);
    const std::vector<std::pair<double, double>> want = {{0, 5.0 / 6}, {1, 3.0 / 6}, {1.2, 2.0 / 6}, {1.5, 1.0 / 6}, {2, 1.0 / 6}};
    ASSERT_EQ(f->fast.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(f->fast[i].first, want[i].first);
        ASSERT_TRUE(f->fast[i].second) << want[i].first;
        EXPECT_DOUBLE_EQ(*f->fast[i].second, want[i].second) << want[i].first;
    }
    EXPECT_NE(f->note.find("1 speed-up(s) above 10x flagged"), std::string::npos) << f->note;
    // Without timings (the emulating judge): fast_0 is the correctness rate, the rest unknown.
    for (TaskResult& t : tasks) t.samples[0].speedup.reset();
    const std::optional<FastP> e = kernelbench_fast_p(tasks, JudgeMode::kEmulate);
    ASSERT_TRUE(e);
    EXPECT_DOUBLE_EQ(e->fast[0].second.value_or(-1), 5.0 / 6);
    for (size_t i = 1; i < e->fast.size(); ++i) EXPECT_FALSE(e->fast[i].second) << e->fast[i].first;
    EXPECT_NE(e->note.find("timed 0 of 5"), std::string::npos) << e->note;
    // Compile-only: nothing ran. No KernelBench problem: no figures.
    EXPECT_FALSE(kernelbench_fast_p(tasks, JudgeMode::kCompile)->fast[0].second);
    EXPECT_FALSE(kernelbench_fast_p({tasks.back()}, JudgeMode::kGpu));
}

TEST(EvalPassAtK, UnbiasedEstimatorAgainstHandValues) {
    EXPECT_DOUBLE_EQ(pass_at_k(3, 1, 1), 1.0 / 3);
    EXPECT_DOUBLE_EQ(pass_at_k(3, 1, 2), 2.0 / 3);  // 1 - C(2,2)/C(3,2)
    EXPECT_DOUBLE_EQ(pass_at_k(3, 1, 3), 1.0);
    EXPECT_NEAR(pass_at_k(5, 2, 2), 0.7, 1e-12);      // 1 - C(3,2)/C(5,2) = 1 - 3/10
    EXPECT_NEAR(pass_at_k(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-12);  // C(7,5)=21, C(10,5)=252
    EXPECT_DOUBLE_EQ(pass_at_k(10, 0, 5), 0.0);
    EXPECT_DOUBLE_EQ(pass_at_k(4, 4, 1), 1.0);
    EXPECT_DOUBLE_EQ(pass_at_k(2, 1, 3), 0.0);  // k > n: undefined, reported as 0 and never asked for
}

TEST(EvalReport, FiguresOverallAndPerFamily) {
    JudgeSummary s;
    s.mode = JudgeMode::kGpu;
    auto sample = [](int i, SampleStatus st, bool compiled, std::optional<bool> ran, std::optional<bool> fn, int64_t tok) {
        SampleResult r;
        r.index = i;
        r.status = st;
        r.compiled = compiled;
        r.ran = ran;
        r.functional = fn;
        r.generated_tokens = tok;
        return r;
    };
    TaskResult a{0, "0", "Vector_Add", {sample(1, SampleStatus::kPass, true, true, true, 10),
                                       sample(2, SampleStatus::kCompileError, false, {}, {}, 20),
                                       sample(3, SampleStatus::kMismatch, true, true, false, 30)}};
    TaskResult b{1, "1", "Vector_Add", {sample(1, SampleStatus::kRunFailed, true, false, false, 40),
                                       sample(2, SampleStatus::kPass, true, true, true, 50),
                                       sample(3, SampleStatus::kNoCode, false, {}, {}, 60)}};
    TaskResult c{2, "2", "Row_Sum", {sample(1, SampleStatus::kCompileError, false, {}, {}, 70),
                                    sample(2, SampleStatus::kCompileError, false, {}, {}, 80),
                                    sample(3, SampleStatus::kCompileTimeout, false, {}, {}, 90)}};
    s.tasks = {a, b, c};
    EvalReport r = make_report(s, "tasks.jsonl", "results.jsonl");
    const Figures& o = r.overall;
    EXPECT_EQ(o.label, "gpu");
    EXPECT_EQ(o.tasks, 3);
    EXPECT_EQ(o.samples, 9);
    EXPECT_EQ(o.compiled, 4);
    EXPECT_EQ(o.ran, 3);
    EXPECT_EQ(o.functional, 2);
    EXPECT_EQ(o.no_code, 1);
    EXPECT_EQ(o.pass1, 1);
    EXPECT_EQ(o.pass1_tasks, 3);
    EXPECT_EQ(o.passk, 2);
    EXPECT_EQ(o.correct1, 1);
    EXPECT_EQ(o.correctk, 2);
    ASSERT_EQ(o.pass_at.size(), 3u);
    EXPECT_NEAR(o.pass_at[0], (1.0 / 3 + 1.0 / 3 + 0) / 3, 1e-12);
    EXPECT_NEAR(o.pass_at[1], (2.0 / 3 + 2.0 / 3 + 0) / 3, 1e-12);
    EXPECT_NEAR(o.pass_at[2], 2.0 / 3, 1e-12);
    EXPECT_DOUBLE_EQ(o.mean_tokens, 50.0);
    ASSERT_EQ(r.families.size(), 2u);
    EXPECT_EQ(r.families[0].first, "Row_Sum");
    EXPECT_EQ(r.families[0].second.passk, 0);
    EXPECT_EQ(r.families[1].first, "Vector_Add");
    EXPECT_EQ(r.families[1].second.passk, 2);
    EXPECT_EQ(r.families[1].second.compiled, 4);
    auto j = report_json(r);
    EXPECT_EQ(j["judge"], "gpu");
    EXPECT_NEAR(j["overall"]["pass@1"].get<double>(), 1.0 / 3, 1e-12);
    EXPECT_NEAR(j["overall"]["pass@k_unbiased"]["2"].get<double>(), 4.0 / 9, 1e-12);
    EXPECT_EQ(j["tasks"][0]["samples"][1]["status"], "compile-error");
    std::string table = report_table(r);
    EXPECT_NE(table.find("overall"), std::string::npos) << table;
    EXPECT_NE(table.find("33.3%"), std::string::npos) << table;
    std::string html = report_html(r);
    EXPECT_EQ(cuset::test::count_of(html, "<tr><td class=num>"), 3) << "one row per task";
    // Compile-only: the success criterion is compiling, run figures are null.
    s.mode = JudgeMode::kCompile;
    EvalReport rc = make_report(s, "t", "r");
    EXPECT_EQ(rc.overall.label, "compile-only");
    EXPECT_EQ(rc.overall.pass1, 2);
    EXPECT_TRUE(report_json(rc)["overall"]["run_rate"].is_null());
    EXPECT_NE(report_table(rc).find("pass@1 (compile-only)"), std::string::npos);
}

// Unjudged is never a way to a higher score. Two tasks of three samples, one unjudged:
//   task A: pass, mismatch, compile-error
//   task B: unjudged (the emulator's limit), pass, mismatch
// By hand, the headline over every sample (the unjudged one as not passing) and beside it the
// judged samples alone:
//   pass@1: A passes, B's sample 1 does not          -> 1/2 = 50%;   judged only 1/1 = 100%
//   pass@3: both have a pass                         -> 2/2;         judged only 2/2
//   unbiased, n = 3, c = 1 for both: k=1 1/3, k=2 1 - C(2,2)/C(3,2) = 2/3, k=3 1
//   judged only, A n=3 c=1, B n=2 c=1: k=1 (1/3 + 1/2)/2 = 5/12, k=2 (2/3 + 1)/2 = 5/6, k=3 1 (A alone)
//   correctness@1 (exit 0): A's sample 1 ran       -> 1/2;         judged only 1/1
//   run rate: 4 samples ran (A1, A2, B2, B3)         -> 4/6;         judged only 4/5
// And B's sample 1 as a plain failure instead gives the same headline: becoming unjudged gains nothing.
TEST(EvalReport, UnjudgedSamplesCountAsNotPassing) {
    auto sample = [](int i, SampleStatus st, bool compiled, std::optional<bool> ran, std::optional<bool> fn) {
        SampleResult r;
        r.index = i;
        r.status = st;
        r.compiled = compiled;
        r.ran = ran;
        r.functional = fn;
        return r;
    };
    SampleResult unjudged = sample(1, SampleStatus::kUnjudged, true, {}, {});
    unjudged.error = "emulator: no result within the limit (timed out after 3 s, 3 s of CPU): too slow to emulate";
    JudgeSummary s;
    s.mode = JudgeMode::kEmulate;
    s.tasks = {TaskResult{0, "0", "Vector_Add", {sample(1, SampleStatus::kPass, true, true, true),
                                                 sample(2, SampleStatus::kMismatch, true, true, false),
                                                 sample(3, SampleStatus::kCompileError, false, {}, {})}},
               TaskResult{1, "1", "Vector_Add", {unjudged, sample(2, SampleStatus::kPass, true, true, true),
                                                 sample(3, SampleStatus::kMismatch, true, true, false)}}};
    const EvalReport r = make_report(s, "tasks.jsonl", "results.jsonl");
    const Figures& o = r.overall;
    EXPECT_EQ(o.unjudged, 1);
    EXPECT_EQ(o.pass1, 1);
    EXPECT_EQ(o.pass1_tasks, 2);
    EXPECT_EQ(o.pass1_judged_tasks, 1);
    EXPECT_EQ(o.passk, 2);
    EXPECT_EQ(o.passk_tasks, 2);
    EXPECT_EQ(o.passk_judged_tasks, 2);
    const auto j = report_json(r)["overall"];
    EXPECT_DOUBLE_EQ(j["pass@1"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(j["pass@1_judged"].get<double>(), 1.0);
    EXPECT_EQ(j["pass@1_passed"], 1);
    EXPECT_EQ(j["pass@1_tasks"], 2);
    EXPECT_EQ(j["pass@1_judged_tasks"], 1);
    EXPECT_DOUBLE_EQ(j["pass@K"].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(j["pass@K_judged"].get<double>(), 1.0);
    EXPECT_EQ(j["pass@K_judged_tasks"], 2);
    EXPECT_NEAR(j["pass@k_unbiased"]["1"].get<double>(), 1.0 / 3, 1e-12);
    EXPECT_NEAR(j["pass@k_unbiased"]["2"].get<double>(), 2.0 / 3, 1e-12);
    EXPECT_NEAR(j["pass@k_unbiased"]["3"].get<double>(), 1.0, 1e-12);
    EXPECT_NEAR(j["pass@k_unbiased_judged"]["1"].get<double>(), 5.0 / 12, 1e-12);
    EXPECT_NEAR(j["pass@k_unbiased_judged"]["2"].get<double>(), 5.0 / 6, 1e-12);
    EXPECT_NEAR(j["pass@k_unbiased_judged"]["3"].get<double>(), 1.0, 1e-12);
    EXPECT_DOUBLE_EQ(j["correctness@1"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(j["correctness@1_judged"].get<double>(), 1.0);
    EXPECT_NEAR(j["run_rate"].get<double>(), 4.0 / 6, 1e-12);
    EXPECT_NEAR(j["run_rate_judged"].get<double>(), 4.0 / 5, 1e-12);
    EXPECT_EQ(j["unjudged_by_cause"]["emulator: no result within the limit"], 1);
    const std::string table = report_table(r);
    EXPECT_NE(table.find("pass@1: 50.0% (1/2; judged only 100.0%, 1/1)\n"), std::string::npos) << table;
    EXPECT_NE(table.find("pass@3: 100.0% (2/2)\n"), std::string::npos) << "every task has a judged sample: one rate" << table;
    EXPECT_NE(table.find("1 of 6 samples unjudged (emulator: no result within the limit 1), each counted as not passing"),
              std::string::npos) << table;
    EXPECT_NE(table.find("unbiased pass@k, judged only: k=1 0.4167 k=2 0.8333 k=3 1.0000"), std::string::npos) << table;
    const std::string html = report_html(r);
    EXPECT_NE(html.find("pass@1: 50.0% (1/2; judged only 100.0%, 1/1)"), std::string::npos);
    EXPECT_NE(html.find("<th>pass@1 judged only</th>"), std::string::npos);

    // The same sample as a plain failure: the headline is unchanged; only the judged-only rate moved.
    s.tasks[1].samples[0] = sample(1, SampleStatus::kRunFailed, true, false, false);
    const Figures failed = make_report(s, "t", "r").overall;
    EXPECT_EQ(failed.pass1, o.pass1);
    EXPECT_EQ(failed.pass1_tasks, o.pass1_tasks);
    EXPECT_EQ(failed.pass_at, o.pass_at);
    EXPECT_EQ(failed.pass1_judged_tasks, 2);
    EXPECT_EQ(report_table(make_report(s, "t", "r")).find("judged only"), std::string::npos) << "every sample judged";
}

TEST(EvalJudge, ReferencesCompileAndRunStagesAreSkippedWithANotice) {
    std::string work = scratch_dir("eval_judge_refs");
    JudgeSummary s = judge_results(fixture_tasks(), reference_records(fixture_tasks()), options(work));
    ASSERT_EQ(s.tasks.size(), 4u);
    for (const TaskResult& t : s.tasks) {
        ASSERT_EQ(t.samples.size(), 1u);
        EXPECT_EQ(t.samples[0].status, SampleStatus::kCompiled) << t.id_text << ": " << t.samples[0].error;
        EXPECT_TRUE(t.samples[0].compiled);
        EXPECT_FALSE(t.samples[0].ran.has_value());
    }
    EXPECT_NE(s.notice.find("compile-only"), std::string::npos);
    EvalReport r = make_report(s, tasks_path(), "");
    EXPECT_EQ(r.overall.compiled, 4);
    EXPECT_EQ(r.overall.pass1, 4);
    EXPECT_TRUE(fs::is_empty(work)) << "sample folders are removed";
}

// The journal: every verdict is appended as it is reached; a rerun takes from it exactly the
// samples whose task files, program and judge settings are unchanged, and judges the rest. A torn
// last line (a kill in the middle of an append) is dropped and cut off.
TEST(EvalJudge, AJournalKeepsEachVerdictAndARerunJudgesOnlyWhatChanged) {
    std::string work = scratch_dir("eval_judge_journal");
    const std::string journal = scratch_dir("eval_judge_journal_file") + "/judged.jsonl";
    std::vector<ResultRecord> recs = reference_records(fixture_tasks());
    recs[1].codes.push_back(std::string("int main( {\n"));
    JudgeOptions o = options(work);
    o.journal = journal;
    JudgeSummary first = judge_results(fixture_tasks(), {recs[0], recs[1]}, o);
    EXPECT_EQ(first.from_journal, 0);
    ASSERT_EQ(cuset::test::lines_of(journal).size(), 3u);
    ASSERT_EQ(first.tasks[1].samples[1].status, SampleStatus::kCompileError);
    { std::ofstream(journal, std::ios::app) << "{\"key\": \"0123"; }  // torn: no newline

    recs[0].codes[0] = *recs[0].codes[0] + "\n// changed\n";  // task 0's program is another one now
    JudgeSummary second = judge_results(fixture_tasks(), recs, o);
    EXPECT_EQ(second.from_journal, 2) << "task 1's two samples, unchanged";
    ASSERT_EQ(second.tasks.size(), 4u);
    for (size_t t : {0u, 2u, 3u}) EXPECT_EQ(second.tasks[t].samples[0].status, SampleStatus::kCompiled) << t;
    EXPECT_EQ(second.tasks[1].samples[0].status, SampleStatus::kCompiled);
    EXPECT_EQ(second.tasks[1].samples[1].status, SampleStatus::kCompileError);
    EXPECT_EQ(second.tasks[1].samples[1].error, first.tasks[1].samples[1].error);
    EXPECT_EQ(second.tasks[1].samples[1].index, 2);
    const std::vector<std::string> lines = cuset::test::lines_of(journal);
    EXPECT_EQ(lines.size(), 6u) << "3 kept, 3 appended, the torn line cut off";
    for (const std::string& l : lines) EXPECT_TRUE(nlohmann::json::accept(l)) << l;

    o.runner.compile_timeout_s += 1;  // other judge settings: nothing is taken from the journal
    EXPECT_EQ(judge_results(fixture_tasks(), {recs[1]}, o).from_journal, 0);
}

// A journal line whose fields have other types than the judge writes (a hand edit) is skipped and
// its sample judged again; the others are taken.
TEST(EvalJudge, AJournalLineWithAMistypedFieldIsJudgedAgain) {
    std::string work = scratch_dir("eval_judge_journal_types");
    const std::string journal = scratch_dir("eval_judge_journal_types_file") + "/judged.jsonl";
    std::vector<ResultRecord> recs = reference_records(fixture_tasks());
    JudgeOptions o = options(work);
    o.journal = journal;
    judge_results(fixture_tasks(), {recs[0], recs[1]}, o);
    std::vector<std::string> lines = cuset::test::lines_of(journal);
    ASSERT_EQ(lines.size(), 2u);
    nlohmann::json j = nlohmann::json::parse(lines[0]);
    j["compiled"] = "yes";
    j["seconds"] = "fast";
    std::ofstream(journal, std::ios::trunc) << j.dump() << "\n" << lines[1] << "\n";
    const JudgeSummary again = judge_results(fixture_tasks(), {recs[0], recs[1]}, o);
    EXPECT_EQ(again.from_journal, 1) << "the mistyped line's sample is judged again, the other is taken";
    int judged = 0;
    for (const TaskResult& t : again.tasks)
        for (const SampleResult& r : t.samples) {
            EXPECT_EQ(r.status, SampleStatus::kCompiled) << t.id_text;
            ++judged;
        }
    EXPECT_EQ(judged, 2);
}

// A verdict is taken from the journal only where the judge that reads it could have reached it: a
// line of the right key (task, program, settings) that says "pass" under the compile-only judge
// (which stops at "compiled") is a forgery or another judge's, and its sample is judged again.
TEST(EvalJudge, AJournalVerdictThisJudgeCannotReachIsJudgedAgain) {
    std::string work = scratch_dir("eval_judge_journal_mode");
    const std::string journal = scratch_dir("eval_judge_journal_mode_file") + "/judged.jsonl";
    std::vector<ResultRecord> recs = reference_records(fixture_tasks());
    recs[0].codes[0] = std::string("int main( {\n");
    JudgeOptions o = options(work);
    o.journal = journal;
    judge_results(fixture_tasks(), {recs[0]}, o);
    std::vector<std::string> lines = cuset::test::lines_of(journal);
    ASSERT_EQ(lines.size(), 1u);
    nlohmann::json j = nlohmann::json::parse(lines[0]);
    ASSERT_EQ(j["status"], "compile-error");
    j["status"] = "pass";
    j["compiled"] = true;
    j["ran"] = true;
    j["functional"] = true;
    std::ofstream(journal, std::ios::trunc) << j.dump() << "\n";
    const JudgeSummary again = judge_results(fixture_tasks(), {recs[0]}, o);
    EXPECT_EQ(again.from_journal, 0);
    EXPECT_EQ(again.tasks[0].samples[0].status, SampleStatus::kCompileError);
}

TEST(EvalJudge, BrokenProgramGivesItsErrorLineAndAHangingCompileTimesOut) {
    std::string work = scratch_dir("eval_judge_broken");
    ResultRecord r;
    r.id = 0;
    r.task_name = "Vector_Add";
    r.codes = {fixture_tasks()[0].bench_cu + "\nint broken( { return undeclared_name; }\n",
               // 2^40 inclusions of itself: the preprocessor never ends
               "#if __INCLUDE_LEVEL__ < 40\n#include __FILE__\n#include __FILE__\n#endif\nint main() { return 0; }\n",
               std::nullopt};
    r.responses = {std::string("a"), std::string("b"), std::string("no fence")};
    JudgeOptions o = options(work + "/work");
    ResultRecord hang = r;
    hang.codes = {r.codes[1]};
    hang.responses = {r.responses[1]};
    r.codes[1] = fixture_tasks()[0].bench_cu;  // compiles
    JudgeSummary s = judge_results(fixture_tasks(), {r}, o);
    ASSERT_EQ(s.tasks.size(), 1u);
    const auto& v = s.tasks[0].samples;
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].status, SampleStatus::kCompileError);
    EXPECT_NE(v[0].error.find("error"), std::string::npos) << v[0].error;
    EXPECT_NE(v[0].error.find("kernel.cu("), std::string::npos) << v[0].error;
    EXPECT_EQ(v[1].status, SampleStatus::kCompiled);
    EXPECT_EQ(v[1].error, "");
    EXPECT_EQ(v[2].status, SampleStatus::kNoCode);
    // The hanging compile alone with a short limit (the broken one may take longer on a busy machine).
    o.runner.compile_timeout_s = 3;
    auto t0 = std::chrono::steady_clock::now();
    JudgeSummary h = judge_results(fixture_tasks(), {hang}, o);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const SampleResult& hs = h.tasks[0].samples[0];
    EXPECT_EQ(hs.status, SampleStatus::kCompileTimeout);
    EXPECT_EQ(hs.error, "nvcc timed out after 3 s");
    EXPECT_GE(hs.seconds, 3.0);
    EXPECT_LT(took, 30.0);
    // An id that is no task.
    r.id = 99;
    r.line = 7;
    try {
        judge_results(fixture_tasks(), {r}, o);
        ADD_FAILURE() << "no error";
    } catch (const cuset::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("results line 7: id 99 is not a task"), std::string::npos) << e.what();
    }
}

TEST(EvalJudge, EmulatedReferencesPassAndWrongProgramsFail) {
    std::string work = scratch_dir("eval_judge_emulate");
    std::vector<ResultRecord> recs = reference_records(fixture_tasks());
    // Task 0's second sample writes a wrong sum; task 3's writes no output (compare.py exits 0
    // after printing F); task 2's exits non-zero.
    std::string wrong = fixture_tasks()[0].bench_cu;
    wrong.replace(wrong.find("c[i] = a[i] + b[i]"), 18, "c[i] = a[i] - b[i]");
    recs[0].codes.push_back(wrong);
    std::string silent = fixture_tasks()[3].bench_cu;
    silent.replace(silent.find("write_binary(\"data/sums.bin\""), 0, "return 0;\n    ");
    recs[3].codes.push_back(silent);
    std::string failing = fixture_tasks()[2].bench_cu;
    failing.replace(failing.find("return 0;\n}"), 9, "return 3;");
    recs[2].codes.push_back(failing);
    // A relative work folder (the commands run in each sample's folder, so the judge makes it absolute).
    auto rel = [](const std::string& p) { return fs::path(p).lexically_relative(fs::current_path()).string(); };
    JudgeOptions o = options(rel(work), JudgeMode::kEmulate);
    o.runner.cache_dir = work + "/cache";
    JudgeSummary s = judge_results(fixture_tasks(), recs, o);
    EXPECT_EQ(s.notice, "");
    for (const TaskResult& t : s.tasks) {
        EXPECT_EQ(t.samples[0].status, SampleStatus::kPass) << t.id_text << ": " << t.samples[0].error;
        EXPECT_TRUE(t.samples[0].emulated);
    }
    EXPECT_EQ(s.tasks[0].samples[1].status, SampleStatus::kMismatch) << s.tasks[0].samples[1].error;
    EXPECT_EQ(s.tasks[0].samples[1].error, "compare.py: F");
    EXPECT_EQ(s.tasks[3].samples[1].status, SampleStatus::kMismatch) << s.tasks[3].samples[1].error;
    EXPECT_EQ(s.tasks[2].samples[1].status, SampleStatus::kRunFailed) << s.tasks[2].samples[1].error;
    EXPECT_EQ(s.tasks[2].samples[1].error, "run: exit status 3");
    EvalReport r = make_report(s, tasks_path(), "");
    EXPECT_EQ(r.overall.label, "emulated");
    EXPECT_EQ(r.overall.pass1, 4);
    EXPECT_EQ(r.overall.functional, 4);
    EXPECT_EQ(r.overall.ran, 6);
}

// The verdict is positive: functional = compare.py exited 0 and its last line is "T". A checker
// that prints nothing, or something after its T, gives no verdict; one that exits non-zero is
// compare-failed.
TEST(EvalJudge, OnlyALastLineTIsAPass) {
    std::string work = scratch_dir("eval_judge_verdict");
    std::vector<Task> tasks;
    for (const char* checker : {"print('T')\n", "pass\n", "print('T')\nprint('done')\n", "import sys\nprint('T')\nsys.exit(1)\n",
                                "print('F')\n", "print('x' * 1000000)\nprint('T')\n"}) {
        Task t = fixture_tasks()[0];
        t.compare_py = std::string("# \"data/c.bin\" is the output\n") + checker;
        t.id = static_cast<int>(tasks.size());
        t.id_text = std::to_string(tasks.size());
        tasks.push_back(t);
    }
    JudgeOptions o = options(work, JudgeMode::kEmulate);
    o.runner.cache_dir = work + "/cache";
    JudgeSummary s = judge_results(tasks, reference_records(tasks), o);
    const SampleStatus want[] = {SampleStatus::kPass,          SampleStatus::kNoVerdict, SampleStatus::kNoVerdict,
                                 SampleStatus::kCompareFailed, SampleStatus::kMismatch,  SampleStatus::kPass};
    for (size_t i = 0; i < tasks.size(); ++i)
        EXPECT_EQ(s.tasks[i].samples[0].status, want[i]) << tasks[i].compare_py << ": " << s.tasks[i].samples[0].error;
    EXPECT_EQ(s.tasks[1].samples[0].error, "compare.py printed no verdict");
    EXPECT_EQ(s.tasks[2].samples[0].error, "compare.py's last line is not T or F: done");
}

// A task's gen.py folder serves every program of the task and goes when the last of them is
// judged: an answer without a program between two programs must not count as one of them (it
// would free the folder under the second program, whose judging would run gen.py again and then
// leave its folder behind). One job, so the order is the record's: program, no program, program.
// gen.py appends a line to a file outside the sandbox (containment off, so that it can) per run.
TEST(EvalJudge, AnAnswerWithoutAProgramDoesNotFreeTheTasksInputs) {
    const std::string work = scratch_dir("eval_judge_gen_once"), cache = scratch_dir("eval_judge_gen_once_cache");
    const std::string runs = cache + "/gen-runs.txt";
    std::vector<Task> one = {fixture_tasks()[0]};
    one[0].gen_py = "with open(" + nlohmann::json(runs).dump() + ", 'a') as f:\n    f.write('run\\n')\n" + one[0].gen_py;
    std::vector<ResultRecord> recs = reference_records(one);
    recs[0].codes = {one[0].bench_cu, std::nullopt, one[0].bench_cu};
    recs[0].responses = {std::string("a"), std::string("no program"), std::string("b")};
    JudgeOptions o = options(work, JudgeMode::kEmulate);
    o.runner.cache_dir = cache + "/emu";
    o.runner.contain = false;
    o.jobs = 1;
    JudgeSummary s = judge_results(one, recs, o);
    ASSERT_EQ(s.tasks[0].samples.size(), 3u);
    EXPECT_EQ(s.tasks[0].samples[0].status, SampleStatus::kPass) << s.tasks[0].samples[0].error;
    EXPECT_EQ(s.tasks[0].samples[1].status, SampleStatus::kNoCode);
    EXPECT_EQ(s.tasks[0].samples[2].status, SampleStatus::kPass) << s.tasks[0].samples[2].error;
    EXPECT_EQ(cuset::test::lines_of(runs).size(), 1u) << "gen.py ran once for the task";
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(work)) left.push_back(e.path().filename().string());
    EXPECT_TRUE(left.empty()) << "left in the work folder: " << (left.empty() ? "" : left[0]);
}

// On the emulator a run that does not finish in time says nothing about the program (a GPU might
// take milliseconds): it is unjudged, left out of the rates with its cause, not a run-timeout.
// A model's answer that ends inside a character or holds invalid bytes (a byte-level tokenizer
// decodes what it sampled) is written as Python holds it after decode(errors="replace"): the file
// stays readable, by Python and by eval.
TEST(EvalResults, AnswersWithInvalidUtf8AreWrittenAsPythonDecodesThem) {
    const std::string dir = scratch_dir("eval_results_utf8");
    ResultRecord a;
    a.id = 1;
    a.task_name = "Vector_Add";
    a.codes = {std::string("int main() { return 0; } // \xff")};
    a.responses = {std::string("```cuda\nint main() { return 0; }\n```\nthe end \xe2\x82")};
    write_results(dir + "/results.jsonl", {a});
    auto r = run_command(std::string("'") + CUSET_PYTHON +
                         "' -c \"import json,sys\nl = open(sys.argv[1], 'rb').read().decode('utf-8').rstrip('\\n')\n"
                         "r = json.loads(l)\nprint(ascii(r['code1']), ascii(r['response1'][-5:]))\" " + dir + "/results.jsonl");
    EXPECT_EQ(r.out, "'int main() { return 0; } // \\ufffd' 'end \\ufffd'\n") << r.err;
    const std::vector<ResultRecord> back = load_results(dir + "/results.jsonl");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].codes[0], std::string("int main() { return 0; } // \xef\xbf\xbd"));
}

TEST(EvalJudge, AnEmulatedRunThatDoesNotFinishIsUnjudged) {
    std::string work = scratch_dir("eval_judge_emu_slow");
    std::vector<Task> one = {fixture_tasks()[0]};
    std::vector<ResultRecord> recs = reference_records(one);
    // Busy to the limit: the emulator's gap (unjudged). Sleeping to the limit: the program's own
    // failure, as on a GPU (run-timeout).
    recs[0].codes = {std::string("int main() { volatile unsigned long x = 0; for (;;) ++x; }\n"),
                     std::string("#include <unistd.h>\nint main() { for (;;) sleep(1); }\n")};
    JudgeOptions o = options(work, JudgeMode::kEmulate);
    o.runner.cache_dir = work + "/cache";
    o.runner.emulate_timeout_s = 3;
    JudgeSummary s = judge_results(one, recs, o);
    const SampleResult& v = s.tasks[0].samples[0];
    EXPECT_EQ(v.status, SampleStatus::kUnjudged) << v.error;
    EXPECT_EQ(v.error.rfind("emulator: no result within the limit (timed out after 3 s, ", 0), 0u) << v.error;
    const SampleResult& idle = s.tasks[0].samples[1];
    EXPECT_EQ(idle.status, SampleStatus::kRunTimeout) << idle.error;
    EXPECT_EQ(idle.error.rfind("run: timed out after 3 s with ", 0), 0u) << idle.error;
    EvalReport r = make_report(s, "t", "");
    EXPECT_EQ(r.overall.unjudged_by_cause.at("emulator: no result within the limit"), 1);
    EXPECT_EQ(r.overall.pass1, 0);
    EXPECT_EQ(r.overall.pass1_tasks, 1) << "the headline counts it, as not passing";
    EXPECT_EQ(r.overall.pass1_judged_tasks, 0);
}

// A gen.py that puts its tensors on CUDA (as CUDABench's FIR_Filtering does) on an emulating judge
// without a GPU (CI's machine): it is run again with its tensors on the CPU, so the reference passes
// on the data it made, and a wrong program still fails on it. With a GPU the first run succeeds and
// the same holds.
TEST(EvalJudge, AGenPyThatAsksForCudaRunsOnTheCpuUnderEmulation) {
    std::string work = scratch_dir("eval_judge_gen_cuda");
    std::vector<Task> one = {fixture_tasks()[0]};
    one[0].gen_py =
        "import os\nimport torch\n"
        "os.makedirs(\"data\", exist_ok=True)\n"
        "torch.manual_seed(7)\n"
        "a = torch.randn(1024, device=\"cuda:0\", dtype=torch.float32)\n"
        "b = torch.randn(1024).to(torch.device(\"cuda\")).cuda()\n"
        "c = torch.add(a, b)\n"
        "torch.cuda.synchronize() if torch.cuda.is_available() else None\n"
        "a.cpu().numpy().tofile(\"data/a.bin\")\n"
        "b.cpu().numpy().tofile(\"data/b.bin\")\n"
        "c.cpu().numpy().tofile(\"data/c_ref.bin\")\n";
    std::vector<ResultRecord> recs = reference_records(one);
    std::string wrong = one[0].bench_cu;
    wrong.replace(wrong.find("c[i] = a[i] + b[i]"), 18, "c[i] = a[i] - b[i]");
    recs[0].codes.push_back(wrong);
    JudgeOptions o = options(work, JudgeMode::kEmulate);
    o.runner.cache_dir = work + "/cache";
    JudgeSummary s = judge_results(one, recs, o);
    ASSERT_EQ(s.tasks[0].samples.size(), 2u);
    EXPECT_EQ(s.tasks[0].samples[0].status, SampleStatus::kPass) << s.tasks[0].samples[0].error;
    EXPECT_EQ(s.tasks[0].samples[1].status, SampleStatus::kMismatch) << s.tasks[0].samples[1].error;
    // The compile-only judge runs no gen.py; the emulating one never reruns a gen.py that failed
    // for another reason.
    one[0].gen_py = "import sys\nsys.exit('no data today')\n";
    std::vector<ResultRecord> ref = reference_records(one);
    JudgeSummary f = judge_results(one, ref, o);
    EXPECT_EQ(f.tasks[0].samples[0].status, SampleStatus::kGenFailed);
    EXPECT_EQ(f.tasks[0].samples[0].error, "gen.py: no data today");
}

TEST(EvalJudge, WithoutTheEmulatorCompiledProgramsAreUnjudged) {
    std::string work = scratch_dir("eval_judge_noemu");
    JudgeOptions o = options(work, JudgeMode::kEmulate);
    o.runner.cxx = work + "/no-such-compiler";  // the emulator's runtime cannot be built
    std::vector<Task> one = {fixture_tasks()[0]};
    JudgeSummary s = judge_results(one, reference_records(one), o);
    EXPECT_NE(s.notice.find("emulation unavailable"), std::string::npos) << s.notice;
    EXPECT_EQ(s.tasks[0].samples[0].status, SampleStatus::kUnjudged);
    EvalReport r = make_report(s, "t", "");
    EXPECT_EQ(r.overall.unjudged, 1);
    EXPECT_EQ(r.overall.pass1_tasks, 1);
    EXPECT_EQ(r.overall.passk_tasks, 1);
    EXPECT_EQ(r.overall.pass1_judged_tasks, 0);
    EXPECT_EQ(r.overall.passk_judged_tasks, 0);
    EXPECT_DOUBLE_EQ(report_json(r)["overall"]["pass@K"].get<double>(), 0.0);
    EXPECT_TRUE(report_json(r)["overall"]["pass@K_judged"].is_null()) << "no judged sample: no judged-only rate";
}

// ---------------------------------------------------------------- the command

namespace {

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_file(path)); }

std::string q(const std::string& s) { return "'" + s + "'"; }

}  // namespace

// Out of the box: with no eval.python the judge uses the project's environment (which has numpy)
// and says so; a Python without numpy is the judge's own error, one line and exit 4, not the
// programs' failure.
TEST(EvalCli, TheDefaultPythonJudgesAndAMissingModuleIsTheJudgesError) {
    std::string out = scratch_dir("eval_cli_python");
    auto r = cuset::test::run_cuset("eval --reference --tasks " + q(tasks_path()) + " --judge emulate --limit 1 --out " +
                                    q(out + "/ok") + " --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gen.py and compare.py run with " + fs::path(CUSET_PYTHON).parent_path().string()), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("the project's environment"), std::string::npos) << r.err;
    auto j = read_json(out + "/ok/eval.json");
    EXPECT_EQ(j["overall"]["pass@1"], 1.0) << j.dump(1);
    EXPECT_NE(j["tasks"][0]["samples"][0]["containment"].get<std::string>().find("namespaces"), std::string::npos);
    r = cuset::test::run_cuset("eval --reference --tasks " + q(tasks_path()) + " --judge emulate --limit 1 --out " +
                               q(out + "/bad") + " --set log.progress=never --set eval.python=/usr/bin/python3");
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("cannot run a task's gen.py: ModuleNotFoundError: No module named 'numpy'"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("set eval.python"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out + "/bad/eval.json")) << "no figures from a judge that could not judge";
}

TEST(EvalCli, ReferencesCompileOnlyWithTheNotice) {
    std::string out = scratch_dir("eval_cli_reference");
    auto r = cuset::test::run_cuset("eval --reference --tasks " + q(tasks_path()) + " --judge compile --out " + q(out) +
                                    " --set eval.python=" + CUSET_PYTHON);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("CUDABench eval [compile-only]: 4 tasks, 4 samples"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("gen.py, the programs and compare.py were not run"), std::string::npos) << r.err;
    auto j = read_json(out + "/eval.json");
    EXPECT_EQ(j["judge"], "compile-only");
    EXPECT_EQ(j["overall"]["compiled"], 4);
    EXPECT_EQ(j["overall"]["compile_rate"], 1.0);
    EXPECT_TRUE(j["overall"]["run_rate"].is_null());
    EXPECT_EQ(j["families"]["Vector_Add"]["tasks"], 2);
    EXPECT_EQ(cuset::test::count_of(read_file(out + "/eval.html"), "<tr><td class=num>"), 4);
    EXPECT_FALSE(fs::exists(out + "/work"));
}

TEST(EvalCli, JudgesACudaBenchResultsFile) {
    std::string dir = scratch_dir("eval_cli_results");
    // Written the way CUDABench's generator writes it (id, task_name, prompt, run_id, code/response pairs).
    ResultRecord a;
    a.id = 2;
    a.task_name = "ReLU_Activation";
    a.prompt = build_user_prompt(fixture_tasks()[2], 1, kDefaultGpuName);
    a.run_id = "1234abcd";
    a.responses = {"```cpp\n" + fixture_tasks()[2].bench_cu + "\n```", std::string("```cpp\nint main( {\n```"),
                   std::nullopt};
    for (const auto& resp : a.responses) a.codes.push_back(resp ? extract_code(*resp) : std::nullopt);
    write_results(dir + "/results.jsonl", {a});
    auto r = cuset::test::run_cuset("eval --results " + q(dir + "/results.jsonl") + " --tasks " + q(tasks_path()) +
                                    " --judge compile");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = read_json(dir + "/results.eval/eval.json");
    auto s = j["tasks"][0]["samples"];
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0]["status"], "compiled");
    EXPECT_EQ(s[1]["status"], "compile-error");
    EXPECT_NE(s[1]["error"].get<std::string>().find("error"), std::string::npos);
    EXPECT_EQ(s[2]["status"], "no-code");
    EXPECT_NEAR(j["overall"]["pass@k_unbiased"]["1"].get<double>(), 1.0 / 3, 1e-12);
    EXPECT_EQ(j["overall"]["pass@K"], 1.0);
    // --judge gpu where there is none is a usage error.
    r = cuset::test::run_cuset("eval --results " + q(dir + "/results.jsonl") + " --tasks " + q(tasks_path()) +
                               " --judge gpu --out " + q(dir + "/gpu"));
    EXPECT_TRUE(r.exit_code == 2 || r.exit_code == 0) << r.err;
    if (r.exit_code == 2) {
        EXPECT_NE(r.err.find("--judge gpu: no GPU here"), std::string::npos) << r.err;
    }
    // A FIFO or a folder where a results or tasks file is expected: a clear error, never a hang.
    ASSERT_EQ(::mkfifo((dir + "/fifo.jsonl").c_str(), 0600), 0);
    for (const std::string& args : {"--results " + q(dir + "/fifo.jsonl") + " --tasks " + q(tasks_path()),
                                    "--results " + q(dir + "/results.jsonl") + " --tasks " + q(dir + "/fifo.jsonl"),
                                    "--results " + q(dir + "/results.jsonl") + " --tasks " + q(dir)}) {
        r = cuset::test::run_cuset("eval " + args + " --judge compile --out " + q(dir + "/fifo-out"));
        EXPECT_EQ(r.exit_code, 3) << args << ": " << r.err;
        EXPECT_NE(r.err.find(", not a regular file; give the file itself"), std::string::npos) << r.err;
    }
    // A task given twice would count twice in every rate: refused, naming both lines.
    write_file(dir + "/twice.jsonl", "{\"id\": 2, \"code1\": \"x\"}\n{\"id\": 3, \"code1\": \"x\"}\n{\"id\": 2, \"code1\": \"y\"}\n");
    r = cuset::test::run_cuset("eval --results " + q(dir + "/twice.jsonl") + " --tasks " + q(tasks_path()) + " --judge compile");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("twice.jsonl:3: id 2 again (first at line 1)"), std::string::npos) << r.err;
    // An id that is no task names the results line.
    write_file(dir + "/bad.jsonl", "{\"id\": 42, \"code1\": \"x\", \"response1\": \"x\"}\n");
    r = cuset::test::run_cuset("eval --results " + q(dir + "/bad.jsonl") + " --tasks " + q(tasks_path()) + " --judge compile");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("results line 1: id 42 is not a task"), std::string::npos) << r.err;
}

// A stopped judge (SIGTERM) exits 75 with every finished verdict in OUT/judged.jsonl; the same
// command again judges only the rest and writes the figures an uninterrupted run writes.
TEST(EvalCli, AStoppedJudgeContinuesWhereItStopped) {
    std::string dir = scratch_dir("eval_cli_resume");
    std::vector<ResultRecord> recs = reference_records(fixture_tasks());
    for (ResultRecord& r : recs)
        for (int k = 0; k < 2; ++k) {  // three samples a task: 12 compiles
            r.codes.push_back(*r.codes[0] + "\n// sample " + std::to_string(k + 2) + "\n");
            r.responses.push_back("```cuda\n" + *r.codes.back() + "\n```");
        }
    write_results(dir + "/results.jsonl", recs);
    const std::string out = dir + "/out", journal = out + "/judged.jsonl";
    const std::string args = "eval --results " + q(dir + "/results.jsonl") + " --tasks " + q(tasks_path()) +
                             " --judge compile --out " + q(out) + " --set eval.jobs=1 --set log.progress=never";
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (!freopen((dir + "/stopped.err").c_str(), "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(126);
        execl("/bin/sh", "sh", "-c", ("exec " + std::string(CUSET_BINARY) + " " + args).c_str(), (char*)nullptr);
        _exit(127);
    }
    const auto t0 = std::chrono::steady_clock::now();
    while ((!fs::exists(journal) || cuset::test::lines_of(journal).size() < 2) &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(600))
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string err = read_file(dir + "/stopped.err");
    ASSERT_TRUE(WIFEXITED(status)) << err;
    EXPECT_EQ(WEXITSTATUS(status), 75) << err;
    EXPECT_NE(err.find("run the same command again"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(out + "/eval.json")) << "no figures from a stopped judge";
    const size_t kept = cuset::test::lines_of(journal).size();
    ASSERT_GE(kept, 2u);
    ASSERT_LT(kept, 12u) << "the stop came too late to test anything";

    auto r = cuset::test::run_cuset(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::to_string(kept) + " sample(s) were judged by an earlier run"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(journal)) << "eval.json holds the verdicts once complete";
    auto j = read_json(out + "/eval.json");
    ASSERT_EQ(j["tasks"].size(), 4u);
    for (const auto& t : j["tasks"]) {
        ASSERT_EQ(t["samples"].size(), 3u);
        for (const auto& s : t["samples"]) EXPECT_EQ(s["status"], "compiled") << s.dump();
    }
    EXPECT_EQ(j["overall"]["compiled"], 12) << "samples compiled";
}

TEST(EvalCli, TinyCoderEndToEnd) {
    std::string out = scratch_dir("eval_cli_tiny");
    std::string src = CUSET_SOURCE_DIR;
    auto r = cuset::test::run_cuset("eval --config " + q(src + "/configs/demo.yaml") + " --model " + q(src + "/data/tiny-coder") +
                                    " --tasks " + q(tasks_path()) + " --level 1 --samples 2 --limit 3 --judge compile --out " +
                                    q(out) + " --set generate.max_new_tokens=24 --set generate.temperature=1.0 --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("CUDABench eval [compile-only]: 3 tasks, 6 samples"), std::string::npos) << r.out;
    auto results = load_results(out + "/results.jsonl");
    ASSERT_EQ(results.size(), 3u);
    for (size_t i = 0; i < results.size(); ++i) {
        EXPECT_EQ(results[i].id, fixture_tasks()[i].id);
        EXPECT_EQ(results[i].prompt, build_user_prompt(fixture_tasks()[i], 1, kDefaultGpuName));
        ASSERT_EQ(results[i].codes.size(), 2u);
        ASSERT_EQ(results[i].responses.size(), 2u);
        for (size_t k = 0; k < 2; ++k) {
            ASSERT_TRUE(results[i].responses[k].has_value());
            EXPECT_EQ(results[i].codes[k], extract_code(*results[i].responses[k]));
        }
    }
    // The prompts the model saw: CUDABench's system prompt and user prompt.
    std::string first = read_file(out + "/prompts.jsonl");
    auto p = nlohmann::json::parse(first.substr(0, first.find('\n')));
    EXPECT_EQ(p["system"], system_prompt());
    auto j = read_json(out + "/eval.json");
    EXPECT_EQ(j["overall"]["samples"], 6);
    EXPECT_GT(j["overall"]["mean_generated_tokens"].get<double>(), 0.0);
    EXPECT_LE(j["overall"]["mean_generated_tokens"].get<double>(), 24.0);
    for (const auto& t : j["tasks"])
        for (const auto& s : t["samples"]) {
            std::string st = s["status"];
            EXPECT_TRUE(st == "no-code" || st == "compile-error" || st == "compile-timeout" || st == "compiled") << st;
        }
    EXPECT_TRUE(fs::exists(out + "/eval.html"));
}

// eval.after_training: training ends with CUDABench on the final checkpoint and its figures in
// summary.json (data/tiny-coder writes no program that compiles: every rate is 0, every stage runs).
TEST(EvalCli, AfterTrainingPutsTheFiguresInTheSummary) {
    std::string dir = scratch_dir("eval_after_training");
    const std::string src = CUSET_SOURCE_DIR;
    using cuset::test::kDefault;
    cuset::test::write_tiny_run_config(dir + "/c.yaml", dir + "/runs",
                                       {{"model.path", src + "/data/tiny-coder"},
                                        {"data.train", src + "/tests/fixtures/mini_sft.jsonl"},
                                        {"data.eval", kDefault},
                                        {"data.max_seq_len", "96"},
                                        {"objective.region.window", kDefault},
                                        {"train.grad_accum", "1"},
                                        {"train.max_steps", "1"},
                                        {"train.lr", kDefault},
                                        {"train.warmup_steps", "0"},
                                        {"train.seed", kDefault},
                                        {"checkpoint.every", kDefault},
                                        {"checkpoint.keep_last", kDefault},
                                        {"log.every", kDefault},
                                        {"run.name", "r"},
                                        {"generate.max_new_tokens", "8"},
                                        {"eval.after_training", "true"},
                                        {"eval.tasks", tasks_path()},
                                        {"eval.level", "1"},
                                        {"eval.samples", "2"},
                                        {"eval.limit", "3"},
                                        {"eval.judge", "compile"}});
    auto r = cuset::test::run_cuset("--config " + q(dir + "/c.yaml"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("CUDABench eval [compile-only]: 3 tasks, 6 samples"), std::string::npos) << r.out;
    const std::string run = dir + "/runs/r";
    auto summary = read_json(run + "/summary.json");
    ASSERT_TRUE(summary.contains("cudabench")) << summary.dump(2);
    const auto& c = summary["cudabench"];
    EXPECT_EQ(c["judge"], "compile-only");
    EXPECT_EQ(c["level"], 1);
    EXPECT_EQ(c["samples"], 2);
    EXPECT_EQ(c["tasks"], 3);
    EXPECT_EQ(c["compile_rate"], 0.0);
    EXPECT_EQ(c["pass@1"], 0.0);
    EXPECT_EQ(c["pass@K"], 0.0);
    EXPECT_EQ(c["out_dir"], run + "/cudabench-level1");
    EXPECT_EQ(summary["method"], "cuset");  // the trainer's own fields are kept
    // The judged model is the final checkpoint, and the eval files are where the summary says.
    EXPECT_NE(r.err.find("on " + summary["checkpoint"].get<std::string>()), std::string::npos) << r.err;
    auto eval = read_json(run + "/cudabench-level1/eval.json");
    EXPECT_EQ(eval["overall"]["samples"], 6);
    EXPECT_EQ(load_results(run + "/cudabench-level1/results.jsonl").size(), 3u);

    // Checked before training: no tasks file named, a missing one.
    auto none = cuset::test::run_cuset("--config " + q(dir + "/c.yaml") + " --run-name n1 --set eval.tasks=");
    EXPECT_EQ(none.exit_code, 2) << none.err;
    EXPECT_NE(none.err.find("'eval.tasks' must name a CUDABench tasks file"), std::string::npos) << none.err;
    auto missing = cuset::test::run_cuset("--config " + q(dir + "/c.yaml") + " --run-name n2 --set eval.tasks=" + dir + "/nope.jsonl");
    EXPECT_EQ(missing.exit_code, 3) << missing.err;
    EXPECT_NE(missing.err.find(dir + "/nope.jsonl"), std::string::npos) << missing.err;
    EXPECT_FALSE(fs::exists(dir + "/runs/n2/summary.json"));
}
