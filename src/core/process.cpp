// A command in its own process group: fork/exec with pipes, timeout, group kill, capped output.
#include "cuset/core/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "cuset/core/error.h"

extern char** environ;

namespace cuset {

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// How long output is still drained after the command was reaped, for pipes held open by a
// process that left the group (setsid) and so survived the group kill.
constexpr double kDrainGrace_s = 1.0;

// CPU seconds (user + system, its own and its reaped children's) of `pid` and every process
// below it, read from /proc before they are killed; at most kMaxTreeProcesses processes.
constexpr int kMaxTreeProcesses = 4096;

double tree_cpu_seconds(pid_t root) {
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    std::vector<pid_t> todo{root};
    double total = 0;
    for (size_t i = 0; i < todo.size() && todo.size() < kMaxTreeProcesses; ++i) {
        const std::string dir = "/proc/" + std::to_string(todo[i]);
        std::ifstream stat(dir + "/stat");
        std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        const size_t paren = text.rfind(')');  // the name may hold spaces and parentheses
        if (paren == std::string::npos) continue;
        std::istringstream rest(text.substr(paren + 2));
        std::string field;
        std::vector<std::string> f;
        while (f.size() < 15 && rest >> field) f.push_back(field);
        if (f.size() < 15) continue;
        // Fields 14-17 of the file (utime, stime, cutime, cstime) are 11-14 after the name.
        for (int k = 11; k <= 14; ++k) total += std::strtod(f[static_cast<size_t>(k)].c_str(), nullptr) / tick;
        // The children of every thread of it.
        if (DIR* tasks = ::opendir((dir + "/task").c_str())) {
            while (const dirent* e = ::readdir(tasks)) {
                if (e->d_name[0] == '.') continue;
                std::ifstream children(dir + "/task/" + e->d_name + "/children");
                pid_t c = 0;
                while (children >> c) todo.push_back(c);
            }
            ::closedir(tasks);
        }
    }
    return total;
}

bool is_executable_file(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

void append_capped(std::string& s, bool& truncated, const char* data, size_t n, size_t cap, bool keep_tail) {
    if (!keep_tail) {
        size_t room = s.size() < cap ? cap - s.size() : 0;
        size_t take = std::min(room, n);
        s.append(data, take);
        if (take < n) truncated = true;
        return;
    }
    s.append(data, n);
    // Trim in large steps so that a long output costs linear time.
    if (s.size() > 2 * cap + (size_t{1} << 16)) {
        s.erase(0, s.size() - cap);
        truncated = true;
    }
}

void trim_tail(std::string& s, bool& truncated, size_t cap) {
    if (s.size() > cap) {
        s.erase(0, s.size() - cap);
        truncated = true;
    }
}

// What a child reports through its exec pipe when it cannot exec: the errno and the step.
struct ChildFailure {
    int err;
    const char* step;
};

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

}  // namespace

std::string process_find_program(const std::string& name) {
    if (name.empty()) return "";
    if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : "";
    const char* path = std::getenv("PATH");
    std::stringstream ss(path ? path : "");
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (dir.empty()) dir = ".";
        std::string p = dir + "/" + name;
        if (is_executable_file(p)) return p;
    }
    return "";
}

