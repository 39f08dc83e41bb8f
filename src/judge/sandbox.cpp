// Containment of untrusted commands with the kernel's namespaces and rlimits (judge/sandbox.h).
// The parent prepares every path and option as text; the forked child only makes system calls:
//   child (outside the new PID namespace): dies with the judge (parent-death signal), unshare(user,
//     mount, pid, net, ipc, uts), the parent puts it in its control group and maps its ids, fork
//     -> waits for the supervisor, exits with the command's wait status;
//   supervisor (PID 1 inside): dies with the child, builds the root (a tmpfs holding bind mounts),
//     pivots into it, forks the command, reaps until the command ends, then exits: the kernel
//     kills the rest;
//   command: rlimits, no new privileges, the sandbox's ids, a fresh session keyring, the seccomp
//     filter, then exec (Process does it).
#include "cuset/judge/sandbox.h"

#include <fcntl.h>
#include <glob.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace fs = std::filesystem;

namespace cuset::judge {

namespace {

constexpr const char* kNewRoot = "/newroot";  // the root being built, seen from the staging tmpfs
constexpr const char* kOldRoot = "/oldroot";  // the host's root, seen from there

// One step of building the root. Paths are final (prefixed with kNewRoot / kOldRoot).
struct Op {
    enum Kind { kDir, kFile, kBind, kTmpfs, kProc, kSymlink } kind;
    std::string dst;
    std::string src;   // kBind: host path under kOldRoot; kSymlink: the link's text; kTmpfs: options
    bool read_only = true;
    bool devices = false;  // kBind of device files: keep them usable
    bool optional = false; // a failure is ignored (e.g. /proc where a masked host /proc forbids it)
    const char* what = "";  // names the step in an error
};

void close_all_from(unsigned first) {
    if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
    for (int fd = static_cast<int>(first); fd < 4096; ++fd) ::close(fd);
}

bool write_all(int fd, const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

// The flags a read-only remount of a bind mount must keep: a user namespace may add flags to a
// mount it did not make, never clear those of the original (nosuid, nodev, noexec, atime).
unsigned long kept_mount_flags(const char* path) {
    struct statfs sf {};
    if (::statfs(path, &sf) != 0) return 0;
    unsigned long f = 0;
    if (sf.f_flags & ST_NOSUID) f |= MS_NOSUID;
    if (sf.f_flags & ST_NODEV) f |= MS_NODEV;
    if (sf.f_flags & ST_NOEXEC) f |= MS_NOEXEC;
    if (sf.f_flags & ST_NOATIME) f |= MS_NOATIME;
    if (sf.f_flags & ST_NODIRATIME) f |= MS_NODIRATIME;
    if (sf.f_flags & ST_RELATIME) f |= MS_RELATIME;
    return f;
}

// The prepared set-up of one sandboxed command (a ChildSetup for core/process).
class Setup final : public SandboxSetup {
public:
    std::vector<Op> ops;
    SandboxLimits limits;
    uid_t inner_uid = 0, host_uid = 0;
    gid_t inner_gid = 0, host_gid = 0;
    bool caller_is_root = false;
    pid_t judge_pid = 0;
    std::shared_ptr<const std::vector<sock_filter>> seccomp;  // the filter's program
    std::shared_ptr<const CgroupSupport> cgroups;              // null = no control group
    mutable std::unique_ptr<CommandCgroup> group;              // made in in_parent()

    int in_child(int sync_write, int sync_read, const char** step) const override {
        // Dies with the judge: a judge killed with SIGKILL takes this level with it, and with it
        // the supervisor (whose own parent-death signal is tied to this process) and the namespace.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != judge_pid) {
            *step = "parent-death signal";
            return ::getppid() != judge_pid ? ESRCH : errno;
        }
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0) {
            *step = "unshare(user, mount, pid, net, ipc, uts namespaces)";
            return errno;
        }
        char byte = 1;
        if (!write_all(sync_write, &byte, 1) || ::read(sync_read, &byte, 1) != 1) {
            *step = "mapping the sandbox's user and group ids";
            return EPERM;
        }
        ::close(sync_write);
        ::close(sync_read);
        int status_pipe[2];
        if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
            *step = "pipe";
            return errno;
        }
        pid_t sup = ::fork();
        if (sup < 0) {
            *step = "fork (supervisor)";
            return errno;
        }
        if (sup > 0) {  // outside: wait for the supervisor, end as the command ended
            ::close(status_pipe[1]);
            if (status_pipe[0] != 3) ::dup2(status_pipe[0], 3);  // fds 0-2 are taken: it is >= 3
            close_all_from(4);
            for (int fd = 0; fd < 3; ++fd) ::close(fd);
            int st = 0;
            while (::waitpid(sup, &st, 0) < 0 && errno == EINTR) {
            }
            int cmd_status = 0;
            if (::read(3, &cmd_status, sizeof cmd_status) == static_cast<ssize_t>(sizeof cmd_status)) st = cmd_status;
            end_like(st);
        }
        ::close(status_pipe[0]);
        return supervise(status_pipe[1], step);
    }

