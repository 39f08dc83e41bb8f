// `cuset-train data build` through the real binary, on the fixture tasks (tests/fixtures/cudabench)
// under --judge emulate, with a candidates file written here of programs that are right (each
// task's own reference), wrong (another operation), broken (a syntax error), hostile (it looks for
// the reference output and prints a verdict) and absent: exactly the right ones are kept, a broken
// first answer repaired in round 2 is kept with the judge's compiler error in its repair turn, the
// pass rates after each round are the ones the candidates make by construction; a build stopped
// by SIGTERM exits 75 and the same command then writes the same train.jsonl; `train` accepts the
// output; with data/tiny-coder as the model every stage runs and reports. And `data tasks`: self-
// checking pairs become tasks whose references the check judges (a wrong one is named, exit 3).
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/eval/cudabench.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::lines_of;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

std::string tasks_path() { return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl"; }
std::string q(const std::string& s) { return "'" + s + "'"; }
std::string fenced(const std::string& code) { return "```cuda\n" + code + "\n```"; }

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
}

// A program that tries to pass without computing: it copies the reference output from where it
// might lie, and prints a verdict.
const char* kHostile = R"(#include <cstdio>
int main() {
    const char* where[] = {"data/c_ref.bin", "../data/c_ref.bin", "../../data/c_ref.bin", "/tmp/data/c_ref.bin"};
    for (const char* p : where) {
        FILE* in = std::fopen(p, "rb");
        if (!in) continue;
        FILE* out = std::fopen("data/c.bin", "wb");
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) std::fwrite(buf, 1, n, out);
        std::fclose(out);
        std::fclose(in);
    }
    std::printf("T\n");
    return 0;
}
)";

struct Fixture {
    std::vector<cuset::eval::Task> tasks = cuset::eval::load_tasks(tasks_path());
    std::string right(size_t t) const { return fenced(tasks[t].bench_cu); }
};

json cand(int id, int sample, int round, const std::string& response) {
    return {{"id", id}, {"sample", sample}, {"round", round}, {"response", response}};
}

// The candidates: K = 2, R = 2.
std::string candidates_file(const Fixture& f, const std::string& dir) {
    const std::string& add = "c[i] = a[i] + b[i];";
    std::vector<json> c = {
        // task 0: broken, then repaired; its second sample right at once (the same program).
        cand(0, 1, 1, fenced(replaced(f.tasks[0].bench_cu, add, "c[i] = a[i] + b[i]"))),
        cand(0, 1, 2, f.right(0)),
        cand(0, 2, 1, f.right(0)),
        // task 1: wrong twice; hostile, with no second answer.
        cand(1, 1, 1, fenced(replaced(f.tasks[1].bench_cu, add, "c[i] = a[i] - b[i];"))),
        cand(1, 1, 2, fenced(replaced(f.tasks[1].bench_cu, add, "c[i] = a[i] * b[i];"))),
        cand(1, 2, 1, fenced(kHostile)),
        // task 2: right, and right again with a comment more (a near duplicate).
        cand(2, 1, 1, f.right(2)),
        cand(2, 2, 1, fenced(replaced(f.tasks[2].bench_cu, "int main() {", "// ReLU\nint main() {"))),
        // task 3: no program, then right; no second sample.
        cand(3, 1, 1, "I would sum each row with a shared-memory tree reduction."),
        cand(3, 1, 2, "Here it is:\n" + f.right(3) + "\nOne block per row."),
    };
    std::string text;
    for (const json& j : c) text += j.dump() + "\n";
    write_file(dir + "/candidates.jsonl", text);
    return dir + "/candidates.jsonl";
}

std::string build_args(const std::string& candidates, const std::string& out, int jobs, int samples = 2) {
    return "data build --tasks " + q(tasks_path()) + " --candidates " + q(candidates) + " --out " + q(out) +
           " --samples " + std::to_string(samples) + " --rounds 2 --judge emulate --jobs " + std::to_string(jobs) +
           " --config configs/demo.yaml --set log.progress=never";
}

json read_json(const std::string& path) { return json::parse(read_file(path)); }

