// The judge's speed-up measure (judge::SpeedupOptions) under --judge emulate, on a bundled task
// (data/cuda-tasks, Fused_Scale_Bias_Clamp) judged with its reference as the baseline:
//   - its own reference, changed to refuse to run again in a folder it has run in (it leaves a
//     marker file), still gets a speed-up: every timed run starts in a fresh folder, so nothing a
//     run leaves (an output cached for the next run) reaches the next;
//   - the reference with a 2 s sleep first is timed as slower than the reference: its speed-up
//     is below 0.5 whenever the reference's own run takes under 2 s (it takes well under 0.1 s
//     here, emulated, sandbox included), whatever the load, since both are timed alike;
//   - a wrong program gets no timing runs, and a verdict read back from the journal keeps its
//     speed-up.
// The times of the emulator say nothing about a GPU: the reward refuses any judge but gpu
// (AppOptions); here the measure itself is what is tested.
#include <filesystem>

#include <gtest/gtest.h>

#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"
#include "cuset/judge/toolchain.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace cuset::eval;
using cuset::test::scratch_dir;

namespace {

std::string with_main_prelude(std::string src, const std::string& prelude) {
    const size_t at = src.find("int main() {");
    EXPECT_NE(at, std::string::npos);
    src.replace(at, std::string("int main() {").size(), "static int reference_main() {");
    return "#include <sys/stat.h>\n#include <unistd.h>\n" + src + "\nint main() {\n" + prelude +
           "\n    return reference_main();\n}\n";
}

}  // namespace

TEST(JudgeSpeedup, TimedRunsStartFreshAndASlowerProgramReadsSlower) {
    const std::vector<Task> all = load_tasks(std::string(CUSET_SOURCE_DIR) + "/data/cuda-tasks/tasks.jsonl");
    const std::vector<Task> tasks = {all.at(0)};
    const std::string& ref = tasks[0].bench_cu;
    const std::string once = with_main_prelude(
        ref, "    struct stat st;\n    if (stat(\"ran-here\", &st) == 0) return 3;\n"
             "    FILE* f = fopen(\"ran-here\", \"w\");\n    if (f) fclose(f);");
    const std::string slow = with_main_prelude(ref, "    sleep(2);");
    std::string wrong = ref;
    const size_t at = wrong.find("1.75f");
    ASSERT_NE(at, std::string::npos) << "the task's scale constant";
    wrong.replace(at, 5, "1.70f");

    ResultRecord r;
    r.id = tasks[0].id;
    r.task_name = tasks[0].task_name;
    r.codes = {once, slow, wrong};
    for (const auto& c : r.codes) r.responses.push_back("```cuda\n" + *c + "\n```");

    const std::string scratch = scratch_dir("judge_speedup");
    JudgeOptions o;
    o.runner.mode = JudgeMode::kEmulate;
    o.runner.work_dir = scratch + "/work";
    o.runner.cache_dir = scratch + "/cache";
    o.runner.nvcc = cuset::judge::find_nvcc("", "eval.nvcc");
    o.runner.python = cuset::judge::find_python(CUSET_PYTHON, "eval.python");
    o.runner.speedup.enabled = true;
    o.runner.speedup.warmup = 1;
    o.runner.speedup.repeats = 3;
    o.jobs = 2;
    o.journal = scratch + "/verdicts.jsonl";
    JudgeSummary s = judge_results(tasks, {r}, o);
    ASSERT_EQ(s.tasks.at(0).samples.size(), 3u);
    const SampleResult &a = s.tasks[0].samples[0], &b = s.tasks[0].samples[1], &c = s.tasks[0].samples[2];
    ASSERT_EQ(a.status, SampleStatus::kPass) << a.error;
    ASSERT_TRUE(a.speedup.has_value()) << "a timed run saw the judged run's folder: " << a.speedup_note;
    EXPECT_GT(*a.speedup, 0.0);
    ASSERT_EQ(b.status, SampleStatus::kPass) << b.error;
    ASSERT_TRUE(b.speedup.has_value()) << b.speedup_note;
    EXPECT_LT(*b.speedup, 0.5) << "2 s slower than a reference that runs in well under 2 s";
    EXPECT_EQ(c.status, SampleStatus::kMismatch) << c.error;
    EXPECT_FALSE(c.speedup.has_value()) << "no timing of a program that does not pass";
    EXPECT_EQ(c.speedup_note, "");

    // Judged again with the same settings: every verdict comes back from the journal, speed-up
    // included.
    JudgeSummary again = judge_results(tasks, {r}, o);
    EXPECT_EQ(again.from_journal, 3);
    EXPECT_EQ(again.tasks[0].samples[0].speedup, a.speedup);
    EXPECT_EQ(again.tasks[0].samples[1].speedup, b.speedup);
    // Without the measure the journal's verdicts are not reused (another key): judged anew, untimed.
    o.runner.speedup.enabled = false;
    JudgeSummary plain = judge_results(tasks, {r}, o);
    EXPECT_EQ(plain.from_journal, 0);
    EXPECT_FALSE(plain.tasks[0].samples[0].speedup.has_value());
    EXPECT_EQ(plain.tasks[0].samples[0].status, SampleStatus::kPass);
}