    void in_parent(pid_t child) const override {
        if (cgroups) {  // before the child forks anything: every process it starts is in the group
            CgroupLimits cl;
            cl.memory_bytes = limits.memory_mb * (int64_t{1} << 20);
            cl.pids = limits.processes;
            group = std::make_unique<CommandCgroup>(*cgroups, cl);
            group->attach(child);
        }
        const std::string proc = "/proc/" + std::to_string(child);
        auto put = [&](const std::string& file, const std::string& text) {
            std::ofstream out(proc + "/" + file);
            out << text;
            out.flush();
            if (!out)
                throw UsageError("sandbox: cannot write " + proc + "/" + file + " (" + std::strerror(errno) + ")");
        };
        // Root's sandbox maps root too, for the supervisor that builds the root from root's folders;
        // the command switches to the unprivileged id before it runs.
        const std::string root_line = caller_is_root ? "0 0 1\n" : "";
        if (!caller_is_root) put("setgroups", "deny");
        put("uid_map", root_line + std::to_string(inner_uid) + " " + std::to_string(host_uid) + " 1\n");
        put("gid_map", root_line + std::to_string(inner_gid) + " " + std::to_string(host_gid) + " 1\n");
    }

    CgroupUsage usage() const override { return group ? group->usage() : CgroupUsage{}; }

