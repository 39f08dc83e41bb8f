// The judge's attack corpus (tests/fixtures/attacks/*.cu): every hostile program is judged under
// --judge emulate as a sample of its fixture task, next to the honest references of the same
// tasks in the same run. Each attack must end as a non-pass and leave no trace outside its
// folder (checked on the host: marker files, processes, a listening socket, the work folder),
// and every reference must still pass.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "cuset/core/hash.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"
#include "cuset/judge/toolchain.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace cuset::eval;
using cuset::test::read_file;
using cuset::test::scratch_dir;

namespace {

struct Attack {
    std::string name, source;
    int task = 0;
    std::vector<std::string> host_checks;  // the file's "// host:" lines, placeholders filled in
};

std::string fill(std::string s, const std::map<std::string, std::string>& with) {
    for (const auto& [k, v] : with)
        for (size_t at = s.find(k); at != std::string::npos; at = s.find(k, at + v.size())) s.replace(at, k.size(), v);
    return s;
}

std::vector<Attack> load_attacks(const std::map<std::string, std::string>& with) {
    std::vector<Attack> out;
    const fs::path dir = fs::path(CUSET_SOURCE_DIR) / "tests/fixtures/attacks";
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() != ".cu") continue;
        Attack a;
        a.name = e.path().stem().string();
        a.source = fill(read_file(e.path().string()), with);
        std::smatch m;
        if (std::regex_search(a.source, m, std::regex(R"(// task: (\d+))"))) a.task = std::stoi(m[1]);
        static const std::regex host_line(R"(// host: ([^\n]+))");
        for (std::sregex_iterator it(a.source.begin(), a.source.end(), host_line), end; it != end; ++it)
            a.host_checks.push_back((*it)[1]);
        out.push_back(std::move(a));
    }
    std::sort(out.begin(), out.end(), [](const Attack& x, const Attack& y) { return x.name < y.name; });
    return out;
}

// Processes whose name (at most 15 characters, as the kernel keeps it) is `comm`.
int host_processes_named(const std::string& comm) {
    auto r = cuset::test::run_command("ps -eo comm | grep -c '^" + comm + "$' || true");
    return std::stoi(r.out);
}

}  // namespace

TEST(JudgeAttacks, EveryAttackFailsAndLeavesNoTraceWhileReferencesPass) {
    const std::string scratch = scratch_dir("judge-attacks");
    const std::string work = scratch + "/work";
    const std::vector<Task> tasks = load_tasks(std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl");
    // A listener on the host's loopback that no attack may reach.
    const int srv = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(srv, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(srv, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(srv, 8), 0);
    socklen_t len = sizeof addr;
    ::getsockname(srv, reinterpret_cast<sockaddr*>(&addr), &len);
    const std::string port = std::to_string(ntohs(addr.sin_port));
    // The generated files' folder as the judge names it (an attack that guesses it right still
    // must not see it).
    const std::string key_dir = fs::absolute(work).lexically_normal().string() + "/task-" +
                                cuset::Hasher().add(checked_task_of(tasks[0]).key).hex();
    const std::vector<Attack> attacks =
        load_attacks({{"@SCRATCH@", scratch}, {"@WORK@", fs::absolute(work).lexically_normal().string()},
                      {"@PORT@", port}, {"@KEY@", key_dir}});
    ASSERT_GE(attacks.size(), 10u);

    std::vector<ResultRecord> records = reference_records(tasks);  // record i = task i's reference
    for (const Attack& a : attacks) {
        ResultRecord r;
        r.id = tasks.at(static_cast<size_t>(a.task)).id;
        r.task_name = tasks[static_cast<size_t>(a.task)].task_name;
        r.codes = {a.source};
        r.responses = {"```cuda\n" + a.source + "\n```"};
        records.push_back(std::move(r));
    }
    JudgeOptions o;
    o.runner.mode = JudgeMode::kEmulate;
    o.runner.work_dir = work;
    o.runner.cache_dir = scratch + "/cache";
    o.runner.nvcc = cuset::judge::find_nvcc("", "eval.nvcc");
    o.runner.python = cuset::judge::find_python(CUSET_PYTHON, "eval.python");
    o.runner.emulate_timeout_s = 20;
    o.runner.limits.file_mb = 64;
    o.runner.limits.memory_mb = 1024;
    o.runner.limits.processes = 32;
    o.jobs = 2;
    JudgeSummary s = judge_results(tasks, records, o);
    EXPECT_EQ(s.notice, "");
    EXPECT_NE(s.containment.find("namespaces"), std::string::npos) << s.containment;

    for (size_t i = 0; i < tasks.size(); ++i) {
        const SampleResult& ref = s.tasks[i].samples.at(0);
        EXPECT_EQ(ref.status, SampleStatus::kPass) << "reference of task " << i << ": " << ref.error;
    }
    for (size_t k = 0; k < attacks.size(); ++k) {
        const SampleResult& v = s.tasks[tasks.size() + k].samples.at(0);
        EXPECT_NE(v.status, SampleStatus::kPass) << attacks[k].name << " passed";
        EXPECT_FALSE(v.functional.value_or(false)) << attacks[k].name;
        EXPECT_TRUE(v.compiled) << attacks[k].name << " did not even compile: " << v.error;
        EXPECT_NE(v.containment.find("namespaces"), std::string::npos) << attacks[k].name;
    }
    // Processes a stage left behind would act now: give them the time, then look on the host.
    std::this_thread::sleep_for(std::chrono::milliseconds(4000));
    for (const Attack& a : attacks)
        for (const std::string& check : a.host_checks) {
            std::smatch m;
            if (std::regex_match(check, m, std::regex(R"((\S+) does not exist)"))) {
                EXPECT_FALSE(fs::exists(m[1].str())) << a.name << ": " << check;
            } else if (std::regex_match(check, m, std::regex(R"(no process named (\S+) remains)"))) {
                EXPECT_LE(m[1].length(), 15u) << a.name << ": the kernel keeps 15 characters of a name";
                EXPECT_EQ(host_processes_named(m[1]), 0) << a.name << ": " << check;
            } else if (check.find("saw no connection") != std::string::npos) {
                timeval tv{0, 100000};
                fd_set fds;
                FD_ZERO(&fds);
                FD_SET(srv, &fds);
                EXPECT_EQ(::select(srv + 1, &fds, nullptr, nullptr, &tv), 0) << a.name << ": " << check;
            } else {
                ADD_FAILURE() << a.name << ": a host check this test does not know: " << check;
            }
        }
    ::close(srv);
    // Nothing is left in the work folder: no sample's folder, no generated files.
    std::error_code ec;
    EXPECT_TRUE(!fs::exists(work) || fs::is_empty(work, ec)) << "the judge's work folder is not empty";
    for (const char* marker : {"/tmp/cuset-attack-marker", "/cuset-attack-marker", "/tmp/cuset-attack-big"})
        EXPECT_FALSE(fs::exists(marker)) << marker;
}
