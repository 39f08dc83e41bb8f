// eval's repair turns: the user turn carrying the judge's finding for each status, the figures of
// a multi-turn evaluation on a hand-worked history (2 samples of 3 tasks, up to 3 turns), the
// results file's repairs<i> beside CUDABench's code<i>, and `eval --turns 2` end to end with the
// tiny model (every later turn's conversation checked message by message against turn 1's files).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/repair.h"
#include "cuset/eval/report.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace cuset::eval;
using cuset::judge::Status;
using cuset::test::read_file;
using cuset::test::scratch_dir;

namespace {

std::string tasks_path() { return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl"; }
std::string q(const std::string& s) { return "'" + s + "'"; }
nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_file(path)); }

// A verdict of a functional judge (a GPU's or the emulator's) with status `s`.
SampleResult verdict(Status s, const std::string& error = "") {
    SampleResult r;
    r.status = s;
    r.error = error;
    r.compiled = s != Status::kNoCode && s != Status::kCompileError && s != Status::kCompileTimeout;
    if (s == Status::kPass || s == Status::kMismatch || s == Status::kRunFailed) r.ran = s != Status::kRunFailed;
    if (s == Status::kPass || s == Status::kMismatch) r.functional = s == Status::kPass;
    return r;
}

}  // namespace

// A KernelBench problem's finding speaks of its ModelNew module and asks for a ```python block;
// each anti-hacking status names the rule broken; a CUDABench task keeps CUDABench's wording.
TEST(RepairTurn, AKernelBenchProblemGetsTheModulesFinding) {
    Task kb;
    kb.id_text = "level1_19_ReLU";
    kb.kernelbench = Task::KernelBench{};
    Task cb;
    cb.id_text = "100100";
    EXPECT_EQ(answer_fence(kb), std::string("python"));
    EXPECT_EQ(answer_fence(cb), std::string("cuda"));
    for (Status s : {Status::kCompileError, Status::kRunFailed, Status::kMismatch, Status::kNoCode})
        EXPECT_EQ(repair_turn(cb, s, "why"), repair_turn(s, "why")) << cuset::judge::status_name(s);
    std::string t = repair_turn(kb, Status::kCompileError, "RuntimeError: Error building extension 'relu'");
    EXPECT_NE(t.find("does not build or import"), std::string::npos) << t;
    EXPECT_NE(t.find("RuntimeError: Error building extension 'relu'"), std::string::npos) << t;
    EXPECT_NE(t.find("ModelNew and its inline CUDA sources) in one ```python code block"), std::string::npos) << t;
    EXPECT_EQ(t.find("```cuda"), std::string::npos) << t;
    t = repair_turn(kb, Status::kMismatch, "output 0 differs: max abs diff 0.5");
    EXPECT_NE(t.find("do not match the reference Model's (output 0 differs: max abs diff 0.5)"), std::string::npos) << t;
    EXPECT_NE(repair_turn(kb, Status::kNoCode, "").find("defining ModelNew"), std::string::npos);
    const std::pair<Status, const char*> rules[] = {
        {Status::kStaticCheck, "static check"},           {Status::kInputMutated, "changes its input tensors"},
        {Status::kNoKernel, "launches no kernel"},        {Status::kTorchOp, "computes with torch operators"},
        {Status::kSideStream, "a stream of its own"},     {Status::kTimerPatch, "the timer reads"},
        {Status::kFallback, "when its kernels fail"},     {Status::kConstantOutput, "an output is constant"}};
    for (const auto& [status, says] : rules) {
        t = repair_turn(kb, status, "the judge's detail");
        EXPECT_NE(t.find("breaks a rule of the benchmark: "), std::string::npos) << t;
        EXPECT_NE(t.find(says), std::string::npos) << t;
        EXPECT_NE(t.find("(the judge's detail)"), std::string::npos) << t;
        EXPECT_EQ(repair_turn(cb, status, "x"), "") << "a CUDABench program has no such status";
    }
    for (Status s : {Status::kPass, Status::kCompiled, Status::kGenFailed, Status::kTaskError, Status::kUnjudged})
        EXPECT_EQ(repair_turn(kb, s, "x"), "") << cuset::judge::status_name(s);
}