    ~Setup() override {
        if (group) group->kill_all();
    }

private:
    [[noreturn]] static void end_like(int st) {
        if (WIFSIGNALED(st)) {
            const int sig = WTERMSIG(st);
            struct sigaction sa {};
            sa.sa_handler = SIG_DFL;
            ::sigaction(sig, &sa, nullptr);
            struct rlimit no_core {0, 0};
            ::setrlimit(RLIMIT_CORE, &no_core);
            sigset_t only;
            sigemptyset(&only);
            sigaddset(&only, sig);
            ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
            ::kill(::getpid(), sig);
        }
        ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 127);
    }

    // PID 1 of the new namespace: build the root, fork the command, reap until it ends.
    int supervise(int status_fd, const char** step) const {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        // The outer child may have died before the line above: then nobody reads the status pipe.
        struct pollfd pf {status_fd, 0, 0};
        if (::poll(&pf, 1, 0) > 0 && (pf.revents & POLLERR)) ::_exit(127);
        const char* what = nullptr;
        int err = build_root(&what);
        pid_t cmd = ::fork();
        if (cmd < 0) {
            *step = "fork (command)";
            return errno;
        }
        if (cmd == 0) {
            ::close(status_fd);
            if (err) {
                *step = what;
                return err;
            }
            return drop_privileges(step);
        }
        if (status_fd != 3) {
            ::dup2(status_fd, 3);
            ::close(status_fd);
        }
        close_all_from(4);
        for (int fd = 0; fd < 3; ++fd) ::close(fd);
        for (;;) {
            int st = 0;
            pid_t w = ::wait(&st);
            if (w == cmd) {
                write_all(3, &st, sizeof st);
                ::_exit(0);  // PID 1 ends: the kernel kills whatever the command left behind
            }
            if (w < 0 && errno != EINTR) ::_exit(127);
        }
    }

    int build_root(const char** what) const {
        auto fail = [&](const char* w) {
            *what = w;
            return errno ? errno : EINVAL;
        };
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail("making / private");
        if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m") != 0)
            return fail("mounting the staging tmpfs");
        if (::chdir("/tmp") != 0 || ::mkdir("newroot", 0755) != 0 || ::mkdir("oldroot", 0755) != 0)
            return fail("staging folders");
        if (::syscall(SYS_pivot_root, ".", "oldroot") != 0) return fail("pivot_root (staging)");
        if (::chdir("/") != 0) return fail("chdir /");
        if (::mount(kNewRoot, kNewRoot, nullptr, MS_BIND, nullptr) != 0) return fail("binding the new root");
        for (const Op& op : ops) {
            errno = 0;
            if (run_op(op) == 0 || op.optional) continue;
            return fail(op.what);
        }
        if (::chdir(kNewRoot) != 0 || ::mkdir(".old", 0755) != 0) return fail("new root");
        if (::syscall(SYS_pivot_root, ".", ".old") != 0) return fail("pivot_root");
        if (::chdir("/") != 0 || ::umount2("/.old", MNT_DETACH) != 0 || ::rmdir("/.old") != 0)
            return fail("detaching the host's root");
        if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0)
            return fail("making the root read-only");
        ::sethostname("sandbox", 7);
        return 0;
    }

    static int run_op(const Op& op) {
        switch (op.kind) {
            case Op::kDir:
                return (::mkdir(op.dst.c_str(), 0755) == 0 || errno == EEXIST) ? 0 : -1;
            case Op::kFile: {
                int fd = ::open(op.dst.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0) return -1;
                ::close(fd);
                return 0;
            }
            case Op::kBind: {
                if (::mount(op.src.c_str(), op.dst.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return -1;
                if (!op.read_only) return 0;
                unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY | kept_mount_flags(op.dst.c_str());
                if (!op.devices) flags |= MS_NOSUID | MS_NODEV;
                return ::mount(nullptr, op.dst.c_str(), nullptr, flags, nullptr);
            }
            case Op::kTmpfs:
                return ::mount("tmpfs", op.dst.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, op.src.c_str());
            case Op::kProc:
                return ::mount("proc", op.dst.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
            case Op::kSymlink:
                return ::symlink(op.src.c_str(), op.dst.c_str());
        }
        return -1;
    }

    int drop_privileges(const char** step) const {
        auto limit = [](int resource, rlim_t soft, rlim_t hard) {
            struct rlimit r {soft, hard};
            return ::setrlimit(resource, &r);
        };
        const rlim_t mib = rlim_t{1} << 20;
        const rlim_t cpu = static_cast<rlim_t>(std::max(1.0, limits.cpu_s));
        if (limit(RLIMIT_CPU, cpu, cpu + 1) != 0 ||
            limit(RLIMIT_DATA, static_cast<rlim_t>(limits.memory_mb) * mib, static_cast<rlim_t>(limits.memory_mb) * mib) != 0 ||
            limit(RLIMIT_FSIZE, static_cast<rlim_t>(limits.file_mb) * mib, static_cast<rlim_t>(limits.file_mb) * mib) != 0 ||
            limit(RLIMIT_NPROC, static_cast<rlim_t>(limits.processes), static_cast<rlim_t>(limits.processes)) != 0 ||
            limit(RLIMIT_NOFILE, static_cast<rlim_t>(limits.open_files), static_cast<rlim_t>(limits.open_files)) != 0 ||
            limit(RLIMIT_CORE, 0, 0) != 0) {
            *step = "setrlimit";
            return errno;
        }
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
            *step = "no_new_privs";
            return errno;
        }
        // Raw system calls: glibc's wrappers would try to change the ids of threads that exist only
        // in the parent.
        if (::syscall(SYS_setresgid, inner_gid, inner_gid, inner_gid) != 0 ||
            (caller_is_root && ::syscall(SYS_setgroups, 0, nullptr) != 0) ||
            ::syscall(SYS_setresuid, inner_uid, inner_uid, inner_uid) != 0) {
            *step = "switching to the sandbox's user";
            return errno;
        }
        // A session keyring of its own, empty: the user's keys (a login's, a credential
        // helper's) are not reachable. Where the kernel has no keyrings there is nothing to reach.
        if (::syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, nullptr) < 0 && errno != ENOSYS) {
            *step = "a fresh session keyring";
            return errno;
        }
        if (seccomp) {
            struct sock_fprog prog {};
            prog.len = static_cast<unsigned short>(seccomp->size());
            prog.filter = const_cast<sock_filter*>(seccomp->data());
            if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
                *step = "seccomp filter";
                return errno;
            }
        }
        ::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
        return 0;
    }
};

