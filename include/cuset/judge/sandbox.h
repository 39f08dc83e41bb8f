// Containment for programs a model wrote (and for every tool that reads them: nvcc, the emulator's
// build, gen.py, compare.py). Each command runs in new user, mount, PID, network, IPC and UTS
// namespaces: no network but an unconfigured loopback; a filesystem built from nothing in which
// only the listed folders exist (the toolchain and Python read-only, one work folder writable, a
// private /tmp), so the user's home, run folders and other samples are absent; as an
// unprivileged user (root's runs map to nobody); with rlimits on CPU time, memory, file size,
// processes and open files. The command's process is a child of a supervisor that is PID 1 of
// its namespace: when the command ends, or the stage is killed, every process it started dies
// with it. It does not filter system calls (no seccomp) and does not limit memory across processes
// (no cgroups): the rlimits are per process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuset/core/process.h"

namespace cuset::judge {

// Per-process limits (setrlimit) inside the sandbox; the defaults are eval.sandbox.*'s.
struct SandboxLimits {
    double cpu_s = 600;           // RLIMIT_CPU (seconds of CPU time)
    int64_t memory_mb = 8192;     // RLIMIT_DATA: heap and private writable mappings
    int64_t file_mb = 4096;       // RLIMIT_FSIZE, and the size of the private /tmp
    int64_t processes = 64;       // RLIMIT_NPROC: processes and threads of the sandbox's user
    int64_t open_files = 1024;    // RLIMIT_NOFILE
};

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
        std::shared_ptr<const ChildSetup> setup;
    };
    Prepared wrap(ProcessOptions po, const std::string& work, const std::vector<SandboxMount>& files) const;

    // One line for logs and eval.json: what is in force, e.g. "namespaces (user, mount, pid, net,
    // ipc, uts), rlimits cpu 600 s, memory 8192 MiB, file 4096 MiB, 64 processes, 1024 files".
    std::string describe() const;
    const SandboxOptions& options() const { return opts_; }

    // Why containment cannot be set up on this machine ("" = it can): the probe's error.
    static std::string unavailable_reason();

private:
    struct Impl;
    SandboxOptions opts_;
    std::unique_ptr<Impl> impl_;
};

// The user and group the sandbox runs as on the host: the caller's own, or nobody (65534) when
// the caller is root (root inside a user namespace would still own root's files).
uid_t sandbox_host_uid();
gid_t sandbox_host_gid();

}  // namespace cuset::judge
