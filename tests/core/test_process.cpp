// core/process: a command in its own process group with captured output, exit status, a
// timeout that kills the whole group (grandchildren included), and an output cap; and the
// core/signals scope that `data check` holds while such processes run.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cuset/core/error.h"
#include "cuset/core/process.h"
#include "cuset/core/signals.h"
#include "test_util.h"

using cuset::Process;
using cuset::ProcessOptions;
using cuset::ProcessResult;
using cuset::process_run;
using cuset::test::read_file;
using cuset::test::scratch_dir;

namespace fs = std::filesystem;

namespace {

ProcessOptions sh(const std::string& script, double timeout_s = 0) {
    ProcessOptions o;
    o.argv = {"/bin/sh", "-c", script};
    o.timeout_s = timeout_s;
    return o;
}

std::string fresh_dir(const std::string& name) {
    return scratch_dir("process-" + name + "-" + std::to_string(::getpid()));
}

// True when `pid` is gone or a zombie (killed, waiting for its new parent to reap it), waiting
// up to 5 s for that.
bool process_gone(pid_t pid) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string line;
        if (!stat || !std::getline(stat, line)) return true;
        size_t close = line.rfind(')');
        if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') return true;
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

pid_t read_pid(const std::string& path) {
    std::string text = read_file(path);
    return static_cast<pid_t>(std::stol(text));
}

}  // namespace

TEST(Process, CapturesStdoutStderrAndExitCode) {
    ProcessResult r = process_run(sh("echo out; echo err >&2; echo more; exit 3"));
    EXPECT_EQ(r.out, "out\nmore\n");
    EXPECT_EQ(r.err, "err\n");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_EQ(r.signal, 0);
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status_code(), 3);

    ProcessResult ok = process_run(sh("printf 'a b'"));
    EXPECT_TRUE(ok.ok());
    EXPECT_EQ(ok.exit_code, 0);
    EXPECT_EQ(ok.out, "a b");
}

TEST(Process, MergedStderrIsOneStream) {
    ProcessOptions o = sh("echo one; echo two >&2; echo three");
    o.merge_stderr = true;
    ProcessResult r = process_run(o);
    EXPECT_EQ(r.out, "one\ntwo\nthree\n");
    EXPECT_EQ(r.err, "");
}

TEST(Process, EndedBySignal) {
    ProcessResult r = process_run(sh("kill -TERM $$; sleep 5"));
    EXPECT_EQ(r.signal, SIGTERM);
    EXPECT_EQ(r.exit_code, -1);
    EXPECT_EQ(r.status_code(), 128 + SIGTERM);
    EXPECT_FALSE(r.timed_out);
    EXPECT_FALSE(r.ok());
}

TEST(Process, WorkingDirectoryEnvironmentAndStdin) {
    std::string dir = fresh_dir("cwd");
    ProcessOptions o = sh("pwd; echo \"$CUSET_PROCESS_TEST\"; echo \"${CUSET_PROCESS_GONE-unset}\"; cat");
    o.cwd = dir;
    o.env = {"CUSET_PROCESS_TEST=hello", "CUSET_PROCESS_GONE"};
    ::setenv("CUSET_PROCESS_GONE", "still here", 1);
    ::setenv("CUSET_PROCESS_TEST", "old value", 1);
    ProcessResult r = process_run(o);
    ::unsetenv("CUSET_PROCESS_GONE");
    ::unsetenv("CUSET_PROCESS_TEST");
    // stdin is /dev/null: cat ends at once instead of waiting for a terminal.
    EXPECT_EQ(r.out, fs::canonical(dir).string() + "\nhello\nunset\n");
    EXPECT_TRUE(r.ok());

    std::string in = dir + "/input.txt";
    std::ofstream(in) << "from a file\n";
    ProcessOptions c;
    c.argv = {"cat"};  // looked up on PATH
    c.stdin_file = in;
    EXPECT_EQ(process_run(c).out, "from a file\n");
}