// The seccomp program of kSandboxDeniedCalls, built with libseccomp in the parent (the child only
// loads it).
std::shared_ptr<const std::vector<sock_filter>> build_seccomp(size_t* n_denied) {
    scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) throw RuntimeFailure("sandbox: libseccomp cannot make a filter");
    struct Free {
        scmp_filter_ctx c;
        ~Free() { ::seccomp_release(c); }
    } free_ctx{ctx};
    auto fail = [](const std::string& what, int rc) {
        throw RuntimeFailure("sandbox: seccomp: " + what + ": " + std::strerror(-rc));
    };
    size_t n = 0;
    for (const char* const* name = kSandboxDeniedCalls; *name; ++name) {
        const int nr = ::seccomp_syscall_resolve_name(*name);
        if (nr == __NR_SCMP_ERROR) continue;
        if (int rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0); rc != 0) fail(*name, rc);
        ++n;
    }
    for (uint64_t flag : {uint64_t{CLONE_NEWNS}, uint64_t{CLONE_NEWUSER}, uint64_t{CLONE_NEWPID}, uint64_t{CLONE_NEWNET},
                          uint64_t{CLONE_NEWIPC}, uint64_t{CLONE_NEWUTS}, uint64_t{CLONE_NEWCGROUP}, uint64_t{0x00000080} /* CLONE_NEWTIME */})
        if (int rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)); rc != 0)
            fail("clone", rc);
    if (int rc = ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc != 0) fail("clone3", rc);
    const int fd = ::memfd_create("cuset-seccomp", MFD_CLOEXEC);
    if (fd < 0) throw RuntimeFailure(std::string("sandbox: memfd_create: ") + std::strerror(errno));
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } close_fd{fd};
    if (int rc = ::seccomp_export_bpf(ctx, fd); rc != 0) fail("export", rc);
    const off_t size = ::lseek(fd, 0, SEEK_END);
    if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0)
        throw RuntimeFailure("sandbox: seccomp: the exported filter has an odd size");
    auto prog = std::make_shared<std::vector<sock_filter>>(static_cast<size_t>(size) / sizeof(sock_filter));
    if (::pread(fd, prog->data(), static_cast<size_t>(size), 0) != size) throw RuntimeFailure("sandbox: seccomp: cannot read the filter back");
    *n_denied = n + 2;  // the named calls, clone with a namespace flag, clone3
    return prog;
}

std::string real_path(const std::string& p) {
    std::error_code ec;
    fs::path r = fs::canonical(p, ec);
    return ec ? std::string() : r.string();
}

}  // namespace

const char* const kSandboxDeniedCalls[] = {
    // the kernel's keyrings
    "keyctl", "add_key", "request_key",
    // kernel attack surface a program never needs
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    // the mount family and namespaces: the sandbox is built before the command starts
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "unshare", "setns",
    // other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    // the machine's state
    "acct", "swapon", "swapoff", "reboot", "syslog", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname", "iopl", "ioperm", "quotactl", "quotactl_fd", "lookup_dcookie",
    "open_by_handle_at", "name_to_handle_at", "nfsservctl", "vhangup", "uselib", "fanotify_init",
    nullptr};

uid_t sandbox_host_uid() { return ::getuid() == 0 ? 65534 : ::getuid(); }
gid_t sandbox_host_gid() { return ::getuid() == 0 ? 65534 : ::getgid(); }

struct Sandbox::Impl {
    std::shared_ptr<const std::vector<sock_filter>> seccomp;  // kSandboxDeniedCalls' filter
    size_t n_denied = 0;
    std::vector<Op> base;             // the system part, the same for every stage
    std::set<std::string> dirs_made;  // inside paths of folders the base creates
    std::set<std::string> links_made;  // inside paths of the links link_through() makes
    std::vector<std::string> env;     // the environment every command starts from
    std::vector<std::string> bound;   // inside paths bound from the host (to skip nested binds)

