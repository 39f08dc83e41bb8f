// The sandbox holds what judge/sandbox.h promises, shown with shell commands run inside it: the
// host's files are absent or read-only, only the work folder is writable, /tmp is private,
// there is no network, nothing outlives the command, and the rlimits stop a fork bomb, a
// memory hog and an endless file. Each check is made against a host-side fact the command
// could not fake (a file on the host, a listening socket, the host's process table).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "cuset/judge/sandbox.h"
#include "cuset/judge/toolchain.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::ProcessOptions;
using cuset::ProcessResult;
using cuset::judge::Sandbox;
using cuset::judge::SandboxMount;
using cuset::judge::SandboxOptions;
using cuset::test::read_file;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

// Containment is part of a machine set up by the README: its absence fails, never skips.
void require_sandbox() {
    const std::string why = Sandbox::unavailable_reason();
    ASSERT_EQ(why, "") << "containment cannot be set up on this machine";
}

SandboxOptions small_limits() {
    SandboxOptions o;
    o.limits.processes = 32;
    o.limits.memory_mb = 256;
    o.limits.file_mb = 16;
    o.limits.cpu_s = 30;
    o.read_only = cuset::judge::find_python(CUSET_PYTHON, "CUSET_PYTHON").roots;
    return o;
}

ProcessResult run_in(const Sandbox& sb, const std::string& work, const std::string& script,
                     const std::vector<SandboxMount>& files = {}, double timeout_s = 60) {
    ProcessOptions po;
    po.argv = {"/bin/sh", "-c", script};
    po.timeout_s = timeout_s;
    po.merge_stderr = true;
    Sandbox::Prepared p = sb.wrap(po, work, files);
    return cuset::process_run(p.options);
}

int count_host_processes(const std::string& marker) {
    auto r = cuset::test::run_command("ps -eo args | grep -c '[" + marker.substr(0, 1) + "]" + marker.substr(1) + "' || true");
    return std::stoi(r.out);
}

}  // namespace

// A read-only folder named through a symbolic link (a project's .venv linking to an environment
// elsewhere) is reachable inside by the path it was named by, not only by its resolved path.
TEST(Sandbox, AFolderNamedThroughALinkIsSeenByThatName) {
    require_sandbox();
    const std::string dir = scratch_dir("sandbox-link");
    fs::create_directories(dir + "/env/bin");
    fs::create_directories(dir + "/project");
    write_file(dir + "/env/bin/tool.txt", "tool\n");
    fs::create_directory_symlink(dir + "/env", dir + "/project/.venv");
    fs::create_directories(dir + "/work");
    SandboxOptions o = small_limits();
    o.read_only.push_back(dir + "/project/.venv/bin");
    Sandbox sb(o);
    ProcessResult r = run_in(sb, dir + "/work",
                             "cat " + dir + "/project/.venv/bin/tool.txt; cat " + dir + "/env/bin/tool.txt; "
                             "(echo x > " + dir + "/env/bin/planted) 2>/dev/null || echo read-only");
    EXPECT_EQ(r.out, "tool\ntool\nread-only\n") << r.err;
    EXPECT_FALSE(fs::exists(dir + "/env/bin/planted"));
}

// The sandbox's /tmp is private; a read-only folder that lives under the host's /tmp (an
// environment or a checkout there) is still seen, on top of it, and /tmp stays writable.
TEST(Sandbox, AFolderUnderTheHostsTmpIsSeen) {
    require_sandbox();
    char tmpl[] = "/tmp/cuset-sandbox-ro-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string ro = tmpl;
    fs::permissions(ro, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);  // mkdtemp makes it 0700
    write_file(ro + "/tool.txt", "tool\n");
    const std::string dir = scratch_dir("sandbox-tmp");
    fs::create_directories(dir + "/work");
    SandboxOptions o = small_limits();
    o.read_only.push_back(ro);
    Sandbox sb(o);
    ProcessResult r = run_in(sb, dir + "/work",
                             "cat " + ro + "/tool.txt; (echo x > " + ro + "/planted) 2>/dev/null || echo read-only; "
                             "echo t > /tmp/own.txt && cat /tmp/own.txt");
    EXPECT_EQ(r.out, "tool\nread-only\nt\n") << r.err;
    EXPECT_FALSE(fs::exists(ro + "/planted"));
    EXPECT_FALSE(fs::exists("/tmp/own.txt"));
    fs::remove_all(ro);
}