// build.json without what a run's timing changes.
json figures_of(json b) {
    b.erase("judge_seconds");
    return b;
}

}  // namespace

TEST(DataBuildCli, KeepsExactlyTheRightOnesResumesAfterSigtermAndTrainAcceptsIt) {
    Fixture f;
    ASSERT_EQ(f.tasks.size(), 4u);
    const std::string dir = scratch_dir("data_build_cli");
    const std::string cands = candidates_file(f, dir);

    // ---- uninterrupted
    auto r = run_cuset(build_args(cands, dir + "/a", 2));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("data build [emulated]: 4 task(s), 10 attempt(s); tasks passed after each round: 2 3; "
                         "3 sample(s) kept"),
              std::string::npos)
        << r.out;
    std::vector<std::string> train = lines_of(dir + "/a/train.jsonl");
    ASSERT_EQ(train.size(), 3u) << read_file(dir + "/a/train.jsonl");
    const std::pair<const char*, std::string> want[] = {
        {"0-s1", f.right(0)}, {"2-s1", f.right(2)}, {"3-s1", "Here it is:\n" + f.right(3) + "\nOne block per row."}};
    for (size_t i = 0; i < 3; ++i) {
        json j = json::parse(train[i]);
        EXPECT_EQ(j["id"], want[i].first);
        EXPECT_EQ(j["response"], want[i].second) << j["id"];
        EXPECT_EQ(j["system"], cuset::eval::system_prompt());
        EXPECT_EQ(j["prompt"], cuset::eval::build_user_prompt(f.tasks[std::stoi(want[i].first)], 1, cuset::eval::kDefaultGpuName));
    }
    json b = read_json(dir + "/a/build.json");
    EXPECT_EQ(b["judge"], "emulated");
    EXPECT_EQ(b["attempts"], 10);
    // Round 1: 7 attempts (task 3 has one sample), 3 pass (0-s2, 2-s1, 2-s2) in 2 tasks; round 2: the
    // repairs of 0-s1, 1-s1 and 3-s1, two of which pass.
    EXPECT_EQ(b["by_round"][0]["attempts"], 7);
    EXPECT_EQ(b["by_round"][0]["passed"], 3);
    EXPECT_EQ(b["by_round"][0]["tasks_passed"], 2);
    EXPECT_EQ(b["by_round"][0]["task_pass_rate"], 0.5);
    EXPECT_EQ(b["by_round"][0]["samples_passed"], 3);
    EXPECT_EQ(b["by_round"][1]["attempts"], 3);
    EXPECT_EQ(b["by_round"][1]["passed"], 2);
    EXPECT_EQ(b["by_round"][1]["tasks_passed"], 3);
    EXPECT_EQ(b["by_round"][1]["sample_pass_rate"], 5.0 / 8);
    EXPECT_EQ(b["passing_samples"], 5);
    EXPECT_EQ(b["kept"], 3);
    const json& t1 = b["per_task"][1];
    EXPECT_EQ(t1["samples"][0][0]["status"], "mismatch");
    EXPECT_EQ(t1["samples"][0][1]["status"], "mismatch");
    EXPECT_NE(t1["samples"][1][0]["status"], "pass") << t1.dump();  // the hostile one
    ASSERT_EQ(t1["samples"][1].size(), 1u);
    EXPECT_EQ(b["per_task"][0]["samples"][0][0]["status"], "compile-error");
    EXPECT_EQ(b["per_task"][3]["samples"][0][0]["status"], "no-code");
    EXPECT_EQ(lines_of(dir + "/a/build.jsonl").size(), 10u);
    EXPECT_NE(read_file(dir + "/a/build.html").find("<h2>After each round</h2>"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir + "/a/work"));

    // ---- stopped by SIGTERM after its first judged attempt, then the same command again
    const std::string out_b = dir + "/b";
    auto s = run_command("'" + std::string(CUSET_BINARY) + "' " + build_args(cands, out_b, 1) + " 2> " + q(dir + "/b.err") +
                         " & pid=$!; for i in $(seq 1 1200); do [ -s " + q(out_b + "/build.jsonl") +
                         " ] && break; sleep 0.05; done; t0=$(date +%s%N); kill -TERM $pid; wait $pid; rc=$?; "
                         "echo \"$rc $(( ($(date +%s%N) - t0) / 1000000 ))\"");
    int rc = -1;
    long ms = -1;
    ASSERT_EQ(std::sscanf(s.out.c_str(), "%d %ld", &rc, &ms), 2) << s.out << s.err;
    EXPECT_EQ(rc, 75) << read_file(dir + "/b.err");
    EXPECT_LT(ms, 10000) << "a stop request is answered within seconds";
    const size_t judged = lines_of(out_b + "/build.jsonl").size();
    EXPECT_GE(judged, 1u);
    EXPECT_LT(judged, 10u);
    EXPECT_FALSE(fs::exists(out_b + "/train.jsonl"));
    r = run_cuset(build_args(cands, out_b, 2));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("continuing: " + std::to_string(judged) + " attempt(s) already judged"), std::string::npos) << r.err;
    EXPECT_EQ(lines_of(out_b + "/build.jsonl").size(), 10u);
    EXPECT_EQ(read_file(out_b + "/train.jsonl"), read_file(dir + "/a/train.jsonl"));
    EXPECT_EQ(figures_of(read_json(out_b + "/build.json")), figures_of(b));

    // ---- other settings refuse to continue the folder
    r = run_cuset(build_args(cands, out_b, 2, /*samples=*/3));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("holds a build made with other settings (samples: 2 there, 3 now)"), std::string::npos) << r.err;

    // ---- the keep policy and the format act on the judged attempts: nothing is judged again
    r = run_cuset(build_args(cands, out_b, 2) + " --keep distinct --format messages");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(lines_of(out_b + "/build.jsonl").size(), 10u);
    json d = read_json(out_b + "/build.json");
    EXPECT_EQ(d["kept"], 3);
    EXPECT_EQ(d["duplicates"]["exact"], 1);  // 0-s2 is 0-s1's final program
    EXPECT_EQ(d["duplicates"]["near"], 1);   // 2-s2 is 2-s1 with a comment
    json m = json::parse(lines_of(out_b + "/train.jsonl")[0]);
    ASSERT_EQ(m["messages"].size(), 5u) << m.dump(1);  // system, user, broken answer, the finding, repair
    EXPECT_EQ(m["messages"][2]["role"], "assistant");
    const std::string finding = m["messages"][3]["content"];
    EXPECT_NE(finding.find("does not compile"), std::string::npos) << finding;
    EXPECT_NE(finding.find("error"), std::string::npos) << finding;
    EXPECT_EQ(m["messages"][4]["content"], f.right(0));

    // ---- decontamination: against the tasks file itself every kept sample shares long spans (its
    // prompt's description and its reference program) and is dropped
    r = run_cuset(build_args(cands, out_b, 2) + " --against " + q(tasks_path()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    d = read_json(out_b + "/build.json");
    EXPECT_EQ(d["kept"], 0);
    EXPECT_EQ(d["contaminated"], 3);
    EXPECT_TRUE(lines_of(out_b + "/train.jsonl").empty());

    // ---- `train` accepts the kept set: one step of the bundled tiny model
    r = run_cuset("train --config configs/demo.yaml --set data.train=" + q(dir + "/a/train.jsonl") +
                  " --set data.eval= --set train.max_steps=1 --set train.micro_batch_size=1 --set train.grad_accum=1"
                  " --set data.cache_dir= --set log.progress=never --output-dir " + q(dir + "/runs") + " --run-name accept");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(cuset::test::read_metrics(dir + "/runs/accept").size(), 1u);
}

TEST(DataBuildCli, WithTheTinyModelEveryStageRunsAndReports) {
    const std::string dir = scratch_dir("data_build_tiny");
    auto r = run_cuset("data build --tasks " + q(tasks_path()) + " --out " + q(dir + "/out") +
                       " --limit 2 --rounds 2 --judge emulate --config configs/demo.yaml --set generate.max_new_tokens=8"
                       " --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Its answers hold no program: each is repaired once, and nothing is kept.
    std::vector<std::string> gens = lines_of(dir + "/out/generations.jsonl");
    ASSERT_EQ(gens.size(), 4u);
    std::set<std::string> ids;
    for (const std::string& g : gens) ids.insert(json::parse(g)["id"].get<std::string>());
    EXPECT_EQ(ids, (std::set<std::string>{"0/s1/r1", "0/s1/r2", "1/s1/r1", "1/s1/r2"}));
    json b = read_json(dir + "/out/build.json");
    EXPECT_EQ(b["attempts"], 4);
    EXPECT_EQ(b["by_round"][1]["tasks_passed"], 0);
    EXPECT_EQ(b["kept"], 0);
    EXPECT_NE(b["source"].get<std::string>().find("model data/tiny-coder"), std::string::npos) << b["source"];
    for (const std::string& l : lines_of(dir + "/out/build.jsonl")) EXPECT_EQ(json::parse(l)["status"], "no-code") << l;
    EXPECT_TRUE(fs::exists(dir + "/out/train.jsonl"));
    EXPECT_TRUE(fs::exists(dir + "/out/build.html"));

    // SIGTERM while the model generates: it stops within a step, with exit 75 and nothing judged.
    const std::string out = dir + "/stopped";
    auto s = run_command("'" + std::string(CUSET_BINARY) + "' data build --tasks " + q(tasks_path()) + " --out " + q(out) +
                         " --limit 2 --judge emulate --config configs/demo.yaml --set generate.max_new_tokens=600"
                         " --set log.progress=never 2> " + q(dir + "/stopped.err") +
                         " & pid=$!; for i in $(seq 1 1200); do [ -e " + q(out + "/generate-prompts.jsonl") +
                         " ] && break; sleep 0.05; done; sleep 1; t0=$(date +%s%N); kill -TERM $pid; wait $pid; "
                         "echo \"$? $(( ($(date +%s%N) - t0) / 1000000 ))\"");
    int rc = -1;
    long ms = -1;
    ASSERT_EQ(std::sscanf(s.out.c_str(), "%d %ld", &rc, &ms), 2) << s.out << s.err;
    const std::string err = read_file(dir + "/stopped.err");
    EXPECT_EQ(rc, 75) << err;
    EXPECT_LT(ms, 10000);
    EXPECT_NE(err.find("data build: stopped by signal 15; 0 attempt(s)"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(out + "/generations.jsonl"));
}

namespace {

// A self-checking program: doubles 256 floats on the device and compares with the CPU.
std::string self_checking(const std::string& op) {
    return "#include <cstdio>\n#include <cuda_runtime.h>\n__global__ void twice(float* x, int n) {\n"
           "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] = " + op + ";\n}\n"
           "int main() {\n    const int n = 256;\n    float h[n];\n    for (int i = 0; i < n; ++i) h[i] = i * 0.5f;\n"
           "    float* d;\n    cudaMalloc(&d, n * sizeof(float));\n"
           "    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);\n    twice<<<2, 128>>>(d, n);\n"
           "    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);\n    cudaFree(d);\n"
           "    for (int i = 0; i < n; ++i)\n        if (h[i] != i * 1.0f) { std::printf(\"mismatch at %d\\n\", i); return 1; }\n"
           "    std::printf(\"ok\\n\");\n    return 0;\n}\n";
}

}  // namespace

TEST(DataTasksCli, SelfCheckingPairsBecomeTasksAndTheCheckJudgesTheirReferences) {
    const std::string dir = scratch_dir("data_tasks_cli");
    std::string sft;
    for (const auto& [id, response] :
         {std::pair<std::string, std::string>{"twice-ok", "Like this:\n" + fenced(self_checking("2.0f * x[i]"))},
          {"twice-bad", fenced(self_checking("x[i] + 1.0f"))},
          {"prose", "Use one thread per element."}})
        sft += json{{"id", id}, {"prompt", "Double every element of a float array on the GPU."}, {"response", response}}.dump() +
               "\n";
    write_file(dir + "/sft.jsonl", sft);
    auto r = run_cuset("data tasks --from-sft " + q(dir + "/sft.jsonl") + " --out " + q(dir + "/tasks.jsonl") +
                       " --check --judge emulate --config configs/demo.yaml --set log.progress=never");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("skipped " + dir + "/sft.jsonl: sample prose: no fenced program in the response"),
              std::string::npos) << r.err;
    EXPECT_NE(r.out.find(dir + "/tasks.jsonl:2: task twice-bad: reference run-failed: run: exit status 1"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("1 of 2 reference solution(s) pass"), std::string::npos) << r.out;
    const std::vector<cuset::eval::Task> tasks = cuset::eval::load_tasks(dir + "/tasks.jsonl");
    ASSERT_EQ(tasks.size(), 2u);
    EXPECT_EQ(tasks[0].id_text, "twice-ok");
    EXPECT_EQ(tasks[0].bench_cu + "\n", self_checking("2.0f * x[i]"));  // the fenced block, stripped
    EXPECT_EQ(tasks[0].gen_py, "");
    EXPECT_EQ(tasks[0].level_prompt[0], "Double every element of a float array on the GPU.");
    // A record that is not a task: one line naming the file and line, exit 3.
    write_file(dir + "/bad.jsonl", read_file(dir + "/tasks.jsonl") + "{\"id\": \"x\"}\n");
    r = run_cuset("data tasks " + q(dir + "/bad.jsonl"));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("bad.jsonl:3: task has no \"task_name\" field"), std::string::npos) << r.err;
    EXPECT_EQ(cuset::test::count_of(r.err, "\n"), 1) << r.err;
}

TEST(DataBuildCli, BadInputIsOneLineAndWritesNothing) {
    const std::string dir = scratch_dir("data_build_bad");
    write_file(dir + "/c.jsonl", "{\"id\": 0, \"response\": \"x\"}\n{\"id\": 42, \"response\": \"y\"}\n");
    const std::string base = "data build --tasks " + q(tasks_path()) + " --config configs/demo.yaml --judge emulate --out ";
    struct Case {
        std::string args;
        int code;
        std::string message;
    };
    const Case cases[] = {
        {q(dir + "/o1") + " --candidates " + q(dir + "/c.jsonl"), 3, "c.jsonl:2: id 42 is not a task of the tasks file"},
        {q(dir + "/o2") + " --candidates " + q(dir + "/c.jsonl") + " --model data/tiny-coder", 2,
         "--candidates and --model exclude each other"},
        {q(dir + "/o3") + " --candidates " + q(dir + "/none.jsonl"), 3, "cannot read candidates file"},
        // A FIFO would block the reader for ever: refused on its kind, before a byte is read.
        {q(dir + "/o8") + " --candidates " + q(dir + "/fifo.jsonl"), 3, "fifo.jsonl' is a FIFO, not a regular file"},
    };
    ASSERT_EQ(::mkfifo((dir + "/fifo.jsonl").c_str(), 0600), 0);
    for (const Case& c : cases) {
        auto r = run_cuset(base + c.args);
        EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
        EXPECT_EQ(cuset::test::count_of(r.err, "\n"), 1) << r.err;
    }
    // --keep fastest needs measured GPU run times: refused before anything is written.
    write_file(dir + "/ok.jsonl", "{\"id\": 0, \"response\": \"x\"}\n");
    auto r = run_cuset(base + q(dir + "/o4") + " --candidates " + q(dir + "/ok.jsonl") + " --keep fastest");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--keep fastest needs run times measured on a GPU"), std::string::npos) << r.err;
    for (const char* o : {"/o1", "/o2", "/o3", "/o4", "/o8"}) EXPECT_FALSE(fs::exists(dir + o)) << o;

    // An output that is an input, directly or through a link, is refused before anything is
    // written: the candidates file as OUT/train.jsonl, the tasks file as OUT/build.json, and an
    // --out that is a file. Every input keeps its bytes.
    fs::create_directories(dir + "/o5");
    const std::string candidates = read_file(dir + "/ok.jsonl");
    write_file(dir + "/o5/train.jsonl", candidates);
    fs::create_directories(dir + "/o6");
    fs::create_symlink(tasks_path(), dir + "/o6/build.json");
    const std::string tasks_bytes = read_file(tasks_path());
    write_file(dir + "/o7", candidates);
    const Case refused[] = {
        {q(dir + "/o5") + " --candidates " + q(dir + "/o5/train.jsonl"), 2,
         "the output '" + dir + "/o5/train.jsonl' is the input"},
        {q(dir + "/o6") + " --candidates " + q(dir + "/ok.jsonl"), 2, "the output '" + dir + "/o6/build.json' is the input"},
        {q(dir + "/o7") + " --candidates " + q(dir + "/ok.jsonl"), 2, "--out '" + dir + "/o7' is a file; name a folder"},
    };
    for (const Case& c : refused) {
        auto rr = run_cuset(base + c.args);
        EXPECT_EQ(rr.exit_code, c.code) << c.args << "\n" << rr.err;
        EXPECT_NE(rr.err.find(c.message), std::string::npos) << rr.err;
        EXPECT_EQ(cuset::test::count_of(rr.err, "\n"), 1) << rr.err;
    }
    EXPECT_EQ(read_file(dir + "/o5/train.jsonl"), candidates);
    EXPECT_EQ(read_file(tasks_path()), tasks_bytes);
    EXPECT_EQ(read_file(dir + "/o7"), candidates);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir + "/o5"), fs::directory_iterator()), 1);  // train.jsonl alone
}

