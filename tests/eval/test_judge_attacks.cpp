// The judge's attack corpus (tests/fixtures/attacks/*.cu): every hostile program is judged under
// --judge emulate as a sample of its fixture task, next to the honest references of the same
// tasks in the same run. Each attack must end as a non-pass (with the status its `// verdict:`
// line names, when it has one: a program cannot make itself unjudged) and leave no trace outside
// its folder (checked on the host: marker files, processes, a listening socket, a key in the
// test's keyring, the verdicts' texts, the work folder), every reference must still pass, and the
// report of the run is written as valid UTF-8. A second test kills `cuset-train eval` with SIGKILL
// while a program runs and finds none of its processes left.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "cuset/core/hash.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/judge.h"
#include "cuset/eval/report.h"
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
    std::vector<std::string> verdicts;     // the statuses its "// verdict:" line allows (any non-pass if none)
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
        if (std::regex_search(a.source, m, std::regex(R"(// verdict: ([^\n]+))"))) {
            const std::string line = m[1];
            for (size_t at = 0; at <= line.size();) {
                const size_t or_at = line.find(" or ", at);
                a.verdicts.push_back(line.substr(at, or_at == std::string::npos ? std::string::npos : or_at - at));
                if (or_at == std::string::npos) break;
                at = or_at + 4;
            }
        }
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

// How many processes of the host carry `text` in their command line. A process the judge forks
// (the sandbox's outer child, its supervisor) keeps the judge's command line, which names the
// test's own scratch folder: this counts what one judge left, whatever other tests run beside it.
int host_processes_mentioning(const std::string& text) {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        const std::string pid = e.path().filename();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (std::stol(pid) == ::getpid()) continue;
        std::ifstream in(e.path() / "cmdline", std::ios::binary);
        const std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (cmd.find(text) != std::string::npos) ++n;
    }
    return n;
}

// Whether `s` is valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool valid_utf8(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        uint32_t cp = n == 1 ? c : c & (0x7F >> n);
        for (size_t k = 1; k < n; ++k) {
            const unsigned char d = static_cast<unsigned char>(s[i + k]);
            if ((d >> 6) != 2) return false;
            cp = (cp << 6) | (d & 0x3F);
        }
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += n;
    }
    return true;
}

// The soft open-file limit, lowered for a test's scope.
struct OpenFileLimit {
    rlimit saved{};
    explicit OpenFileLimit(rlim_t n) {
        ::getrlimit(RLIMIT_NOFILE, &saved);
        rlimit r = saved;
        r.rlim_cur = std::min<rlim_t>(n, saved.rlim_max);
        ::setrlimit(RLIMIT_NOFILE, &r);
    }
    ~OpenFileLimit() { ::setrlimit(RLIMIT_NOFILE, &saved); }
};

}  // namespace