TEST(Sandbox, ShowsOnlyTheWorkFolderWritableAndTheHostAbsentOrReadOnly) {
    require_sandbox();
    const std::string dir = scratch_dir("sandbox-fs");
    fs::create_directories(dir + "/work/data");
    write_file(dir + "/secret.txt", "host secret\n");
    write_file(dir + "/input.bin", "input bytes\n");
    Sandbox sb(small_limits());
    ProcessResult r = run_in(sb, dir + "/work",
                             "echo made > made.txt; cat data/in.bin; "
                             "cat " + dir + "/secret.txt 2>/dev/null || echo no-secret; "
                             "ls " + dir + " 2>/dev/null || echo no-scratch; "
                             "echo x > data/in.bin 2>/dev/null || echo input-read-only; "
                             "echo x > /usr/planted 2>/dev/null || echo usr-read-only; "
                             "echo x > /planted 2>/dev/null || echo root-read-only; "
                             "echo t > /tmp/t && echo tmp-writable; "
                             "ls /home /root/.ssh 2>/dev/null || echo no-home; id -u",
                             {{dir + "/input.bin", "/box/data/in.bin", false}});
    ASSERT_TRUE(r.ok()) << r.out;
    for (const char* want : {"input bytes", "no-secret", "no-scratch", "input-read-only", "usr-read-only", "root-read-only",
                             "tmp-writable", "no-home"})
        EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
    EXPECT_EQ(read_file(dir + "/work/made.txt"), "made\n") << "the work folder is the host's";
    EXPECT_EQ(read_file(dir + "/input.bin"), "input bytes\n");
    EXPECT_FALSE(fs::exists("/usr/planted"));
    EXPECT_EQ(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1), "1000\n") << "an unprivileged user";
    // The private /tmp died with the command.
    EXPECT_FALSE(fs::exists("/tmp/t") && read_file("/tmp/t") == "t\n");
}

