// Running a command in its own process group, with a wall-clock timeout and captured output: the
// sandbox behind `data check --compile/--run` (nvcc and the programs it builds), usable for any
// compile-and-run evaluation. The command never inherits a terminal: stdin is /dev/null (or a
// file), stdout and stderr go into pipes that are read while it runs. On timeout, on kill() and
// when the command exits, its whole process group is killed (SIGKILL), so helpers a compiler
// driver or a test program left behind (grandchildren) do not outlive it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cuset/core/error.h"

namespace cuset {

// A seam for containment (judge/sandbox.h): steps run between fork and exec. Everything they
// use is prepared by the parent before the fork; in the child they make system calls only.
struct ChildSetup {
    virtual ~ChildSetup() = default;
    // In the child, after its own process group, default signals and the standard streams, before
    // chdir(cwd) and exec. `sync_write`/`sync_read` are a pipe pair to the parent for in_parent().
    // Returns 0, or an errno with `*step` naming what failed; a process that is not to exec (a
    // supervisor it forked) never returns.
    virtual int in_child(int sync_write, int sync_read, const char** step) const = 0;
    // In the parent, once the child wrote one byte to its sync pipe (e.g. the child has made new
    // namespaces and the parent maps its ids); the parent then writes one byte back. Throws on failure.
    virtual void in_parent(pid_t child) const = 0;
};

struct ProcessOptions {
    std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
    std::string cwd;                // working directory; empty = this process's
    // Changes to the inherited environment: "NAME=VALUE" sets NAME, a bare "NAME" removes it.
    std::vector<std::string> env;
    bool clear_env = false;         // start from an empty environment (then apply `env`)
    const ChildSetup* setup = nullptr;  // not owned; must outlive the constructor call
    std::string stdin_file;         // empty = /dev/null
    double timeout_s = 0;           // wall clock; <= 0 = no limit
    // Bytes kept per stream (stdout, stderr); the rest is read and dropped (the *_truncated
    // flags say so). keep_tail keeps the last output_cap bytes instead of the first.
    size_t output_cap = size_t{1} << 20;
    bool keep_tail = false;
    bool merge_stderr = false;      // stderr into the stdout pipe (one interleaved stream: out)
};

struct ProcessResult {
    bool timed_out = false;   // killed after timeout_s
    bool killed = false;      // killed by kill() (or the destructor) before it ended
    int exit_code = -1;       // when it exited normally, else -1
    int signal = 0;           // the signal that ended it (SIGKILL after a timeout), else 0
    double seconds = 0;       // wall clock from start to reaping
    // CPU seconds (user + system) of the command and the processes below it that were reaped,
    // from the kernel's accounting when it was reaped; when it was killed (timeout, kill()), the
    // larger of that and what /proc showed for its whole process tree just before the kill.
    double cpu_s = 0;
    std::string out, err;     // captured stdout, stderr (err empty with merge_stderr)
    bool out_truncated = false, err_truncated = false;

    // Exited by itself with status 0.
    bool ok() const { return !timed_out && !killed && signal == 0 && exit_code == 0; }
    // 128 + signal when ended by a signal, else exit_code (the shell's convention).
    int status_code() const { return signal ? 128 + signal : exit_code; }
};

// A command that could not be started: `step` names the set-up step that failed ("" = the exec
// itself: the program is missing, not executable or not a valid executable).
class ProcessStartError : public RuntimeFailure {
public:
    ProcessStartError(const std::string& what, std::string step, int err)
        : RuntimeFailure(what), step_(std::move(step)), err_(err) {}
    const std::string& step() const { return step_; }
    int err() const { return err_; }

private:
    std::string step_;
    int err_;
};

// One command in flight. Starting it throws RuntimeFailure("cannot start <argv[0]>: <reason>")
// when it cannot be executed (missing, not executable, bad cwd). Not copyable; the destructor
// kills the group and reaps the command if it still runs.
class Process {
public:
    explicit Process(ProcessOptions opts);
    ~Process();
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    // Non-blocking: reads what output is available, enforces the timeout, reaps the command when
    // it ended. True once it has finished (then result() is final).
    bool poll();
    // Blocks until it finishes and returns the result.
    const ProcessResult& wait();
    // Kills the process group now (result().killed); wait() or poll() then reap it.
    void kill();

    bool finished() const { return finished_; }
    const ProcessResult& result() const { return result_; }
    pid_t pid() const { return pid_; }
    const ProcessOptions& options() const { return opts_; }

    // The pipe descriptors still open, for waiting on several processes (process_wait_any).
    std::vector<int> open_fds() const;

private:
    void read_available();
    void close_pipes();
    void reap(int wait_status, const struct rusage& usage);
    // SIGKILL to the group, its tree's CPU time read before the first one (result().cpu_s).
    void kill_group();

    ProcessOptions opts_;
    ProcessResult result_;
    pid_t pid_ = -1;
    int out_fd_ = -1, err_fd_ = -1;
    double start_ = 0, deadline_ = 0, reaped_at_ = 0;
    bool leader_done_ = false, finished_ = false;
    bool kill_sent_ = false;  // the group was sent SIGKILL (its tree's CPU time is read)
};

// Runs a command to completion (Process + wait()).
ProcessResult process_run(ProcessOptions opts);

// Waits up to max_wait_s, less when one of `procs` has output or closes its pipes (an exit
// alone need not wake it: call it in a loop with short waits); then call poll() on each.
void process_wait_any(const std::vector<Process*>& procs, double max_wait_s);

// The executable `name` resolves to: itself when it holds a '/', else the first executable
// regular file of that name on PATH; "" when none.
std::string process_find_program(const std::string& name);

}  // namespace cuset