// SIGTERM while `data tasks --check` judges: exit 75 with one line that says to run it again, and
// no work folder left in TMPDIR (the folder is watched appear, then the signal is sent while the
// first of the four references compiles).
TEST(DataTasksCli, SigtermDuringTheCheckExits75AndLeavesNoWorkFolder) {
    const std::string dir = scratch_dir("data_tasks_sigterm");
    const std::string tmp = dir + "/tmp";
    fs::create_directories(tmp);
    const std::string args = "data tasks " + q(tasks_path()) + " --check --judge compile --jobs 1 --set log.progress=never";
    auto s = run_command("TMPDIR=" + q(tmp) + " '" + std::string(CUSET_BINARY) + "' " + args + " 2> " +
                         q(dir + "/err") + " > /dev/null & pid=$!; for i in $(seq 1 1200); do ls " + q(tmp) +
                         " | grep -q cuset-data-tasks && break; sleep 0.05; done; sleep 0.3; kill -TERM $pid; "
                         "wait $pid; echo $?");
    const std::string err = read_file(dir + "/err");
    EXPECT_EQ(std::atoi(s.out.c_str()), 75) << s.out << err;
    EXPECT_NE(err.find("data tasks: stopped by signal 15; no verdict written; run the command again"), std::string::npos)
        << err;
    EXPECT_TRUE(fs::is_empty(tmp)) << "a work folder is left in TMPDIR";
}

// `data tasks --from-sft` writes only a tasks file that `data tasks FILE` accepts: two samples
// with one id would make two tasks with one id, which is refused (exit 3, naming the line of the
// second) before anything is written.
TEST(DataTasksCli, ATasksFileItsOwnCheckWouldRefuseIsNotWritten) {
    const std::string dir = scratch_dir("data_tasks_dup");
    std::string sft;
    for (const char* op : {"2.0f * x[i]", "x[i] + x[i]"})
        sft += json{{"id", "twice"}, {"prompt", "Double every element."}, {"response", fenced(self_checking(op))}}.dump() +
               "\n";
    write_file(dir + "/sft.jsonl", sft);
    auto r = run_cuset("data tasks --from-sft " + q(dir + "/sft.jsonl") + " --out " + q(dir + "/tasks.jsonl"));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("the tasks made would not load (" + dir + "/tasks.jsonl:2: duplicate task id twice); " + dir +
                         "/tasks.jsonl not written"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(cuset::test::count_of(r.err, "\n"), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/tasks.jsonl"));
}
