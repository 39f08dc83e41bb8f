// Per-command control groups, cgroup v2 or v1 (judge/cgroup.h).
#include "cuset/judge/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset::judge {

struct CgroupSupport::Paths {
    int version = 0;
    std::string v2;                     // v2: the folder the groups are made in
    std::string memory, pids, cpuacct;  // v1: the folders of each hierarchy ("" = absent)
};

namespace {

std::atomic<uint64_t> g_groups{0};

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool write_text(const std::string& path, const std::string& text, int* err = nullptr) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (err) *err = ok ? 0 : errno;
    if (fd >= 0) ::close(fd);
    return ok;
}

bool exists(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
}

std::vector<std::string> words(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep))
        if (!cur.empty()) out.push_back(cur);
    return out;
}

bool has_word(const std::string& s, const std::string& w, char sep = ' ') {
    for (const std::string& x : words(s, sep))
        if (x == w || x == w + "\n") return true;
    return false;
}

// The value after `key ` in a "key value" file (cpu.stat, memory.events); -1 when absent.
int64_t keyed_value(const std::string& text, const std::string& key) {
    std::istringstream in(text);
    std::string k;
    int64_t v = 0;
    while (in >> k >> v)
        if (k == key) return v;
    return -1;
}

int64_t number_in(const std::string& path) {
    const std::string t = read_text(path);
    if (t.empty()) return -1;
    try {
        return std::stoll(t);
    } catch (...) {
        return -1;
    }
}

// The host folder of this process's group in the hierarchy mounted at `mount` (mount root
// `root`), for the group path `path` of /proc/self/cgroup.
std::string folder_of(const std::string& mount, const std::string& root, const std::string& path) {
    std::string rel = path;
    if (root != "/" && rel.compare(0, root.size(), root) == 0) rel = rel.substr(root.size());
    if (rel == "/") rel.clear();
    return mount + rel;
}

// Removes groups left by judges that no longer run (a judge killed with SIGKILL cannot remove
// its own): empty folders named cuset-judge-<pid>-* whose pid is gone.
void remove_stale(const std::string& parent) {
    DIR* d = ::opendir(parent.c_str());
    if (!d) return;
    std::vector<std::string> stale;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("cuset-judge-", 0) != 0) continue;
        const std::string pid = name.substr(12, name.find('-', 12) - 12);
        if (!pid.empty() && !exists("/proc/" + pid)) stale.push_back(parent + "/" + name);
    }
    ::closedir(d);
    for (const std::string& s : stale) ::rmdir(s.c_str());
}

std::string group_name() {
    return "cuset-judge-" + std::to_string(::getpid()) + "-" + std::to_string(g_groups.fetch_add(1));
}

// Makes and removes a group under `parent` that must hold `file`: the controllers work there.
bool probe(const std::string& parent, const std::vector<std::string>& files) {
    const std::string dir = parent + "/" + group_name();
    if (::mkdir(dir.c_str(), 0755) != 0) return false;
    bool ok = true;
    for (const std::string& f : files) ok = ok && exists(dir + "/" + f);
    ::rmdir(dir.c_str());
    return ok;
}

}  // namespace