Process::Process(ProcessOptions opts) : opts_(std::move(opts)) {
    if (opts_.argv.empty()) throw RuntimeFailure("cannot start a process: no command given");
    const std::string& name = opts_.argv[0];
    // A path goes to execve as it is (its errors come back from the child); a name is looked up.
    std::string exe = name.find('/') != std::string::npos ? name : process_find_program(name);
    if (exe.empty()) throw RuntimeFailure("cannot start " + name + ": not found on PATH");

    // Everything the child needs is prepared here: after fork() it only makes system calls.
    std::vector<char*> args;
    for (std::string& a : opts_.argv) args.push_back(a.data());
    args.push_back(nullptr);
    std::vector<std::string> env_store;
    for (char** e = opts_.clear_env ? nullptr : environ; e && *e; ++e) {
        std::string_view entry(*e);
        bool replaced = false;
        for (const std::string& add : opts_.env) {
            std::string key = add.substr(0, add.find('=')) + "=";
            if (entry.substr(0, key.size()) == key) replaced = true;
        }
        if (!replaced) env_store.emplace_back(entry);
    }
    for (const std::string& add : opts_.env)
        if (add.find('=') != std::string::npos) env_store.push_back(add);
    std::vector<char*> envp;
    for (std::string& e : env_store) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string in_path = opts_.stdin_file.empty() ? "/dev/null" : opts_.stdin_file;

    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
    int up_pipe[2] = {-1, -1}, down_pipe[2] = {-1, -1};  // ChildSetup's handshake: child -> parent, back
    auto fail_pipes = [&](const std::string& what) {
        int err = errno;
        for (int* p : {out_pipe, err_pipe, exec_pipe, up_pipe, down_pipe}) {
            close_fd(p[0]);
            close_fd(p[1]);
        }
        throw RuntimeFailure("cannot start " + name + ": " + what + ": " + std::strerror(err));
    };
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) fail_pipes("pipe");
    if (!opts_.merge_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0) fail_pipes("pipe");
    if (::pipe2(exec_pipe, O_CLOEXEC) != 0) fail_pipes("pipe");
    if (opts_.setup && (::pipe2(up_pipe, O_CLOEXEC) != 0 || ::pipe2(down_pipe, O_CLOEXEC) != 0)) fail_pipes("pipe");

    start_ = now_s();
    pid_t pid = ::fork();
    if (pid < 0) fail_pipes("fork");
    if (pid == 0) {
        // The child: own process group, default signals, no blocked signal, then exec.
        ::setpgid(0, 0);
        struct sigaction sa;
        std::memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &sa, nullptr);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ChildFailure f{0, nullptr};
        int in = ::open(in_path.c_str(), O_RDONLY);
        if (in < 0 || ::dup2(in, 0) < 0) f = {errno, "stdin"};
        if (!f.err && ::dup2(out_pipe[1], 1) < 0) f = {errno, "stdout"};
        if (!f.err && ::dup2(opts_.merge_stderr ? out_pipe[1] : err_pipe[1], 2) < 0) f = {errno, "stderr"};
        if (!f.err && opts_.setup) f.err = opts_.setup->in_child(up_pipe[1], down_pipe[0], &f.step);
        if (!f.err && !opts_.cwd.empty() && ::chdir(opts_.cwd.c_str()) != 0) f = {errno, "working directory"};
        if (!f.err) {
            ::execve(exe.c_str(), args.data(), envp.data());
            f = {errno, nullptr};
        }
        ssize_t ignored = ::write(exec_pipe[1], &f, sizeof(f));
        (void)ignored;
        ::_exit(127);
    }
    pid_ = pid;
    ::setpgid(pid, pid);  // also from here, so the group exists before any kill(-pid)
    close_fd(out_pipe[1]);
    close_fd(err_pipe[1]);
    close_fd(exec_pipe[1]);
    close_fd(up_pipe[1]);
    close_fd(down_pipe[0]);
    std::string setup_error;
    if (opts_.setup) {  // the handshake: the child asks once (or exits first, then EOF)
        char byte = 0;
        ssize_t got;
        do {
            got = ::read(up_pipe[0], &byte, 1);
        } while (got < 0 && errno == EINTR);
        if (got == 1) {
            try {
                opts_.setup->in_parent(pid);
                byte = 1;
                ssize_t ignored = ::write(down_pipe[1], &byte, 1);
                (void)ignored;
            } catch (const std::exception& e) {
                setup_error = e.what();
                ::kill(pid, SIGKILL);
            }
        }
        close_fd(up_pipe[0]);
        close_fd(down_pipe[1]);
    }
    ChildFailure failure{0, nullptr};
    ssize_t n;
    do {
        n = ::read(exec_pipe[0], &failure, sizeof(failure));
    } while (n < 0 && errno == EINTR);
    close_fd(exec_pipe[0]);
    if (n > 0 || !setup_error.empty()) {  // exec (or the set-up before it) failed: the child is gone
        int st = 0;
        ::waitpid(pid, &st, 0);
        close_fd(out_pipe[0]);
        close_fd(err_pipe[0]);
        pid_ = -1;
        if (!setup_error.empty()) throw ProcessStartError("cannot start " + name + ": " + setup_error, "set-up", EPERM);
        // The step names static text or text of the options: the child's copy of the parent's memory.
        const std::string step = failure.step ? failure.step : "";
        std::string why = (step.empty() ? std::string() : step + ": ") + std::strerror(failure.err);
        if (!opts_.setup && !opts_.cwd.empty() && ::access(opts_.cwd.c_str(), F_OK) != 0)
            why += " (working directory " + opts_.cwd + ")";
        throw ProcessStartError("cannot start " + name + ": " + why, step, failure.err);
    }
    out_fd_ = out_pipe[0];
    err_fd_ = err_pipe[0];
    for (int fd : {out_fd_, err_fd_})
        if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    deadline_ = opts_.timeout_s > 0 ? start_ + opts_.timeout_s : 0;
}