TEST(Process, TimeoutKillsTheWholeGroup) {
    std::string dir = fresh_dir("timeout");
    // The child starts a grandchild that sleeps (and holds the output pipe), then sleeps itself.
    ProcessOptions o = sh("sleep 60 & echo $! > grandchild.pid; echo started; sleep 60", 0.5);
    o.cwd = dir;
    auto t0 = std::chrono::steady_clock::now();
    ProcessResult r = process_run(o);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(r.timed_out);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.signal, SIGKILL);
    EXPECT_EQ(r.out, "started\n");
    EXPECT_GE(r.seconds, 0.5);
    EXPECT_LT(took, 10.0);
    ASSERT_TRUE(fs::exists(dir + "/grandchild.pid"));
    EXPECT_TRUE(process_gone(read_pid(dir + "/grandchild.pid")));
}

TEST(Process, ExitTakesLeftoverGroupMembersAlong) {
    std::string dir = fresh_dir("leftover");
    ProcessOptions o = sh("sleep 60 & echo $! > grandchild.pid; echo done");
    o.cwd = dir;
    auto t0 = std::chrono::steady_clock::now();
    ProcessResult r = process_run(o);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.out, "done\n");
    EXPECT_LT(took, 10.0);  // not held by the grandchild's end of the pipe
    EXPECT_TRUE(process_gone(read_pid(dir + "/grandchild.pid")));
}

TEST(Process, OutputCapKeepsTheHeadOrTheTail) {
    ProcessOptions o = sh("i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done; echo LAST");
    o.output_cap = 100;
    ProcessResult head = process_run(o);
    EXPECT_TRUE(head.ok());  // the rest was read (the writer never blocked) and dropped
    EXPECT_EQ(head.out.size(), 100u);
    EXPECT_EQ(head.out.rfind("line0\nline1\n", 0), 0u);
    EXPECT_TRUE(head.out_truncated);

    o.keep_tail = true;
    ProcessResult tail = process_run(o);
    EXPECT_TRUE(tail.ok());
    EXPECT_EQ(tail.out.size(), 100u);
    EXPECT_NE(tail.out.find("line2999\nLAST\n"), std::string::npos);
    EXPECT_EQ(tail.out.substr(tail.out.size() - 5), "LAST\n");
    EXPECT_TRUE(tail.out_truncated);

    // A large output (beyond a pipe's buffer) comes through whole under a large enough cap.
    ProcessOptions big = sh("head -c 1000000 /dev/zero");
    big.output_cap = 2000000;
    ProcessResult b = process_run(big);
    EXPECT_EQ(b.out.size(), 1000000u);
    EXPECT_FALSE(b.out_truncated);
}

TEST(Process, KillAndParallelPolling) {
    Process slow(sh("sleep 60"));
    Process fast(sh("echo quick"));
    std::vector<Process*> both{&slow, &fast};
    while (!fast.poll()) cuset::process_wait_any(both, 0.02);
    EXPECT_FALSE(slow.poll());
    EXPECT_EQ(fast.result().out, "quick\n");
    slow.kill();
    const ProcessResult& r = slow.wait();
    EXPECT_TRUE(r.killed);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.signal, SIGKILL);
}