std::shared_ptr<const CgroupSupport> CgroupSupport::detect(std::string* why) {
    struct Mount {
        std::string point, root;
    };
    Mount v2;
    std::vector<std::pair<Mount, std::string>> v1;  // (mount, super options)
    {
        std::ifstream in("/proc/self/mountinfo");
        std::string line;
        while (std::getline(in, line)) {
            const size_t dash = line.find(" - ");
            if (dash == std::string::npos) continue;
            const std::vector<std::string> pre = words(line.substr(0, dash), ' ');
            const std::vector<std::string> post = words(line.substr(dash + 3), ' ');
            if (pre.size() < 5 || post.size() < 3) continue;
            if (post[0] == "cgroup2") v2 = {pre[4], pre[3]};
            else if (post[0] == "cgroup") v1.push_back({{pre[4], pre[3]}, post[2]});
        }
    }
    std::string v2_path;
    std::vector<std::pair<std::string, std::string>> v1_paths;  // (controllers, path)
    {
        std::ifstream in("/proc/self/cgroup");
        std::string line;
        while (std::getline(in, line)) {
            const size_t a = line.find(':'), b = line.find(':', a + 1);
            if (a == std::string::npos || b == std::string::npos) continue;
            const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
            if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
            else v1_paths.push_back({controllers, path});
        }
    }
    auto paths = std::make_shared<Paths>();
    std::string tried;
    // cgroup v2: the memory and pids controllers enabled for the groups made under ours.
    if (!v2.point.empty() && !v2_path.empty()) {
        const std::string dir = folder_of(v2.point, v2.root, v2_path);
        const std::string have = read_text(dir + "/cgroup.controllers");
        if (has_word(have, "memory") && has_word(have, "pids")) {
            const std::string sub = read_text(dir + "/cgroup.subtree_control");
            if (!(has_word(sub, "memory") && has_word(sub, "pids"))) write_text(dir + "/cgroup.subtree_control", "+memory +pids");
            remove_stale(dir);
            if (probe(dir, {"memory.max", "pids.max", "cgroup.procs"})) {
                paths->version = 2;
                paths->v2 = dir;
                return std::make_shared<CgroupSupport>(paths);
            }
            tried = "cgroup v2 at " + dir + " does not let this process make groups with memory and pids limits";
        } else {
            tried = "cgroup v2 at " + dir + " has no memory and pids controllers delegated";
        }
    }
    // cgroup v1: a writable memory hierarchy (pids and cpuacct where present).
    for (const auto& [m, opts] : v1) {
        for (const auto& [controllers, path] : v1_paths) {
            for (const char* c : {"memory", "pids", "cpuacct"}) {
                if (!has_word(opts, c, ',') || !has_word(controllers, c, ',')) continue;
                const std::string dir = folder_of(m.point, m.root, path);
                std::string& slot = std::string(c) == "memory" ? paths->memory
                                    : std::string(c) == "pids" ? paths->pids
                                                               : paths->cpuacct;
                if (slot.empty()) slot = dir;
            }
        }
    }
    if (!paths->memory.empty()) {
        remove_stale(paths->memory);
        if (probe(paths->memory, {"memory.limit_in_bytes", "cgroup.procs"})) {
            paths->version = 1;
            if (!paths->pids.empty()) {
                remove_stale(paths->pids);
                if (!probe(paths->pids, {"pids.max"})) paths->pids.clear();
            }
            if (!paths->cpuacct.empty()) {
                remove_stale(paths->cpuacct);
                if (!probe(paths->cpuacct, {"cpuacct.usage"})) paths->cpuacct.clear();
            }
            return std::make_shared<CgroupSupport>(paths);
        }
        tried += (tried.empty() ? "" : "; ") + std::string("cgroup v1's memory hierarchy at ") + paths->memory +
                 " is not writable by this process";
    }
    if (why) *why = tried.empty() ? "no cgroup hierarchy with a memory controller is mounted" : tried;
    return nullptr;
}

std::string CgroupSupport::describe() const {
    if (paths_->version == 2) return "cgroup v2";
    std::string c = "memory";
    if (!paths_->pids.empty()) c += ", pids";
    if (!paths_->cpuacct.empty()) c += ", cpuacct";
    return "cgroup v1 (" + c + ")";
}

struct CommandCgroup::Impl {
    int version = 0;
    std::vector<std::string> dirs;          // every folder made (v1: one per hierarchy)
    std::string memory, pids, cpu;          // the folders holding each controller's files
};