Process::~Process() {
    if (pid_ > 0 && !leader_done_) {
        ::kill(-pid_, SIGKILL);
        int st = 0;
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
    }
    close_pipes();
}

std::vector<int> Process::open_fds() const {
    std::vector<int> fds;
    if (out_fd_ >= 0) fds.push_back(out_fd_);
    if (err_fd_ >= 0) fds.push_back(err_fd_);
    return fds;
}

void Process::close_pipes() {
    close_fd(out_fd_);
    close_fd(err_fd_);
}

void Process::read_available() {
    char buf[65536];
    struct Stream {
        int* fd;
        std::string* s;
        bool* truncated;
    };
    for (Stream st : {Stream{&out_fd_, &result_.out, &result_.out_truncated},
                      Stream{&err_fd_, &result_.err, &result_.err_truncated}}) {
        // A bounded amount per call, so that an endless writer cannot hold the caller here.
        for (size_t total = 0; *st.fd >= 0 && total < (size_t{8} << 20);) {
            ssize_t n = ::read(*st.fd, buf, sizeof(buf));
            if (n > 0) {
                append_capped(*st.s, *st.truncated, buf, static_cast<size_t>(n), opts_.output_cap, opts_.keep_tail);
                total += static_cast<size_t>(n);
            } else if (n == 0) {
                close_fd(*st.fd);
            } else if (errno == EINTR) {
                continue;
            } else {
                if (errno != EAGAIN && errno != EWOULDBLOCK) close_fd(*st.fd);
                break;
            }
        }
    }
}

void Process::reap(int st, const struct rusage& ru) {
    leader_done_ = true;
    const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    result_.cpu_s = std::max(result_.cpu_s, cpu);
    reaped_at_ = now_s();
    result_.seconds = reaped_at_ - start_;
    if (WIFEXITED(st)) {
        result_.exit_code = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
        result_.signal = WTERMSIG(st);
    }
}

bool Process::poll() {
    if (finished_) return true;
    read_available();
    if (!leader_done_) {
        // Peek without reaping: while the leader is a zombie its group id cannot be reused, so
        // killing the group (leftover children) hits only what it started.
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == pid_) {
            ::kill(-pid_, SIGKILL);
            int st = 0;
            struct rusage ru {};
            while (::wait4(pid_, &st, 0, &ru) < 0 && errno == EINTR) {
            }
            reap(st, ru);
            read_available();
        } else if (deadline_ > 0 && !result_.timed_out && !result_.killed && now_s() > deadline_) {
            kill_group();
            result_.timed_out = true;
        }
    }
    if (leader_done_ && (open_fds().empty() || now_s() > reaped_at_ + kDrainGrace_s)) {
        close_pipes();
        if (opts_.keep_tail) {
            trim_tail(result_.out, result_.out_truncated, opts_.output_cap);
            trim_tail(result_.err, result_.err_truncated, opts_.output_cap);
        }
        finished_ = true;
    }
    return finished_;
}

const ProcessResult& Process::wait() {
    while (!poll()) process_wait_any({this}, 0.01);
    return result_;
}

void Process::kill_group() {
    // The tree is read once, before the first SIGKILL, while it is whole. Once the group is
    // killed it is torn down process by process: a process that is gone takes its reaped
    // children's time with it, and a leader that is a zombie lists no children. A later kill (a
    // stop request polled again, a caller's loop) while the group is still dying would read
    // only what is left of it, so it sends the signal again and reads nothing.
    if (!kill_sent_) {
        result_.cpu_s = std::max(result_.cpu_s, tree_cpu_seconds(pid_));
        kill_sent_ = true;
    }
    ::kill(-pid_, SIGKILL);
}

void Process::kill() {
    if (pid_ > 0 && !leader_done_) {
        kill_group();
        if (!result_.timed_out) result_.killed = true;
    }
}

ProcessResult process_run(ProcessOptions opts) {
    Process p(std::move(opts));
    return p.wait();
}

void process_wait_any(const std::vector<Process*>& procs, double max_wait_s) {
    std::vector<pollfd> fds;
    for (const Process* p : procs)
        if (p)
            for (int fd : p->open_fds()) fds.push_back(pollfd{fd, POLLIN, 0});
    int ms = static_cast<int>(std::max(0.0, max_wait_s) * 1000.0);
    if (fds.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        return;
    }
    ::poll(fds.data(), fds.size(), ms);
}

}  // namespace cuset