TEST(Sandbox, HasNoNetwork) {
    require_sandbox();
    const std::string dir = scratch_dir("sandbox-net");
    const int srv = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(srv, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ASSERT_EQ(::bind(srv, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(srv, 4), 0);
    socklen_t len = sizeof a;
    ::getsockname(srv, reinterpret_cast<sockaddr*>(&a), &len);
    const int port = ntohs(a.sin_port);
    Sandbox sb(small_limits());
    ProcessResult r = run_in(sb, dir,
                             std::string(CUSET_PYTHON) + " -I -c \"import socket; s = socket.socket(); s.settimeout(2); "
                             "print('connect', s.connect_ex(('127.0.0.1', " + std::to_string(port) + ")))\"");
    EXPECT_NE(r.out.find("connect "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("connect 0"), std::string::npos) << "a connection was made: " << r.out;
    // The host side: nobody knocked.
    timeval tv{0, 200000};
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(srv, &fds);
    EXPECT_EQ(::select(srv + 1, &fds, nullptr, nullptr, &tv), 0) << "the listening socket saw a connection";
    ::close(srv);
}

TEST(Sandbox, NothingOutlivesTheCommand) {
    require_sandbox();
    const std::string dir = scratch_dir("sandbox-outlive");
    Sandbox sb(small_limits());
    // A detached grandchild in its own session that would write a file 2 s later.
    ProcessResult r = run_in(sb, dir, "(setsid sh -c 'sleep 2; echo late > late.txt; sleep 300' cuset-outlive-marker &) ; echo started");
    ASSERT_TRUE(r.ok()) << r.out;
    EXPECT_LT(r.seconds, 1.5) << "the command returned without waiting for its child";
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    EXPECT_FALSE(fs::exists(dir + "/late.txt")) << "a process outlived the command";
    EXPECT_EQ(count_host_processes("cuset-outlive-marker"), 0);
}

TEST(Sandbox, LimitsStopAForkBombAMemoryHogAndAnEndlessFile) {
    require_sandbox();
    const std::string dir = scratch_dir("sandbox-limits");
    Sandbox sb(small_limits());
    // Forks stop at the process limit (32); the bomb cannot take the machine's process table.
    ProcessResult f = run_in(sb, dir, std::string(CUSET_PYTHON) + " -I -c \"import os, time\nn = 0\nfor i in range(200):\n"
                                      "    try:\n        pid = os.fork()\n    except OSError:\n        continue\n"
                                      "    if pid == 0:\n        time.sleep(5)\n        os._exit(0)\n    n += 1\n"
                                      "print('started', n)\"", {}, 60);
    ASSERT_NE(f.out.find("started"), std::string::npos) << f.out;
    const int started = std::stoi(f.out.substr(f.out.find("started") + 8));
    EXPECT_LE(started, 32) << f.out;
    EXPECT_GE(started, 1) << f.out;
    // Memory: a 1 GiB allocation fails under the 256 MiB limit.
    ProcessResult m = run_in(sb, dir, std::string(CUSET_PYTHON) + " -I -c \"x = bytearray(1 << 30)\" 2>&1; echo rc=$?");
    EXPECT_NE(m.out.find("MemoryError"), std::string::npos) << m.out;
    // Files: writing 64 MiB stops at 16 MiB (SIGXFSZ), in the work folder and in /tmp.
    ProcessResult w = run_in(sb, dir, "head -c 67108864 /dev/zero > big; head -c 67108864 /dev/zero > /tmp/big; "
                                      "stat -c %s big /tmp/big");
    EXPECT_NE(w.out.find("16777216\n16777216"), std::string::npos) << w.out;
    EXPECT_EQ(fs::file_size(dir + "/big"), uintmax_t{16} << 20);
}

TEST(Sandbox, DescribesWhatIsInForce) {
    Sandbox sb(small_limits());
    const std::string d = sb.describe();
    EXPECT_NE(d.find("namespaces (user, mount, pid, net, ipc, uts)"), std::string::npos) << d;
    EXPECT_NE(d.find("memory 256 MiB"), std::string::npos) << d;
    EXPECT_NE(d.find("32 processes"), std::string::npos) << d;
    EXPECT_NE(d.find("seccomp ("), std::string::npos) << d;
    EXPECT_NE(d.find("fresh session keyring"), std::string::npos) << d;
    EXPECT_TRUE(d.find("cgroup v") != std::string::npos || d.find("no control group (") != std::string::npos) << d;
}

namespace {

// Runs Python code inside `sb` with its output merged.
ProcessResult python_in(const Sandbox& sb, const std::string& work, const std::string& code, double timeout_s = 60) {
    ProcessOptions po;
    po.argv = {CUSET_PYTHON, "-I", "-c", code};
    po.timeout_s = timeout_s;
    po.merge_stderr = true;
    Sandbox::Prepared p = sb.wrap(po, work, {});
    return cuset::process_run(p.options);
}

}  // namespace

// The user's keys are out of reach: the command has a session keyring of its own and the keyring
// calls are denied, as are the other calls of kSandboxDeniedCalls; ordinary calls still work.
TEST(Sandbox, TheUsersKeyringAndTheDeniedCallsAreOutOfReach) {
    require_sandbox();
    const std::string dir = scratch_dir("sandbox-seccomp");
    // A secret in this process's session keyring, as a login or a credential helper leaves one.
    const std::string secret = "cuset-keyring-secret-5f1d";
    const long key = ::syscall(SYS_add_key, "user", "cuset-test-secret", secret.data(), secret.size(), -3 /* session */);
    Sandbox sb(small_limits());
    // x86-64 call numbers: keyctl 250, request_key 249, bpf 321, perf_event_open 298,
    // userfaultfd 323, io_uring_setup 425, ptrace 101, unshare 272, mount 165, process_vm_readv 310,
    // setns 308, getpid 39.
    ProcessResult r = python_in(sb, dir,
                                "import ctypes, os\n"
                                "libc = ctypes.CDLL(None, use_errno=True)\n"
                                "calls = {'keyctl': (250, 0, -3), 'request_key': (249, b'user', b'cuset-test-secret', 0, -3),"
                                " 'bpf': (321, 0, 0, 0), 'perf_event_open': (298, 0, 0, -1, -1, 0), 'userfaultfd': (323, 0),"
                                " 'io_uring_setup': (425, 1, 0), 'ptrace': (101, 0, 0, 0, 0), 'unshare': (272, 0x10000000),"
                                " 'mount': (165, b'none', b'/tmp', b'tmpfs', 0, 0), 'process_vm_readv': (310, 1, 0, 0, 0, 0, 0),"
                                " 'setns': (308, 0, 0)}\n"
                                "for name, args in sorted(calls.items()):\n"
                                "    rc = libc.syscall(*args)\n"
                                "    print(name, rc, os.strerror(ctypes.get_errno()) if rc < 0 else 'ALLOWED')\n"
                                "print('getpid', libc.syscall(39))\n");
    ASSERT_TRUE(r.ok()) << r.out;
    for (const char* name : {"keyctl", "request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "ptrace",
                             "unshare", "mount", "process_vm_readv", "setns"})
        EXPECT_NE(r.out.find(std::string(name) + " -1 Operation not permitted"), std::string::npos) << name << ":\n" << r.out;
    EXPECT_EQ(r.out.find("ALLOWED"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("getpid 2\n"), std::string::npos) << "ordinary calls must work (python is PID 2):\n" << r.out;
    EXPECT_EQ(r.out.find(secret), std::string::npos);
    // clone() with a namespace flag is refused; threads (clone without one) still start.
    ProcessResult t = python_in(sb, dir,
                                "import threading, ctypes, os\n"
                                "th = threading.Thread(target=print, args=('thread ran',)); th.start(); th.join()\n"
                                "libc = ctypes.CDLL(None, use_errno=True)\n"
                                "print('clone', libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0), os.strerror(ctypes.get_errno()))\n");
    EXPECT_NE(t.out.find("thread ran"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("clone -1 Operation not permitted"), std::string::npos) << t.out;
    if (key > 0) {  // the key is still there, unchanged, for this process
        char buf[128] = {};
        const long n = ::syscall(SYS_keyctl, 11 /* KEYCTL_READ */, key, buf, sizeof buf);
        EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), secret);
        ::syscall(SYS_keyctl, 3 /* KEYCTL_REVOKE */, key);
    }
}

// Where the machine lets the judge make control groups, memory is bounded across all of a
// command's processes, shared mappings and memfds included (an rlimit bounds private memory per
// process only); without one the sandbox says so.
TEST(Sandbox, SharedMemoryIsBoundedWhereAControlGroupHolds) {
    require_sandbox();
    const std::string dir = scratch_dir("sandbox-shared-memory");
    Sandbox sb(small_limits());  // 256 MiB
    ProcessOptions po;
    // A shared anonymous mapping: RLIMIT_DATA counts private mappings only (a memfd is bounded by
    // RLIMIT_FSIZE, as a file).
    po.argv = {CUSET_PYTHON, "-I", "-c",
               "import mmap\n"
               "m = mmap.mmap(-1, 512 << 20)\n"
               "for i in range(0, 512 << 20, 4096): m[i] = 1\n"
               "print('touched 512 MiB')\n"};
    po.timeout_s = 60;
    po.merge_stderr = true;
    Sandbox::Prepared p = sb.wrap(po, dir, {});
    ProcessResult r = cuset::process_run(p.options);
    const cuset::judge::CgroupUsage u = p.setup->usage();
    if (sb.cgroups()) {
        EXPECT_EQ(r.out.find("touched 512 MiB"), std::string::npos) << r.out;
        EXPECT_EQ(r.signal, SIGKILL) << r.out;
        EXPECT_TRUE(u.oom_killed);
        EXPECT_NE(sb.describe().find("memory 256 MiB (shared included)"), std::string::npos) << sb.describe();
    } else {
        EXPECT_NE(sb.describe().find("no control group"), std::string::npos) << sb.describe();
        EXPECT_FALSE(u.oom_killed);
    }
}

// The CPU time of every process of a command is measured, also when the judge kills it (the rule
// that tells a busy emulated run from a program that stopped itself rests on it): a child burns
// one CPU second, its parent waits for it, then stops itself until the judge kills it.
// The CPU time of a contained command's whole tree (outer process -> supervisor -> python ->
// a forked child that burned its CPU and was reaped) is measured however busy the machine is.
// The case is repeated with two threads spinning beside it, and the command is killed the way
// the runner kills it: kill() on every poll until the group is reaped, so later kills land
// while the tree is being torn down (they must not replace what the first one read).
TEST(Sandbox, TheCpuTimeOfAllItsProcessesIsMeasured) {
    require_sandbox();
    const std::string dir = scratch_dir("sandbox-cpu");
    Sandbox sb(small_limits());
    std::atomic<bool> stop{false};
    std::vector<std::thread> load;
    for (int i = 0; i < 2; ++i)
        load.emplace_back([&] {
            volatile unsigned long long x = 0;
            while (!stop.load(std::memory_order_relaxed)) x = x + 1;
        });
    for (int round = 0; round < 4; ++round) {
        ProcessOptions po;
        po.argv = {CUSET_PYTHON, "-I", "-c",
                   "import os, signal, sys, time\n"
                   "pid = os.fork()\n"
                   "if pid == 0:\n"
                   "    while time.process_time() < 0.5: pass\n"
                   "    os._exit(0)\n"
                   "os.waitpid(pid, 0)\n"
                   "print('done', flush=True)\n"
                   "os.kill(os.getpid(), signal.SIGSTOP)\n"};
        po.timeout_s = 300;
        po.merge_stderr = true;
        Sandbox::Prepared p = sb.wrap(po, dir, {});
        cuset::Process proc(p.options);
        while (!proc.poll()) {
            if (proc.result().out.find("done") != std::string::npos) proc.kill();
            cuset::process_wait_any({&proc}, 0.01);
        }
        ASSERT_TRUE(proc.result().killed) << proc.result().out;
        // The kernel's accounting of the tree read before the kill, and the group's where one
        // holds: the child's half second plus the interpreters' start-up, well under 3 s. /proc
        // counts in clock ticks (10 ms), rounded down per process: 0.45 leaves room for a few.
        EXPECT_GE(proc.result().cpu_s, 0.45) << "round " << round;
        EXPECT_LE(proc.result().cpu_s, 3.0) << "round " << round;
        if (sb.cgroups()) {
            EXPECT_GE(p.setup->usage().cpu_s, 0.45) << "round " << round;
            EXPECT_LE(p.setup->usage().cpu_s, 3.0) << "round " << round;
        }
    }
    stop = true;
    for (std::thread& t : load) t.join();
}