// A pass with a speed-up (objective.grpo.continue_after_pass): the figure to two decimals and the
// request for a faster program in the task's own fence.
TEST(RepairTurn, ASpeedupTurnAsksForAFasterProgram) {
    Task cb;
    Task kb;
    kb.kernelbench = Task::KernelBench{};
    EXPECT_EQ(speedup_turn(cb, 1.234),
              "The program is correct and runs 1.23x as fast as the reference (its time over yours). Make it faster: "
              "answer with the complete program in one ```cuda code block; it must stay correct.");
    EXPECT_EQ(speedup_turn(kb, 0.5),
              "ModelNew is correct and runs 0.50x as fast as the reference (its time over yours). Make it faster: "
              "answer with the complete module (ModelNew and its inline CUDA sources) in one ```python code block; it "
              "must stay correct.");
}

TEST(RepairTurn, TheTurnCarriesTheFinding) {
    std::string t = repair_turn(Status::kCompileError, "kernel.cu(3): error: identifier \"x\" is undefined");
    EXPECT_NE(t.find("does not compile"), std::string::npos) << t;
    EXPECT_NE(t.find("kernel.cu(3): error: identifier \"x\" is undefined"), std::string::npos) << t;
    EXPECT_NE(t.find("```cuda"), std::string::npos) << t;
    t = repair_turn(Status::kRunFailed, "run: exit status 3");
    EXPECT_NE(t.find("fails when it runs: run: exit status 3"), std::string::npos) << t;
    t = repair_turn(Status::kMismatch, "compare.py: F");
    EXPECT_NE(t.find("does not match the reference output (compare.py: F)"), std::string::npos) << t;
    EXPECT_NE(repair_turn(Status::kNoCode, "no fenced program in the answer").find("no complete program"), std::string::npos);
    // Not the program's fault, or nothing to fix: no repair.
    for (Status s : {Status::kPass, Status::kCompiled, Status::kGenFailed, Status::kTaskError, Status::kUnjudged})
        EXPECT_EQ(repair_turn(s, "x"), "") << cuset::judge::status_name(s);
    // A long finding is bounded.
    EXPECT_LT(repair_turn(Status::kCompileError, std::string(100000, 'e')).size(), kFindingMaxBytes + 200);
    // Every status name reads back.
    for (int s = 0; s <= static_cast<int>(Status::kUnjudged); ++s) {
        Status got;
        ASSERT_TRUE(status_parse(cuset::judge::status_name(static_cast<Status>(s)), &got));
        EXPECT_EQ(static_cast<int>(got), s);
    }
    Status got;
    EXPECT_FALSE(status_parse("passed", &got));
}