// A killed tree's CPU time is what it was when the first SIGKILL went out. The tree here is
// sh -> python, whose forked child burned 0.4 CPU seconds and was reaped by python (so it is in
// python's cutime). Once the group is killed, python is gone with that time while sh, the
// leader, stays a zombie until reaped: a second kill() that read the tree again would find sh
// alone (no CPU time) and lower the figure.
TEST(Process, AKilledTreesCpuTimeIsReadBeforeTheFirstKillNotDuringTheTeardown) {
    const std::string script = std::string(CUSET_PYTHON) +
                               " -c 'import os, time\n"
                               "pid = os.fork()\n"
                               "if pid == 0:\n"
                               "    while time.process_time() < 0.4: pass\n"
                               "    os._exit(0)\n"
                               "os.waitpid(pid, 0)\n"
                               "print(\"done\", flush=True)\n"
                               "time.sleep(60)\n'; true";
    Process p(sh(script, 120));
    while (!p.poll() && p.result().out.find("done") == std::string::npos) cuset::process_wait_any({&p}, 0.02);
    ASSERT_NE(p.result().out.find("done"), std::string::npos);
    const pid_t python = [&] {  // sh's only child
        std::ifstream children("/proc/" + std::to_string(p.pid()) + "/task/" + std::to_string(p.pid()) + "/children");
        pid_t c = 0;
        children >> c;
        return c;
    }();
    ASSERT_GT(python, 0);
    p.kill();
    ASSERT_TRUE(process_gone(python));
    p.kill();  // the group is still dying: sh is a zombie nobody has reaped
    const ProcessResult& r = p.wait();
    EXPECT_TRUE(r.killed);
    // /proc counts whole clock ticks (10 ms) per process, rounded down: 0.35 leaves room for them.
    EXPECT_GE(r.cpu_s, 0.35);
    EXPECT_LE(r.cpu_s, 3.0);
}

TEST(Process, CommandsThatCannotStart) {
    ProcessOptions missing;
    missing.argv = {"/nonexistent/cuset-no-such-program"};
    try {
        process_run(missing);
        FAIL() << "started a missing program";
    } catch (const cuset::RuntimeFailure& e) {
        EXPECT_NE(std::string(e.what()).find("cannot start /nonexistent/cuset-no-such-program"), std::string::npos)
            << e.what();
    }
    ProcessOptions unknown;
    unknown.argv = {"cuset-no-such-program-on-path"};
    EXPECT_THROW(process_run(unknown), cuset::RuntimeFailure);
    ProcessOptions bad_cwd = sh("true");
    bad_cwd.cwd = "/nonexistent/folder";
    EXPECT_THROW(process_run(bad_cwd), cuset::RuntimeFailure);
    EXPECT_EQ(cuset::process_find_program("cuset-no-such-program-on-path"), "");
    EXPECT_EQ(cuset::process_find_program("/bin/sh"), "/bin/sh");
    EXPECT_FALSE(cuset::process_find_program("sh").empty());
}

namespace {
volatile std::sig_atomic_t g_outer_signal = 0;
extern "C" void outer_handler(int sig) { g_outer_signal = sig; }
}  // namespace

TEST(StopSignalScope, RecordsSignalsWithoutExitingAndRestoresTheHandler) {
    struct sigaction sa {}, old {};
    sa.sa_handler = outer_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old);
    g_outer_signal = 0;
    {
        cuset::StopSignalOptions o;
        o.second_exits = false;
        cuset::StopSignalScope scope(o);
        EXPECT_FALSE(cuset::signals_stop_requested());
        ::raise(SIGTERM);
        EXPECT_TRUE(cuset::signals_stop_requested());
        EXPECT_EQ(cuset::signals_received(), SIGTERM);
        ::raise(SIGINT);  // a second one is only recorded: this process lives on
        EXPECT_EQ(cuset::signals_received(), SIGTERM);
        EXPECT_EQ(g_outer_signal, 0);
    }
    EXPECT_FALSE(cuset::signals_stop_requested());
    ::raise(SIGTERM);  // the handler from before the scope is back
    EXPECT_EQ(g_outer_signal, SIGTERM);
    sigaction(SIGTERM, &old, nullptr);
}

TEST(StopSignals, SecondSignalExitsWith128PlusSignal) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            cuset::signals_reset();
            cuset::StopSignalOptions o;
            o.second_message = "second signal\n";
            cuset::signals_install(o);
            ::raise(SIGTERM);
            if (!cuset::signals_stop_requested()) std::_Exit(1);
            ::raise(SIGTERM);
            std::_Exit(2);  // not reached
        },
        ::testing::ExitedWithCode(128 + SIGTERM), "second signal");
}