TEST(JudgeAttacks, EveryAttackFailsAndLeavesNoTraceWhileReferencesPass) {
    const std::string scratch = scratch_dir("judge-attacks");
    // The judge removes what programs leave under the usual open-file limit (deep_nest.cu).
    OpenFileLimit nofile(1024);
    // A secret in this process's session keyring, as a login or a credential helper leaves one
    // (keyring.cu looks for it).
    const std::string secret = "cuset-attack-secret-" + std::to_string(::getpid()) + "-b7e2";
    const long key = ::syscall(SYS_add_key, "user", "cuset-attack-secret", secret.data(), secret.size(), -3 /* session */);
    std::string shared_repeat;
    for (int i = 0; i < 100000; ++i) shared_repeat += "extern __shared__ ";
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
                      {"@PORT@", port}, {"@KEY@", key_dir}, {"@SECRET@", secret},
                      {"@REPEAT_EXTERN_SHARED@", shared_repeat}});
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
    o.runner.limits.disk_mb = 128;
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
        const bool may_be_unjudged =
            std::find(attacks[k].verdicts.begin(), attacks[k].verdicts.end(), "unjudged") != attacks[k].verdicts.end();
        if (!may_be_unjudged) {
            EXPECT_NE(v.status, SampleStatus::kUnjudged) << attacks[k].name << " made itself unjudged: " << v.error;
        }
        if (!attacks[k].verdicts.empty()) {
            const std::string got = sample_status_name(v.status);
            EXPECT_NE(std::find(attacks[k].verdicts.begin(), attacks[k].verdicts.end(), got), attacks[k].verdicts.end())
                << attacks[k].name << " ended " << got << ": " << v.error;
        }
    }
    // The run's report is written, and every text in it is valid UTF-8 (invalid_utf8.cu).
    const std::string report_dir = scratch + "/report";
    fs::create_directories(report_dir);
    write_report(make_report(s, "tasks.jsonl", "results.jsonl"), report_dir);
    for (const char* f : {"/eval.json", "/eval.html"}) {
        const std::string text = read_file(report_dir + f);
        EXPECT_TRUE(valid_utf8(text)) << f;
    }
    EXPECT_NO_THROW(nlohmann::json::parse(read_file(report_dir + "/eval.json")));
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
            } else if (std::regex_match(check, m, std::regex(R"(no verdict contains (\S+))"))) {
                for (const TaskResult& t : s.tasks)
                    for (const SampleResult& v : t.samples)
                        EXPECT_EQ(v.error.find(m[1].str()), std::string::npos) << a.name << ": " << v.error;
            } else if (check == "the test's key is intact") {
                if (key < 0) continue;  // no keyrings on this kernel: nothing to reach
                char buf[256] = {};
                const long n = ::syscall(SYS_keyctl, 11 /* KEYCTL_READ */, key, buf, sizeof buf);
                EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), secret) << a.name << ": " << check;
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
    if (key > 0) ::syscall(SYS_keyctl, 3 /* KEYCTL_REVOKE */, key);
}

// `kill -9` of a running eval: the sandbox's levels die with it (each has a parent-death signal
// tied to the level above), so no process of the run remains 2 s later.
TEST(JudgeAttacks, KillingTheJudgeLeavesNoProcess) {
    const std::string scratch = scratch_dir("judge-kill9");
    const std::vector<Task> tasks = load_tasks(std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl");
    const std::string program = R"(#include <sys/prctl.h>
#include <unistd.h>
int main() {
    if (fork() == 0) {
        setsid();
        prctl(PR_SET_NAME, "cuset-k9-child");
        sleep(600);
        _exit(0);
    }
    prctl(PR_SET_NAME, "cuset-k9-main");
    sleep(600);
    return 0;
}
)";
    ResultRecord r;
    r.id = tasks.at(2).id;
    r.task_name = tasks[2].task_name;
    r.codes = {program};
    r.responses = {"```cuda\n" + program + "```"};
    write_results(scratch + "/results.jsonl", {r});
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const std::string log = scratch + "/eval.log";
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execl(CUSET_BINARY, CUSET_BINARY, "eval", "--results", (scratch + "/results.jsonl").c_str(), "--tasks",
                (std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl").c_str(), "--judge", "emulate",
                "--out", (scratch + "/out").c_str(), "--set", "eval.emulate_timeout_s=900", nullptr);
        ::_exit(127);
    }
    // Wait for the program to run (the emulator's runtime is built first: minutes on a cold cache).
    bool running = false;
    for (int i = 0; i < 1200 && !running; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        running = host_processes_named("cuset-k9-main") > 0 && host_processes_named("cuset-k9-child") > 0;
        int st = 0;
        if (::waitpid(pid, &st, WNOHANG) == pid) break;
    }
    ASSERT_TRUE(running) << "the program never ran: " << read_file(scratch + "/eval.log");
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int st = 0;
    ::waitpid(pid, &st, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    EXPECT_EQ(host_processes_named("cuset-k9-main"), 0) << "the program outlived the judge";
    EXPECT_EQ(host_processes_named("cuset-k9-child"), 0) << "the program's child outlived the judge";
    EXPECT_EQ(host_processes_mentioning(scratch), 0) << "a process of the judge outlived it";
}