// Three tasks, two samples each, up to three turns, on a functional judge:
//   A: s1 mismatch -> pass;              s2 pass
//   B: s1 compile-error -> run-failed -> mismatch;   s2 no-code -> pass
//   C: s1 gen-failed (unjudged: not repaired);       s2 compile-error x3
// Worked by hand: turn 1: 6 attempts, 1 passed (A s2); turn 2: 4 attempts (A s1, B s1, B s2, C s2),
// 2 passed (A s1, B s2); turn 3: 2 attempts (B s1, C s2), none passed. Samples passing by turn
// 1/2/3: 1/3/3; tasks: 1 (A) / 2 (A, B) / 2. Fixed samples: A s1, B s2; fixed tasks: B (none at
// turn 1). After three turns pass@1 (sample 1's last verdict) is 1/3 (A), pass@2 is 2/3 (A, B);
// at turn 1 they are 0/3 and 1/3.
TEST(RepairReport, FiguresOfAHandWorkedHistory) {
    std::vector<TaskResult> tasks(3);
    const char* names[] = {"A", "B", "C"};
    std::vector<std::vector<std::vector<SampleResult>>> h = {
        {{verdict(Status::kMismatch), verdict(Status::kPass)}, {verdict(Status::kPass)}},
        {{verdict(Status::kCompileError), verdict(Status::kRunFailed), verdict(Status::kMismatch)},
         {verdict(Status::kNoCode), verdict(Status::kPass)}},
        {{verdict(Status::kGenFailed)},
         {verdict(Status::kCompileError), verdict(Status::kCompileError), verdict(Status::kCompileError)}},
    };
    for (size_t i = 0; i < 3; ++i) {
        tasks[i].id = static_cast<int>(i);
        tasks[i].id_text = std::to_string(i);
        tasks[i].task_name = names[i];
        for (size_t k = 0; k < 2; ++k) {
            tasks[i].samples.push_back(h[i][k][0]);
            tasks[i].samples.back().index = static_cast<int>(k) + 1;
        }
    }
    const RepairReport r = repair_report(tasks, h, JudgeMode::kGpu, 3);
    ASSERT_EQ(r.by_turn.size(), 3u);
    const int64_t want[3][4] = {{6, 1, 1, 1}, {4, 2, 3, 2}, {2, 0, 3, 2}};  // attempts, passed, samples, tasks passing
    for (size_t t = 0; t < 3; ++t) {
        EXPECT_EQ(r.by_turn[t].turn, static_cast<int64_t>(t) + 1);
        EXPECT_EQ(r.by_turn[t].attempts, want[t][0]) << "turn " << t + 1;
        EXPECT_EQ(r.by_turn[t].passed, want[t][1]) << "turn " << t + 1;
        EXPECT_EQ(r.by_turn[t].samples_passing, want[t][2]) << "turn " << t + 1;
        EXPECT_EQ(r.by_turn[t].tasks_passing, want[t][3]) << "turn " << t + 1;
    }
    EXPECT_EQ(r.fixed_samples, 2);
    EXPECT_EQ(r.fixed_tasks, 1);
    EXPECT_EQ(r.final_figures.pass1_tasks, 3);
    EXPECT_EQ(r.final_figures.pass1, 1);
    EXPECT_EQ(r.final_figures.passk, 2);
    EXPECT_EQ(r.final_figures.unjudged, 1);  // C s1 stays unjudged
    // The unbiased pass@1 after three turns, the share of each task's samples whose last verdict
    // passed, averaged: A 2/2, B 1/2, C 0/2, so (1 + 0.5 + 0) / 3.
    ASSERT_GE(r.final_figures.pass_at.size(), 1u);
    EXPECT_DOUBLE_EQ(r.final_figures.pass_at[0], 0.5);
    // Turn 1's figures of the same tasks, for comparison: nothing the repairs changed.
    std::vector<const TaskResult*> first;
    for (const TaskResult& t : tasks) first.push_back(&t);
    const Figures f1 = figures_of(first, JudgeMode::kGpu);
    EXPECT_EQ(f1.pass1, 0);
    EXPECT_EQ(f1.passk, 1);

    // eval.json carries the section and every sample's turns.
    EvalReport er;
    er.mode = JudgeMode::kGpu;
    er.tasks = tasks;
    er.overall = f1;
    er.repair = r;
    const auto j = nlohmann::json::parse(report_json(er).dump());
    EXPECT_EQ(j["repair"]["turns"], 3);
    EXPECT_EQ(j["repair"]["fixed_samples"], 2);
    EXPECT_EQ(j["repair"]["by_turn"][1]["samples_passing"], 3);
    EXPECT_EQ(j["tasks"][1]["samples"][0]["turns"].size(), 3u);
    EXPECT_EQ(j["tasks"][1]["samples"][0]["turns"][1]["status"], "run-failed");
    const std::string table = report_table(er);
    EXPECT_NE(table.find("fixed by repair: 2 sample(s) that failed at turn 1; 1 task(s)"), std::string::npos) << table;
    EXPECT_NE(report_html(er).find("Repair turns"), std::string::npos);
}

// The results file keeps every turn's program beside CUDABench's fields: its evaluator (and
// load_results) reads code<i>, turn 1's; repairs<i> lists the later turns.
TEST(RepairResults, LaterTurnsAreWrittenBesideCudaBenchsFields) {
    ResultRecord r;
    r.id = 7;
    r.task_name = "t";
    r.prompt = "p";
    r.run_id = "0123abcd";
    r.responses = {std::string("first"), std::string("```cuda\nint x;\n```")};
    r.codes = {std::nullopt, std::string("int x;")};
    r.repairs.resize(2);
    r.repairs[0].push_back({2, "Your answer holds no complete program.", std::string("```cuda\nint y;\n```"), std::string("int y;")});
    const std::string line = result_record_line(r);
    const auto j = nlohmann::ordered_json::parse(line);
    EXPECT_EQ(j["code1"], nullptr);
    EXPECT_EQ(j["code2"], "int x;");
    ASSERT_TRUE(j.contains("repairs1"));
    EXPECT_FALSE(j.contains("repairs2"));  // no later turn: no key
    EXPECT_EQ(j["repairs1"][0]["turn"], 2);
    EXPECT_EQ(j["repairs1"][0]["code"], "int y;");
    EXPECT_EQ(j["repairs1"][0]["feedback"], "Your answer holds no complete program.");
    // CUDABench's evaluator takes code1, code2, ... while present: the repairs are not samples.
    int versions = 0;
    while (j.contains("code" + std::to_string(versions + 1))) ++versions;
    EXPECT_EQ(versions, 2);
    const std::string dir = scratch_dir("repair_results");
    write_results(dir + "/results.jsonl", {r});
    const auto back = load_results(dir + "/results.jsonl");
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].codes, r.codes);
}