    void dir_chain(const std::string& inside) {
        std::string acc;
        for (const fs::path& part : fs::path(inside).relative_path()) {
            acc += "/" + part.string();
            if (dirs_made.insert(acc).second) base.push_back({Op::kDir, kNewRoot + acc, "", true, false, false, "mkdir"});
        }
    }
    void parents_of(std::vector<Op>& ops, std::set<std::string>& made, const std::string& inside) const {
        std::string acc;
        fs::path parent = fs::path(inside).parent_path();
        for (const fs::path& part : parent.relative_path()) {
            acc += "/" + part.string();
            if (!dirs_made.count(acc) && made.insert(acc).second)
                ops.push_back({Op::kDir, kNewRoot + acc, "", true, false, false, "mkdir"});
        }
    }
    bool covered(const std::string& inside) const {
        for (const std::string& b : bound)
            if (inside == b || (inside.size() > b.size() && inside.compare(0, b.size(), b) == 0 && inside[b.size()] == '/'))
                return true;
        return false;
    }
    void bind_dir(const std::string& host, bool devices = false) {
        const std::string real = real_path(host);
        if (real.empty()) return;
        if (!covered(real)) {
            dir_chain(real);
            base.push_back({Op::kBind, kNewRoot + real, kOldRoot + real, true, devices, false, "bind-mounting a system folder"});
            bound.push_back(real);
        }
        link_through(host);
    }
    // A folder is bound at its resolved path; when the path it was named by goes through a symbolic
    // link (a project's .venv that links to an environment elsewhere), the first link on that path
    // is made inside too, pointing at its resolved target, so the path as named works as well.
    void link_through(const std::string& host) {
        std::string acc;
        for (const fs::path& part : fs::path(host).relative_path()) {
            acc += "/" + part.string();
            std::error_code ec;
            if (!fs::is_symlink(acc, ec)) continue;
            const std::string target = real_path(acc);
            if (target.empty() || covered(acc) || dirs_made.count(acc) || !links_made.insert(acc).second) return;
            dir_chain(fs::path(acc).parent_path().string());
            base.push_back({Op::kSymlink, kNewRoot + acc, target, true, false, false, "symlink"});
            return;
        }
    }
    void bind_file(const std::string& host, bool devices = false) {
        const std::string real = real_path(host);
        if (real.empty() || covered(host)) return;
        dir_chain(fs::path(host).parent_path().string());
        base.push_back({Op::kFile, kNewRoot + host, "", true, false, false, "mount point"});
        base.push_back({Op::kBind, kNewRoot + host, kOldRoot + real, !devices, devices, false, "bind-mounting a system file"});
    }
};

