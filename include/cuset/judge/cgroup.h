// Control groups for the sandbox's commands (judge/sandbox.h): one group per contained command,
// holding every process it starts, so that memory (shared mappings, memfds and tmpfs pages
// included), the number of processes and the CPU time are bounded and measured across all of
// them, and whatever the command left is killed with the group. cgroup v2 where this process's
// group delegates the memory and pids controllers; else cgroup v1's memory, pids and cpuacct
// hierarchies where they are writable (a root judge on most machines); else none, and the
// sandbox's per-process rlimits are all that holds. Not here: the rlimits, the namespaces.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace cuset::judge {

struct CgroupLimits {
    int64_t memory_bytes = 0;  // memory.max (v2) / memory.limit_in_bytes (v1); 0 = no limit
    int64_t pids = 0;          // pids.max; 0 = no limit
};

// What a command's group measured, read after the command ended.
struct CgroupUsage {
    double cpu_s = -1;        // CPU time of every process the command started; -1 = unknown
    int64_t memory_peak = -1; // bytes; -1 = unknown
    bool oom_killed = false;  // the kernel killed a process for the memory limit
    bool pids_refused = false;  // a fork was refused for the process limit
};

// Where this process may make groups: found once (a probe group is made and removed).
class CgroupSupport {
public:
    // The support on this machine, or nullptr with `*why` saying why none holds.
    static std::shared_ptr<const CgroupSupport> detect(std::string* why);
    // "cgroup v2" or "cgroup v1 (memory, pids, cpuacct)".
    std::string describe() const;

    struct Paths;
    explicit CgroupSupport(std::shared_ptr<const Paths> p) : paths_(std::move(p)) {}
    const Paths& paths() const { return *paths_; }

private:
    std::shared_ptr<const Paths> paths_;
};

// One command's group: made with its limits, the command's first process attached before it
// starts anything, read after it ended; the destructor kills what is left in it and removes it.
class CommandCgroup {
public:
    // Throws RuntimeFailure naming the file when the group cannot be made.
    CommandCgroup(const CgroupSupport& support, const CgroupLimits& limits);
    ~CommandCgroup();
    CommandCgroup(const CommandCgroup&) = delete;
    CommandCgroup& operator=(const CommandCgroup&) = delete;

    void attach(pid_t pid) const;  // throws RuntimeFailure
    CgroupUsage usage() const;
    void kill_all() const;         // SIGKILL to every process still in it

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cuset::judge