TEST(RepairCli, TurnsNeedAModel) {
    const std::string dir = scratch_dir("repair_cli_refuse");
    auto r = cuset::test::run_cuset("eval --reference --tasks " + q(tasks_path()) + " --judge compile --turns 2 --out " +
                                    q(dir + "/o"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--turns above 1 needs a model"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/o/eval.json"));
}

// eval --turns 2 with the tiny model under the compile-only judge: every sample whose turn-1
// program failed for a reason of its own gets one more turn, whose conversation is CUDABench's
// two prompts, its own first answer and the judge's finding about it.
TEST(RepairCli, TinyCoderAnswersTheJudgesFinding) {
    const std::string out = scratch_dir("repair_cli_tiny");
    const std::string src = CUSET_SOURCE_DIR;
    auto r = cuset::test::run_cuset("eval --config " + q(src + "/configs/demo.yaml") + " --model " + q(src + "/data/tiny-coder") +
                                    " --tasks " + q(tasks_path()) + " --level 1 --samples 2 --limit 2 --turns 2 --judge compile --out " +
                                    q(out) + " --set generate.max_new_tokens=24 --set generate.temperature=1.0 --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("repair turns (up to 2 per sample"), std::string::npos) << r.out;
    const auto j = read_json(out + "/eval.json");
    ASSERT_TRUE(j.contains("repair")) << j.dump();
    EXPECT_EQ(j["repair"]["turns"], 2);
    const auto results = load_results(out + "/results.jsonl");
    std::vector<nlohmann::json> raw;
    {
        std::ifstream in(out + "/results.jsonl");
        for (std::string line; std::getline(in, line);) raw.push_back(nlohmann::json::parse(line));
    }
    ASSERT_EQ(results.size(), 2u);
    ASSERT_EQ(j["tasks"].size(), 2u);
    const auto tasks = load_tasks(tasks_path());
    // The turn-2 prompts, by id.
    std::map<std::string, nlohmann::json> prompt2;
    int64_t repairable = 0;
    if (fs::exists(out + "/prompts-turn2.jsonl")) {
        std::ifstream in(out + "/prompts-turn2.jsonl");
        for (std::string line; std::getline(in, line);) {
            auto p = nlohmann::json::parse(line);
            prompt2[p["id"].get<std::string>()] = p;
        }
    }
    for (size_t i = 0; i < 2; ++i) {
        for (size_t k = 0; k < 2; ++k) {
            const auto& s = j["tasks"][i]["samples"][k];
            ASSERT_TRUE(s.contains("turns")) << s.dump();
            const auto& turns = s["turns"];
            Status first;
            ASSERT_TRUE(status_parse(turns[0]["status"].get<std::string>(), &first));
            const std::string fb = repair_turn(first, turns[0]["error"].get<std::string>());
            const std::string id = tasks[i].id_text + "/s" + std::to_string(k + 1) + "/t2";
            const std::string key = "repairs" + std::to_string(k + 1);
            if (fb.empty()) {  // compiled at once: one turn
                EXPECT_EQ(turns.size(), 1u);
                EXPECT_FALSE(prompt2.count(id));
                EXPECT_FALSE(raw[i].contains(key));
                continue;
            }
            ++repairable;
            EXPECT_EQ(turns.size(), 2u) << s.dump();
            ASSERT_TRUE(prompt2.count(id)) << id;
            const auto& m = prompt2[id]["messages"];
            ASSERT_EQ(m.size(), 4u);
            EXPECT_EQ(m[0]["role"], "system");
            EXPECT_EQ(m[0]["content"], system_prompt());
            EXPECT_EQ(m[1]["role"], "user");
            EXPECT_EQ(m[1]["content"], build_user_prompt(tasks[i], 1, kDefaultGpuName));
            EXPECT_EQ(m[2]["role"], "assistant");
            EXPECT_EQ(m[2]["content"], *results[i].responses[k]);
            EXPECT_EQ(m[3]["role"], "user");
            EXPECT_EQ(m[3]["content"], fb);
            // The later answer and its program, in results.jsonl.
            ASSERT_TRUE(raw[i].contains(key)) << raw[i].dump();
            const auto& rep = raw[i][key];
            ASSERT_EQ(rep.size(), 1u);
            EXPECT_EQ(rep[0]["turn"], 2);
            EXPECT_EQ(rep[0]["feedback"], fb);
            const auto code = extract_code(rep[0]["response"].get<std::string>());
            if (code) {
                EXPECT_EQ(rep[0]["code"], *code);
            } else {
                EXPECT_TRUE(rep[0]["code"].is_null());
            }
        }
    }
    EXPECT_EQ(j["repair"]["by_turn"][0]["attempts"], 4);
    EXPECT_EQ(j["repair"]["by_turn"][1]["attempts"], repairable);
    EXPECT_EQ(static_cast<int64_t>(prompt2.size()), repairable);
    // The headline figures stay turn 1's: the same as a one-turn eval would give.
    EXPECT_EQ(j["overall"]["samples"], 4);
}

// eval --candidates FILE --turns 2 (answers from a file as data build takes them): each task's
// two samples answer turn 1 with a program that does not compile and turn 2 with the task's own
// solution, so every repair fixes its sample: turn 1 passes nothing, turn 2 everything.
TEST(RepairCli, AnswersFromAFileWhoseRepairsPass) {
    const std::string dir = scratch_dir("repair_cli_file");
    const auto tasks = load_tasks(tasks_path());
    std::string lines;
    for (size_t i = 0; i < 2; ++i)
        for (int k = 1; k <= 2; ++k) {
            lines += nlohmann::json({{"id", tasks[i].id}, {"sample", k}, {"round", 1}, {"response", "```cuda\nint main( {\n```"}}).dump() + "\n";
            lines += nlohmann::json({{"id", tasks[i].id}, {"sample", k}, {"round", 2}, {"response", "```cuda\n" + tasks[i].bench_cu + "\n```"}})
                         .dump() +
                     "\n";
        }
    cuset::test::write_file(dir + "/answers.jsonl", lines);
    const std::string out = dir + "/out";
    auto r = cuset::test::run_cuset("eval --candidates " + q(dir + "/answers.jsonl") + " --tasks " + q(tasks_path()) +
                                    " --limit 2 --samples 2 --turns 2 --level 1 --judge compile --out " + q(out) +
                                    " --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = read_json(out + "/eval.json");
    EXPECT_EQ(j["overall"]["pass@1_passed"], 0);
    EXPECT_EQ(j["overall"]["pass@K_passed"], 0);
    const auto& rep = j["repair"];
    EXPECT_EQ(rep["final"]["pass@1_passed"], 2);
    EXPECT_EQ(rep["final"]["pass@K_passed"], 2);
    EXPECT_EQ(rep["fixed_samples"], 4);
    EXPECT_EQ(rep["fixed_tasks"], 2);
    ASSERT_EQ(rep["by_turn"].size(), 2u);
    EXPECT_EQ(rep["by_turn"][0]["attempts"], 4);
    EXPECT_EQ(rep["by_turn"][0]["passed"], 0);
    EXPECT_EQ(rep["by_turn"][1]["attempts"], 4);
    EXPECT_EQ(rep["by_turn"][1]["passed"], 4);
    EXPECT_EQ(rep["by_turn"][1]["tasks_passing"], 2);
    for (const auto& t : j["tasks"])
        for (const auto& s : t["samples"]) {
            ASSERT_EQ(s["turns"].size(), 2u);
            EXPECT_EQ(s["turns"][0]["status"], "compile-error");
            EXPECT_EQ(s["turns"][1]["status"], "compiled");
        }
    EXPECT_NE(r.out.find("fixed by repair: 4 sample(s) that failed at turn 1; 2 task(s)"), std::string::npos) << r.out;
    // The file is an input: an --out that would write over it is refused.
    auto clash = cuset::test::run_cuset("eval --candidates " + q(out + "/results.jsonl") + " --tasks " + q(tasks_path()) +
                                        " --limit 2 --samples 2 --judge compile --out " + q(out));
    EXPECT_EQ(clash.exit_code, 2) << clash.err;
}