Sandbox::Sandbox(SandboxOptions opts) : opts_(std::move(opts)), impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.seccomp = build_seccomp(&m.n_denied);
    if (opts_.cgroups) {
        static std::once_flag once;
        static std::shared_ptr<const CgroupSupport> found;
        static std::string why;
        std::call_once(once, [] { found = CgroupSupport::detect(&why); });
        cgroups_ = found;
        cgroup_note_ = found ? "" : why;
    } else {
        cgroup_note_ = "control groups off";
    }
    m.bind_dir("/usr");
    for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
        std::error_code ec;
        if (fs::is_symlink(top, ec)) {
            m.base.push_back({Op::kSymlink, std::string(kNewRoot) + top, fs::read_symlink(top, ec).string(), true, false,
                              false, "symlink"});
        } else if (fs::is_directory(top, ec)) {
            m.bind_dir(top);
        }
    }
    for (const char* f : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime"}) {
        std::error_code ec;
        if (fs::is_regular_file(f, ec)) m.bind_file(f);
    }
    for (const char* d : {"/etc/ld.so.conf.d", "/etc/alternatives"}) {
        std::error_code ec;
        if (fs::is_directory(d, ec)) m.bind_dir(d);
    }
    // The private /tmp before the read-only folders: a toolchain or environment that lives under
    // /tmp is bound on top of it, not hidden by it.
    m.dir_chain("/tmp");
    m.base.push_back({Op::kTmpfs, std::string(kNewRoot) + "/tmp",
                      "mode=1777,size=" + std::to_string(opts_.limits.disk_mb) + "m", true, false, false, "/tmp"});
    std::vector<std::string> read_only = opts_.read_only;  // outer folders first: a later bind never hides one
    std::sort(read_only.begin(), read_only.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    for (const std::string& d : read_only) {
        std::error_code ec;
        if (d.empty()) continue;
        if (fs::is_directory(d, ec)) m.bind_dir(d);
        else if (fs::is_regular_file(d, ec)) m.bind_file(d);
    }
    // /dev: a tmpfs with the harmless devices; the GPU's when asked for.
    m.dir_chain("/dev");
    m.base.push_back({Op::kTmpfs, std::string(kNewRoot) + "/dev", "mode=0755,size=64k", true, false, false, "/dev"});
    for (const char* d : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
        m.base.push_back({Op::kFile, std::string(kNewRoot) + d, "", true, false, false, "device mount point"});
        m.base.push_back({Op::kBind, std::string(kNewRoot) + d, std::string(kOldRoot) + d, false, true, false, "binding a device"});
    }
    m.base.push_back({Op::kDir, std::string(kNewRoot) + "/dev/shm", "", true, false, false, "/dev/shm"});
    m.base.push_back({Op::kTmpfs, std::string(kNewRoot) + "/dev/shm",
                      "mode=1777,size=" + std::to_string(opts_.limits.disk_mb) + "m", true, false, false, "/dev/shm"});
    for (const auto& [name, target] : std::vector<std::pair<std::string, std::string>>{
             {"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}})
        m.base.push_back({Op::kSymlink, std::string(kNewRoot) + "/dev/" + name, target, true, false, false, "/dev symlink"});
    if (opts_.gpu) {
        glob_t g{};
        if (::glob("/dev/nvidia*", 0, nullptr, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; ++i) {
                std::string dev = g.gl_pathv[i];
                std::error_code ec;
                if (fs::is_directory(dev, ec)) {
                    m.base.push_back({Op::kDir, kNewRoot + dev, "", true, false, false, "mkdir"});
                    m.base.push_back({Op::kBind, kNewRoot + dev, kOldRoot + dev, false, true, false, "binding a GPU device"});
                } else {
                    m.base.push_back({Op::kFile, kNewRoot + dev, "", true, false, false, "device mount point"});
                    m.base.push_back({Op::kBind, kNewRoot + dev, kOldRoot + dev, false, true, false, "binding a GPU device"});
                }
            }
        }
        globfree(&g);
        m.bind_dir("/sys");
        for (const char* d : {"/usr/local/nvidia", "/usr/lib64", "/usr/local/cuda/compat"}) {
            std::error_code ec;
            if (fs::is_directory(d, ec)) m.bind_dir(d);
        }
    }
    m.dir_chain("/proc");
    m.base.push_back({Op::kProc, std::string(kNewRoot) + "/proc", "", true, false, true, "mounting /proc"});
    m.dir_chain(kSandboxWork);

    std::string path = "/usr/local/bin:/usr/bin:/bin";
    m.env = {"HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1",
             "OPENBLAS_NUM_THREADS=1", "MKL_THREADING_LAYER=GNU"};
    for (const std::string& d : opts_.read_only) {
        std::error_code ec;
        if (fs::is_directory(fs::path(d) / "bin", ec)) path = (fs::path(d) / "bin").string() + ":" + path;
    }
    m.env.push_back("PATH=" + path);
    if (opts_.gpu) {
        for (const char* keep : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"}) {
            const char* v = std::getenv(keep);
            if (!v) continue;
            m.env.push_back(std::string(keep) + "=" + v);
            if (std::string(keep) == "LD_LIBRARY_PATH") {
                std::string s = v;
                for (size_t at = 0; at <= s.size();) {
                    size_t colon = s.find(':', at);
                    std::string d = s.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
                    std::error_code ec;
                    if (!d.empty() && fs::is_directory(d, ec)) m.bind_dir(d);
                    if (colon == std::string::npos) break;
                    at = colon + 1;
                }
            }
        }
    }
}

Sandbox::~Sandbox() = default;

Sandbox::Prepared Sandbox::wrap(ProcessOptions po, const std::string& work, const std::vector<SandboxMount>& files) const {
    auto setup = std::make_shared<Setup>();
    setup->ops = impl_->base;
    setup->limits = opts_.limits;
    setup->caller_is_root = ::getuid() == 0;
    setup->host_uid = sandbox_host_uid();
    setup->host_gid = sandbox_host_gid();
    setup->inner_uid = setup->caller_is_root ? 1000 : setup->host_uid;
    setup->inner_gid = setup->caller_is_root ? 1000 : setup->host_gid;
    setup->judge_pid = ::getpid();
    setup->seccomp = impl_->seccomp;
    setup->cgroups = cgroups_;
    const std::string box = std::string(kNewRoot) + kSandboxWork;
    const std::string real_work = real_path(work);
    if (real_work.empty()) throw RuntimeFailure("sandbox: the work folder '" + work + "' does not exist");
    if (setup->caller_is_root) {  // the sandbox's user (nobody on the host) writes there
        std::error_code ec;
        auto hand_over = [&](const fs::path& d) {
            if (::lchown(d.c_str(), setup->host_uid, setup->host_gid) != 0)
                throw RuntimeFailure("sandbox: cannot hand '" + d.string() + "' to the sandbox's user: " + std::strerror(errno));
        };
        hand_over(real_work);
        int n = 0;
        for (auto it = fs::recursive_directory_iterator(real_work, ec); !ec && it != fs::recursive_directory_iterator() && n < 256;
             it.increment(ec), ++n)
            if (it->is_directory(ec) && !it->is_symlink(ec)) hand_over(it->path());
    }
    setup->ops.push_back({Op::kBind, box, kOldRoot + real_work, false, false, false, "binding the work folder"});
    std::set<std::string> made;
    for (const SandboxMount& f : files) {
        const std::string real = real_path(f.host);
        if (real.empty()) throw RuntimeFailure("sandbox: '" + f.host + "' does not exist");
        if (f.inside.empty() || f.inside[0] != '/') throw RuntimeFailure("sandbox: '" + f.inside + "' is not absolute");
        std::error_code ec;
        const bool dir = fs::is_directory(real, ec);
        impl_->parents_of(setup->ops, made, f.inside);
        setup->ops.push_back({dir ? Op::kDir : Op::kFile, kNewRoot + f.inside, "", true, false, false, "mount point"});
        setup->ops.push_back({Op::kBind, kNewRoot + f.inside, kOldRoot + real, !f.writable, false, false, "binding a task file"});
    }
    Prepared out;
    out.options = std::move(po);
    if (out.options.cwd.empty()) out.options.cwd = kSandboxWork;
    out.options.clear_env = true;
    std::vector<std::string> env = impl_->env;
    for (const std::string& e : out.options.env)
        if (e.find('=') != std::string::npos) env.push_back(e);
    out.options.env = std::move(env);
    out.options.setup = setup.get();
    out.setup = std::move(setup);
    return out;
}

std::string Sandbox::describe() const {
    const SandboxLimits& l = opts_.limits;
    std::string out = "namespaces (user, mount, pid, net, ipc, uts); seccomp (" + std::to_string(impl_->n_denied) +
                      " calls denied); fresh session keyring; ";
    if (cgroups_) {
        out += cgroups_->describe() + ": memory " + std::to_string(l.memory_mb) + " MiB (shared included) and " +
               std::to_string(l.processes) + " processes per command; ";
    } else {
        out += "no control group (" + cgroup_note_ + "): memory bounded per process (private only); ";
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, "rlimits: cpu %g s, memory %lld MiB, file %lld MiB, %lld processes, %lld open files; disk %lld MiB",
                  l.cpu_s, static_cast<long long>(l.memory_mb), static_cast<long long>(l.file_mb),
                  static_cast<long long>(l.processes), static_cast<long long>(l.open_files), static_cast<long long>(l.disk_mb));
    return out + buf;
}

std::string Sandbox::unavailable_reason() {
    static std::once_flag once;
    static std::string reason;
    std::call_once(once, [] {
        try {
            const fs::path dir = fs::temp_directory_path() / ("cuset-sandbox-probe-" + std::to_string(::getpid()));
            fs::create_directories(dir);
            if (::getuid() == 0 && ::chown(dir.c_str(), sandbox_host_uid(), sandbox_host_gid()) != 0)
                reason = std::string("cannot hand the probe folder to the sandbox's user: ") + std::strerror(errno);
            if (reason.empty()) {
                Sandbox sb(SandboxOptions{});
                ProcessOptions po;
                po.argv = {"/bin/sh", "-c", "echo ok > probe && cat probe"};
                po.timeout_s = 30;
                po.merge_stderr = true;
                Prepared p = sb.wrap(po, dir.string(), {});
                ProcessResult r = process_run(p.options);
                if (!r.ok() || r.out.find("ok") == std::string::npos)
                    reason = "a probe command failed inside (" + std::to_string(r.status_code()) + "): " + r.out.substr(0, 200);
            }
            std::error_code ec;
            fs::remove_all(dir, ec);
        } catch (const std::exception& e) {
            reason = e.what();
        }
    });
    return reason;
}

}  // namespace cuset::judge