CommandCgroup::CommandCgroup(const CgroupSupport& support, const CgroupLimits& limits) : impl_(std::make_unique<Impl>()) {
    const CgroupSupport::Paths& p = support.paths();
    Impl& m = *impl_;
    m.version = p.version;
    const std::string name = group_name();
    auto make = [&](const std::string& parent) {
        const std::string dir = parent + "/" + name;
        if (::mkdir(dir.c_str(), 0755) != 0)
            throw RuntimeFailure("sandbox: cannot make the control group " + dir + ": " + std::strerror(errno));
        m.dirs.push_back(dir);
        return dir;
    };
    auto set = [&](const std::string& file, int64_t v, bool required) {
        int err = 0;
        if (!write_text(file, std::to_string(v), &err) && required)
            throw RuntimeFailure("sandbox: cannot write " + file + ": " + std::strerror(err));
    };
    try {
        if (p.version == 2) {
            m.memory = m.pids = m.cpu = make(p.v2);
            if (limits.memory_bytes > 0) {
                set(m.memory + "/memory.max", limits.memory_bytes, true);
                set(m.memory + "/memory.swap.max", 0, false);  // absent without swap accounting
            }
            if (limits.pids > 0) set(m.pids + "/pids.max", limits.pids, true);
        } else {
            m.memory = make(p.memory);
            if (limits.memory_bytes > 0) {
                set(m.memory + "/memory.limit_in_bytes", limits.memory_bytes, true);
                set(m.memory + "/memory.memsw.limit_in_bytes", limits.memory_bytes, false);  // absent without swap accounting
            }
            if (!p.pids.empty()) {
                m.pids = make(p.pids);
                if (limits.pids > 0) set(m.pids + "/pids.max", limits.pids, true);
            }
            if (!p.cpuacct.empty()) m.cpu = make(p.cpuacct);
        }
    } catch (...) {
        for (auto it = m.dirs.rbegin(); it != m.dirs.rend(); ++it) ::rmdir(it->c_str());
        throw;
    }
}

CommandCgroup::~CommandCgroup() {
    // The processes die with the sandbox's PID namespace; a group is removable once the kernel has
    // reaped them, which may take a moment after the kill.
    for (const std::string& dir : impl_->dirs) {
        bool removed = false;
        for (int i = 0; i < 200 && !removed; ++i) {
            removed = ::rmdir(dir.c_str()) == 0 || errno == ENOENT;
            if (!removed && errno == EBUSY) {
                kill_all();
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            } else if (!removed) {
                break;
            }
        }
        if (!removed) log_warn("sandbox: cannot remove the control group %s: %s", dir.c_str(), std::strerror(errno));
    }
}

void CommandCgroup::attach(pid_t pid) const {
    for (const std::string& dir : impl_->dirs) {
        int err = 0;
        if (!write_text(dir + "/cgroup.procs", std::to_string(pid), &err))
            throw RuntimeFailure("sandbox: cannot move a command into " + dir + ": " + std::strerror(err));
    }
}

CgroupUsage CommandCgroup::usage() const {
    const Impl& m = *impl_;
    CgroupUsage u;
    if (m.version == 2) {
        const int64_t usec = keyed_value(read_text(m.cpu + "/cpu.stat"), "usage_usec");
        if (usec >= 0) u.cpu_s = static_cast<double>(usec) * 1e-6;
        u.memory_peak = number_in(m.memory + "/memory.peak");
        u.oom_killed = keyed_value(read_text(m.memory + "/memory.events"), "oom_kill") > 0;
    } else {
        if (!m.cpu.empty()) {
            const int64_t ns = number_in(m.cpu + "/cpuacct.usage");
            if (ns >= 0) u.cpu_s = static_cast<double>(ns) * 1e-9;
        }
        u.memory_peak = number_in(m.memory + "/memory.max_usage_in_bytes");
        const int64_t kills = keyed_value(read_text(m.memory + "/memory.oom_control"), "oom_kill");
        u.oom_killed = kills >= 0 ? kills > 0 : number_in(m.memory + "/memory.failcnt") > 0;
    }
    if (!m.pids.empty()) u.pids_refused = keyed_value(read_text(m.pids + "/pids.events"), "max") > 0;
    return u;
}

void CommandCgroup::kill_all() const {
    const Impl& m = *impl_;
    if (m.version == 2 && write_text(m.memory + "/cgroup.kill", "1")) return;
    for (const std::string& dir : m.dirs) {
        std::istringstream in(read_text(dir + "/cgroup.procs"));
        pid_t pid = 0;
        while (in >> pid)
            if (pid > 0) ::kill(pid, SIGKILL);
    }
}

}  // namespace cuset::judge
