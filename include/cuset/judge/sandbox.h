// Containment for programs a model wrote (and for every tool that reads them: nvcc, the emulator's
// build, gen.py, compare.py). Each command runs in new user, mount, PID, network, IPC and UTS
// namespaces: no network but an unconfigured loopback; a filesystem built from nothing in which
// only the listed folders exist (the toolchain and Python read-only, one work folder writable, a
// private /tmp), so the user's home, run folders and other samples are absent; as an
// unprivileged user (root's runs map to nobody); with a fresh, empty session keyring; behind a
// seccomp filter that denies the system calls a CUDA program, a compiler and a Python checker never
// need (kSandboxDeniedCalls); with rlimits on CPU time, memory, file size, processes and open
// files, and, where the machine lets this process make control groups (judge/cgroup.h), a group
// per command bounding the memory of all its processes (shared mappings and memfds included) and
// their number. The command's process is a child of a supervisor that is PID 1 of its namespace:
// when the command ends, or the stage is killed, every process it started dies with it; and every
// level (the outer child, the supervisor) dies when the level above it dies, so nothing outlives
// the judge, however the judge ends (SIGKILL included).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuset/core/process.h"
#include "cuset/judge/cgroup.h"

namespace cuset::judge {

// Per-process limits (setrlimit) inside the sandbox; the defaults are eval.sandbox.*'s.
struct SandboxLimits {
    double cpu_s = 600;           // RLIMIT_CPU (seconds of CPU time)
    int64_t memory_mb = 8192;     // RLIMIT_DATA per process; and, in a control group, all memory of
                                  // all its processes (shared mappings, memfds, tmpfs pages)
    int64_t file_mb = 4096;       // RLIMIT_FSIZE: the largest file
    int64_t processes = 64;       // RLIMIT_NPROC, and pids.max in a control group
    int64_t open_files = 1024;    // RLIMIT_NOFILE
    int64_t disk_mb = 4096;       // the size of the private /tmp and of /dev/shm (tmpfs); the runner
                                  // bounds a sample's work folder to it too (judge/runner.h)
};

// The system calls denied (EPERM) to every contained command, by name, in the spirit of the
// default profiles of container runtimes: the kernel's keyrings, BPF, perf events, userfaultfd,
// io_uring, kexec and kernel modules, the mount family and namespaces (after the sandbox is built),
// ptrace and cross-process memory access, accounting, swap, reboot, clock setting, the kernel log,
// handle-based opens. clone() with a namespace flag is denied too, and clone3() answers ENOSYS (so
// that the C library falls back to clone(), whose flags the filter can read). Calls of another
// architecture (32-bit x86) kill the process. To deny more, add a name here: the filter is built
// from this list when a Sandbox is made (a name this machine's libseccomp does not know is skipped).
extern const char* const kSandboxDeniedCalls[];

// One folder or file of the host, seen at `inside` (absolute) in the sandbox.
struct SandboxMount {
    std::string host, inside;
    bool writable = false;
};

// What the sandbox sees besides the system folders: resolved once per judge.
struct SandboxOptions {
    SandboxLimits limits;
    std::vector<std::string> read_only;  // host folders bound read-only at the same path (toolchains)
    bool gpu = false;                    // the NVIDIA device files, /sys and the driver's libraries
    bool cgroups = true;                 // a control group per command where the machine allows it
};

// A prepared command's set-up (a ChildSetup for core/process) and, once the command ended, what its
// control group measured (CgroupUsage's unknowns when no group holds).
class SandboxSetup : public ChildSetup {
public:
    virtual CgroupUsage usage() const = 0;
};

// One stage's view: the work folder (bound writable at kSandboxWork) and single files bound
// read-only inside it (a task's inputs, the reference outputs).
inline constexpr const char* kSandboxWork = "/box";

class Sandbox {
public:
    // Resolves the system folders, the ids to map and the device files. Throws UsageError with the
    // fix when namespaces cannot be made here (probe() runs `true` inside once).
    explicit Sandbox(SandboxOptions opts);
    ~Sandbox();
    Sandbox(const Sandbox&) = delete;
    Sandbox& operator=(const Sandbox&) = delete;

    // Runs `po` contained: po.cwd is a path inside (default kSandboxWork); `work` is the host
    // folder bound writable at kSandboxWork (made writable for the sandbox's user); `files`
    // are bound read-only. The environment is cleared to PATH, HOME, TMPDIR, LANG and the
    // options' `env` entries. Returns options whose ChildSetup refers to `holder`, which must
    // live until the process has started.
    struct Prepared {
        ProcessOptions options;
        std::shared_ptr<const SandboxSetup> setup;
    };
    Prepared wrap(ProcessOptions po, const std::string& work, const std::vector<SandboxMount>& files) const;

    // One line for logs and eval.json: what is in force, e.g. "namespaces (user, mount, pid, net,
    // ipc, uts); seccomp (52 calls denied); fresh session keyring; cgroup v1 (memory, pids,
    // cpuacct): memory 8192 MiB and 64 processes per command; rlimits: cpu 600 s, ...". Without a
    // control group it says why and that memory is bounded per process only.
    std::string describe() const;
    // The control groups in use (nullptr = none: `cgroup_note()` says why).
    const CgroupSupport* cgroups() const { return cgroups_.get(); }
    const std::string& cgroup_note() const { return cgroup_note_; }
    const SandboxOptions& options() const { return opts_; }

    // Why containment cannot be set up on this machine ("" = it can): the probe's error.
    static std::string unavailable_reason();

private:
    struct Impl;
    SandboxOptions opts_;
    std::unique_ptr<Impl> impl_;
    std::shared_ptr<const CgroupSupport> cgroups_;
    std::string cgroup_note_;
};

// The user and group the sandbox runs as on the host: the caller's own, or nobody (65534) when
// the caller is root (root inside a user namespace would still own root's files).
uid_t sandbox_host_uid();
gid_t sandbox_host_gid();

}  // namespace cuset::judge
