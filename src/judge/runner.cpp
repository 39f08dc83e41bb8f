// Compiling, running and checking one untrusted program, every command contained (judge/runner.h).
#include "cuset/judge/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "cuset/core/atomic_file.h"
#include "cuset/core/file_tree.h"
#include "cuset/core/hash.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/core/signals.h"
#include "cuset/core/utf8_text.h"
#include "cuset/emu/runtime.h"
#include "cuset/emu/transform.h"
#include "cuset/judge/kernel_static_check.h"
#include "cuset/judge/task_files.h"

namespace fs = std::filesystem;

namespace cuset::judge {

namespace {

constexpr size_t kCompileLogCap = size_t{1} << 20;  // head of a compiler log: its first error
constexpr size_t kRunLogCap = size_t{256} << 10;    // tail of a program's output: its last line
constexpr size_t kMaxSourceBytes = size_t{16} << 20;  // a longer program is refused unread
constexpr int kMaxProducedFiles = 4096;             // files gen.py may write
// The host compiler's build of an emulated program: not CUDABench's stage, so not its 60 s; a
// large program with the emulator's runtime header takes a few seconds on an idle core.
constexpr double kEmulatorBuildTimeout_s = 600;
// The build of one KernelBench extension (torch's headers: tens of seconds on an idle core).
constexpr double kExtensionBuildTimeout_s = 600;
// The built extensions the judge's cache keeps (the newest; each a few MiB).
constexpr size_t kMaxCachedFiles = 512;
// The largest build/calls.json a KernelBench candidate's capture may leave.
constexpr int64_t kMaxCallsBytes = int64_t{64} << 20;
// A contained stage's work folder is measured this often against SandboxLimits::disk_mb.
constexpr double kDiskCheckEvery_s = 0.5;
// ... and may hold at most this many files and folders.
constexpr uint64_t kMaxWorkEntries = 65536;
// An emulated run that reached its time limit was busy (the emulator too slow: unjudged) when its
// processes used at least this share of the limit in CPU time; less, and it waited (slept, stopped
// itself, blocked): a run-timeout, as it would be on a GPU. A tenth leaves room for a machine
// whose cores are shared by many jobs; a program that waits uses next to none.
constexpr double kBusyCpuShare = 0.1;

// A finished command, with what its control group measured and whether the judge stopped it for
// the disk bound.
struct Ran : ProcessResult {
    CgroupUsage usage;
    bool over_disk = false;
    int64_t disk_mb = 0;
    int64_t memory_mb = 0;
    // CPU seconds of all its processes: the control group's when one held, else the kernel's
    // accounting of the process tree.
    double cpu_seconds() const { return usage.cpu_s >= 0 ? usage.cpu_s : cpu_s; }
};

void write_text(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw RuntimeFailure("cannot write '" + p.string() + "'");
    ::chmod(p.c_str(), 0644);
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

std::string ending(const Ran& r, double timeout_s) {
    if (r.over_disk)
        return "stopped: its folder passed " + std::to_string(r.disk_mb) + " MiB or " + std::to_string(kMaxWorkEntries) +
               " entries (eval.sandbox.disk_mb)";
    if (r.usage.oom_killed) return "killed at its memory limit of " + std::to_string(r.memory_mb) + " MiB (eval.sandbox.memory_mb)";
    return process_ending(r, timeout_s);
}

StageReport report_of(const ProcessResult& r, bool compiler) {
    StageReport s;
    s.ran = true;
    s.ok = r.ok();
    s.timed_out = r.timed_out;
    s.exit_code = r.exit_code;
    s.signal = r.signal;
    s.seconds = r.seconds;
    s.line = compiler ? first_error_line(r.out) : last_output_line(r.out);
    return s;
}

// A script's failure that is the judge's environment, not the task's or the program's.
bool missing_module(const std::string& err) {
    return err.find("ModuleNotFoundError") != std::string::npos || err.find("ImportError:") != std::string::npos;
}

// A gen.py that failed for want of a CUDA device (torch's messages without a driver, a GPU or a
// CUDA build).
bool wants_cuda(const std::string& err) {
    for (const char* m : {"Found no NVIDIA driver", "Torch not compiled with CUDA enabled", "No CUDA GPUs are available",
                          "CUDA driver initialization failed"})
        if (err.find(m) != std::string::npos) return true;
    return false;
}

// Runs gen.py (python -c, in its folder) with every CUDA device torch is asked for replaced by the
// CPU: tensors made or moved to "cuda", "cuda:N" or torch.device("cuda") stay on the CPU, and
// Tensor.cuda() is the tensor itself. For the emulating judge, which has no GPU, on a gen.py that
// needs one (CUDABench's FIR_Filtering). Its random inputs are then the CPU generator's, not the
// GPU's (torch's two generators differ), and its reference outputs are computed from those inputs,
// so the task stays consistent; its numbers are not the GPU run's.
const char* const kCudaOnCpu = R"(import runpy, torch
from torch.overrides import TorchFunctionMode
def _cpu(v):
    if isinstance(v, torch.device) and v.type == "cuda": return torch.device("cpu")
    if isinstance(v, str) and v.split(":")[0] == "cuda": return "cpu"
    return v
class _CudaOnCpu(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.cuda: return args[0]
        return func(*[_cpu(a) for a in args], **{k: _cpu(v) for k, v in (kwargs or {}).items()})
with _CudaOnCpu():
    runpy.run_path("gen.py", run_name="__main__")
)";

// Removes a folder a sandboxed program wrote, however it is shaped (core/file_tree.h); a failure is
// reported in the log with the folder's name.
void remove_tree(const fs::path& dir) {
    const std::string error = cuset::remove_tree(dir.string());
    if (!error.empty()) log_warn("judge: %s", error.c_str());
}

// The regular files under `dir` (relative paths), not following links; `skip` left out.
std::vector<std::string> regular_files(const fs::path& dir, const std::string& skip) {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
        std::string rel = fs::relative(it->path(), dir, ec).string();
        if (rel == skip) continue;
        out.push_back(rel);
        if (static_cast<int>(out.size()) > kMaxProducedFiles) break;
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Copies `rel` from a folder a program wrote to `to_dir`, never following a link and only a
// regular file of at most `max_bytes`: nothing the program placed can make the judge read
// elsewhere or copy more than the task allows. Holes stay holes (a sparse file is not read as
// zeros). Returns "" when copied, else why not ("absent", "not a regular file", "N bytes, more
// than the task allows (M)").
std::string copy_output(const fs::path& from_dir, const std::string& rel, const fs::path& to_dir, int64_t max_bytes) {
    int dfd = ::open(from_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return "absent";
    fs::path rp(rel);
    for (auto it = rp.begin(); dfd >= 0 && it != rp.end(); ++it) {
        auto next = it;
        ++next;
        const bool last = next == rp.end();
        int fd = ::openat(dfd, it->c_str(), (last ? O_RDONLY | O_NONBLOCK : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
        ::close(dfd);
        dfd = fd;
    }
    if (dfd < 0) return "absent";
    struct Close {
        int& fd;
        ~Close() {
            if (fd >= 0) ::close(fd);
        }
    } close_in{dfd};
    struct stat st {};
    if (::fstat(dfd, &st) != 0 || !S_ISREG(st.st_mode)) return "not a regular file";
    if (st.st_size > max_bytes)
        return std::to_string(st.st_size) + " bytes, more than the task allows (" + std::to_string(max_bytes) + ")";
    const fs::path dst = to_dir / rp;
    std::error_code ec;
    fs::create_directories(dst.parent_path(), ec);
    int out = ::open(dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0) return std::string("cannot be copied: ") + std::strerror(errno);
    Close close_out{out};
    const off_t size = st.st_size;
    char buf[1 << 16];
    for (off_t pos = 0; pos < size;) {
        off_t data = ::lseek(dfd, pos, SEEK_DATA);
        if (data < 0) {
            if (errno == ENXIO) break;  // a hole to the end
            data = pos;                 // no hole support here: copy as is
        }
        off_t hole = ::lseek(dfd, data, SEEK_HOLE);
        if (hole < 0 || hole > size) hole = size;
        for (off_t at = data; at < hole;) {
            const ssize_t n = ::pread(dfd, buf, static_cast<size_t>(std::min<off_t>(hole - at, sizeof buf)), at);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                hole = at;  // it shrank meanwhile
                break;
            }
            for (ssize_t w = 0; w < n;) {
                const ssize_t k = ::pwrite(out, buf + w, static_cast<size_t>(n - w), at + w);
                if (k < 0 && errno == EINTR) continue;
                if (k <= 0) return std::string("cannot be copied: ") + std::strerror(errno);
                w += k;
            }
            at += n;
        }
        if (hole <= data) break;
        pos = hole;
    }
    if (::ftruncate(out, size) != 0) return std::string("cannot be copied: ") + std::strerror(errno);
    return "";
}

// Every text of a verdict comes from a program or a tool reading it: kept as valid UTF-8, so
// that no writer of the verdict (journal, eval.json, rewards, pages) can fail on its bytes.
void make_texts_valid(Verdict& v) {
    for (std::string* t : {&v.error, &v.compile.line, &v.run.line, &v.speedup_note, &v.containment, &v.note})
        if (!utf8_valid(*t)) *t = utf8_sanitize(*t);
}

// The last non-empty line of a checker's standard output.
std::string verdict_line(const std::string& out) {
    size_t e = out.find_last_not_of(" \t\r\n");
    if (e == std::string::npos) return "";
    size_t b = out.find_last_of('\n', e);
    std::string line = out.substr(b == std::string::npos ? 0 : b + 1, e + 1 - (b == std::string::npos ? 0 : b + 1));
    size_t lb = line.find_first_not_of(" \t\r");
    return lb == std::string::npos ? "" : line.substr(lb);
}

// What a task's gen.py made, once per task.
struct Generated {
    bool started = false, done = false;  // (made_once)
    Status status = Status::kPass;  // kGenFailed / kTaskError when the task cannot check programs
    std::string error;
    std::string out;                // its standard output (the tail)
    fs::path dir;                   // its folder (gen.py and the files it wrote)
    TaskFiles files;
    std::vector<std::string> produced;
    int64_t largest_file = 0;       // bytes of the largest of them
    int64_t pending = -1;           // programs still to judge against it (-1 = unknown)
};

// The value of `slot` (a map entry with `started` and `done` flags, guarded by `lock`'s mutex),
// made once: the first thread to ask runs make() with the lock released, then store(slot, made)
// under it; the others wait on `cv` until it is done. If make() throws, fail(slot) fills the slot
// for the waiters and the exception goes on. Returns with the lock held.
template <class Slot, class Make, class Store, class Fail>
Slot& made_once(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Slot& slot, Make make, Store store,
                Fail fail) {
    if (slot.started) {
        cv.wait(lock, [&] { return slot.done; });
        return slot;
    }
    slot.started = true;
    lock.unlock();
    try {
        auto made = make();
        lock.lock();
        store(slot, std::move(made));
    } catch (...) {
        if (!lock.owns_lock()) lock.lock();
        fail(slot);
        slot.started = slot.done = true;
        cv.notify_all();
        throw;
    }
    slot.started = slot.done = true;
    cv.notify_all();
    return slot;
}

}  // namespace

const char* judge_mode_name(JudgeMode m) {
    switch (m) {
        case JudgeMode::kGpu: return "gpu";
        case JudgeMode::kEmulate: return "emulate";
        default: return "compile";
    }
}

const char* judge_label(JudgeMode m) {
    switch (m) {
        case JudgeMode::kGpu: return "gpu";
        case JudgeMode::kEmulate: return "emulated";
        default: return "compile-only";
    }
}

namespace {

struct StatusRow {
    const char* name;
    StatusKind kind;
    const char* rule;
};

// The rows of CUSET_JUDGE_STATUSES in the enum's order.
constexpr StatusRow kStatusRows[] = {
#define CUSET_STATUS_ROW(value, name, kind, rule) {name, StatusKind::kind, rule},
    CUSET_JUDGE_STATUSES(CUSET_STATUS_ROW)
#undef CUSET_STATUS_ROW
};
static_assert(sizeof kStatusRows / sizeof kStatusRows[0] == static_cast<size_t>(kStatusCount));

const StatusRow& row(Status s) { return kStatusRows[static_cast<int>(s)]; }

}  // namespace

const char* status_name(Status s) { return row(s).name; }

std::optional<Status> status_from_name(const std::string& name) {
    for (int i = 0; i < kStatusCount; ++i)
        if (name == kStatusRows[i].name) return static_cast<Status>(i);
    return std::nullopt;
}

StatusKind status_kind(Status s) { return row(s).kind; }

const char* status_rule(Status s) { return row(s).rule; }

std::string verdict_salt(JudgeMode mode) {
    if (mode != JudgeMode::kEmulate) return "";
    // The emulator's runtime, its Python stand-ins and the KernelBench stages' scripts and device
    // memory: a verdict made by other ones is not reused.
    Hasher h;
    h.add(kCudaOnCpu);
    for (const auto& [rel, text] : kernelbench_files()) h.add(rel).add(text);
    return "emu-" + emu::runtime_hash() + "-" + h.hex();
}

bool status_passed(Status s) { return status_kind(s) == StatusKind::kPassed; }
bool status_unjudged(Status s) { return status_kind(s) == StatusKind::kUnjudged; }

struct Runner::Impl {
    const RunnerOptions& o;
    std::unique_ptr<Sandbox> sandbox;
    // What the judge builds and keeps once per machine: the emulator's runtime, the emulated
    // extensions' toolchain, the compilers' answers (gpu-front-end/).
    fs::path cache_root() const { return o.cache_dir.empty() ? fs::path(o.work_dir) / "emu" : fs::path(o.cache_dir); }
    std::string notice;
    std::string cuda_include;
    // The emulator's runtime, built once: its folder (headers, precompiled header, object).
    std::string emu_dir, emu_object, emu_error;
    std::vector<std::string> emu_flags;
    std::mutex mu;
    std::condition_variable cv;
    std::map<std::string, Generated> generated;
    // The reference solutions' run times (SpeedupOptions), per task key.
    struct ReferenceTiming {
        bool started = false, done = false;
        std::optional<double> seconds;
        std::string why;
    };
    std::map<std::string, ReferenceTiming> reference_times;
    std::mutex timing_mu;  // one timed run at a time

    explicit Impl(const RunnerOptions& opts) : o(opts) {}

    // Runs one command in `work` (the folder it may write), `files` bound read-only beside it,
    // to its end; a stop request kills it, and so does `work` growing past the disk bound
    // (measured every kDiskCheckEvery_s and at the end).
    Ran run(std::vector<std::string> argv, const fs::path& work, const std::vector<SandboxMount>& files,
                      double timeout_s, size_t cap, bool keep_tail, bool merge, double poll_s = 0.05) {
        ProcessOptions po;
        po.argv = std::move(argv);
        po.timeout_s = timeout_s;
        po.output_cap = cap;
        po.keep_tail = keep_tail;
        po.merge_stderr = merge;
        Sandbox::Prepared prepared;
        if (sandbox) {
            prepared = sandbox->wrap(po, work.string(), files);
            po = prepared.options;
        } else {  // uncontained: the same layout by copies, the same clean environment
            for (const SandboxMount& f : files) {
                fs::path dst = work / fs::path(f.inside).lexically_relative(kSandboxWork);
                std::error_code ec;
                fs::create_directories(dst.parent_path(), ec);
                fs::copy_file(f.host, dst, fs::copy_options::overwrite_existing, ec);
                if (ec) throw RuntimeFailure("judge: cannot copy " + f.host + ": " + ec.message());
            }
            po.cwd = work.string();
            po.clear_env = true;
            po.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + work.string(), "TMPDIR=" + work.string(),
                      "LANG=C.UTF-8", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"};
            for (const char* keep : {"CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"})
                if (const char* v = std::getenv(keep)) po.env.push_back(std::string(keep) + "=" + v);
        }
        const uint64_t disk_bytes = static_cast<uint64_t>(o.limits.disk_mb) << 20;
        auto over_disk = [&] { return !tree_size(work.string(), disk_bytes, kMaxWorkEntries).complete; };
        Ran ran;
        Process p(std::move(po));
        double next_check = kDiskCheckEvery_s;
        const auto t0 = std::chrono::steady_clock::now();
        while (!p.poll()) {
            if (signals_stop_requested()) p.kill();
            if (seconds_since(t0) >= next_check) {
                next_check += kDiskCheckEvery_s;
                if (!ran.over_disk && over_disk()) {
                    ran.over_disk = true;
                    p.kill();
                }
            }
            process_wait_any({&p}, poll_s);
        }
        static_cast<ProcessResult&>(ran) = p.result();
        if (prepared.setup) ran.usage = prepared.setup->usage();
        if (!ran.over_disk && over_disk()) ran.over_disk = true;
        if (ran.over_disk) ran.killed = true;  // never ok(), whatever its exit status
        ran.disk_mb = o.limits.disk_mb;
        ran.memory_mb = o.limits.memory_mb;
        return ran;
    }

    // Builds the emulator's runtime once per machine into the cache (outside any sandbox: it is
    // the project's own code): its headers, a precompiled header and the object.
    void prepare_emulator() {
        ProcessOptions v;
        v.argv = {o.cxx, "--version"};
        v.timeout_s = 30;
        ProcessResult ver;
        try {
            ver = process_run(v);
        } catch (const std::exception& e) {
            emu_error = std::string("no host C++ compiler: ") + e.what();
            return;
        }
        // The runtime's files, the host compiler, and the build's flags with the toolkit's version
        // (an upgraded toolkit builds a fresh runtime).
        Hasher key;
        key.add(emu::runtime_hash()).add(ver.out).add(cuda_include);
        for (const std::string& f : emu::build_flags("", cuda_include)) key.add(f);
        const std::string id = key.hex();
        const fs::path dir = cache_root() / ("runtime-" + id);
        emu_dir = dir.string();
        emu_flags = emu::build_flags(emu_dir, cuda_include);
        emu_object = (dir / "cuemu.o").string();
        emu_error = build_cached_runtime(
            o.cxx, emu_flags, emu_dir,
            [&] {
                emu::write_runtime_files(emu_dir);
                return std::string();
            },
            {(dir / "cuemu.cpp").string(), emu_object, (dir / "cuemu.h").string(), {}}, 600, "the emulator's");
    }

    // The task's generated files: made by the first program that needs them, shared by the rest.
    Generated& generate(const CheckedTask& task) {
        std::unique_lock<std::mutex> lock(mu);
        Generated& g = generated[task.key];
        if (g.dir.empty()) g.dir = fs::path(o.work_dir) / ("task-" + Hasher().add(task.key).hex());
        const fs::path dir = g.dir;
        return made_once(
            lock, cv, g, [&] { return run_generator(task, dir); },
            [](Generated& slot, Generated&& made) {
                made.dir = slot.dir;
                made.pending = slot.pending;  // counted by expect() meanwhile
                slot = std::move(made);
            },
            [](Generated& slot) {
                slot.status = Status::kGenFailed;
                slot.error = "gen.py: the judge failed";
            });
    }

    Generated run_generator(const CheckedTask& task, const fs::path& dir) {
        Generated g;
        auto gen = [&](const std::vector<std::string>& how) {  // in a fresh folder holding gen.py
            remove_tree(dir);
            std::error_code ec;
            fs::create_directories(dir / "data", ec);
            if (ec) throw RuntimeFailure("judge: cannot create " + dir.string() + ": " + ec.message());
            write_text(dir / "gen.py", task.gen_py);
            std::vector<std::string> argv = {o.python.executable, "-I", "-B"};
            argv.insert(argv.end(), how.begin(), how.end());
            return run(argv, dir, {}, o.gen_timeout_s, kRunLogCap, true, false);
        };
        Ran r = gen({"gen.py"});
        if (!r.ok() && !r.timed_out && o.mode == JudgeMode::kEmulate && wants_cuda(r.err)) {
            log_info("judge: task %s: gen.py needs a CUDA device and the emulating judge has none: run again with its "
                     "tensors on the CPU (its random inputs are then the CPU generator's)",
                     task.key.c_str());
            r = gen({"-c", kCudaOnCpu});
        }
        g.out = r.out;
        if (!r.ok()) {
            if (!r.timed_out && missing_module(r.err))
                throw JudgeEnvironmentError("the judge's Python " + o.python.executable + " (" + o.python.origin +
                                            ") cannot run a task's gen.py: " + last_output_line(r.err) +
                                            "; set eval.python to a Python with the modules the tasks import");
            g.status = Status::kGenFailed;
            const std::string why = r.timed_out ? ending(r, o.gen_timeout_s) : last_output_line(r.err);
            g.error = "gen.py: " + (why.empty() ? ending(r, o.gen_timeout_s) : why);
            return g;
        }
        g.produced = regular_files(dir, "gen.py");
        for (const std::string& f : g.produced) {
            std::error_code ec;
            const uintmax_t n = fs::file_size(dir / f, ec);
            if (!ec) g.largest_file = std::max<int64_t>(g.largest_file, static_cast<int64_t>(n));
        }
        g.files = classify_task_files(g.produced, task.reference_source, task.declared_inputs, task.compare_py);
        if (!g.files.problem.empty()) {
            g.status = Status::kTaskError;
            g.error = "task: " + g.files.problem;
        }
        return g;
    }

    void done_with(const CheckedTask& task) {
        std::lock_guard<std::mutex> lock(mu);
        auto it = generated.find(task.key);
        if (it == generated.end() || it->second.pending < 0) return;
        if (--it->second.pending == 0 && !o.keep_work) {
            remove_tree(it->second.dir);
            generated.erase(it);
        }
    }

    // Compiles `source` in `box` with nvcc and, for emulation, builds it for the emulator: the
    // program to run ("" when it does not build: `v` says why) and its run timeout.
    std::string build_program(const std::string& source, const fs::path& box, Verdict& v, double* run_timeout) {
        std::error_code ec;
        fs::create_directories(box / "data", ec);
        if (ec) throw RuntimeFailure("judge: cannot create " + box.string() + ": " + ec.message());
        const std::string& name = o.program_name;
        if (source.size() > kMaxSourceBytes) {  // refused before any tool reads it
            v.status = Status::kCompileError;
            v.error = "the program is " + std::to_string(source.size() >> 20) + " MiB, more than the judge's " +
                      std::to_string(kMaxSourceBytes >> 20) + " MiB for one source";
            return "";
        }
        write_text(box / (name + ".cu"), source);
        std::vector<std::string> nvcc = {o.nvcc, name + ".cu", "-o", name};
        nvcc.insert(nvcc.end(), o.nvcc_flags.begin(), o.nvcc_flags.end());
        Ran c = run(nvcc, box, {}, o.compile_timeout_s, kCompileLogCap, false, true);
        v.compile = report_of(c, true);
        if (c.timed_out) {
            v.status = Status::kCompileTimeout;
            v.error = "nvcc " + ending(c, o.compile_timeout_s);
            return "";
        }
        if (!c.ok()) {
            v.status = Status::kCompileError;
            v.error = v.compile.line.empty() ? "nvcc " + ending(c, o.compile_timeout_s) : v.compile.line;
            return "";
        }
        v.compiled = true;
        if (o.mode == JudgeMode::kCompile) {
            v.status = Status::kCompiled;
            return "";
        }
        *run_timeout = o.run_timeout_s;
        if (o.mode != JudgeMode::kEmulate) return "./" + name;
        if (!emu_error.empty()) {
            v.status = Status::kUnjudged;
            v.error = "emulator: " + emu_error;
            return "";
        }
        std::string rewritten;
        try {
            // In the judge's own process: bounded by the emulator build's limit, and a stop request
            // ends it as it ends a contained stage.
            const auto t0 = std::chrono::steady_clock::now();
            rewritten = emu::transform_program(source, [&] {
                return signals_stop_requested() || seconds_since(t0) > kEmulatorBuildTimeout_s;
            });
        } catch (const emu::TransformCancelled&) {  // (after a stop request, callers drop the verdict)
            v.status = Status::kUnjudged;
            v.error = signals_stop_requested() ? "emulator: stopped while rewriting the program"
                                               : "emulator: the source rewrite did not finish within " +
                                                     seconds_text(kEmulatorBuildTimeout_s) + " s";
            return "";
        } catch (const std::exception& e) {
            v.status = Status::kUnjudged;
            v.error = std::string("emulator: cannot rewrite the program: ") + e.what();
            return "";
        }
        write_text(box / "kernel_emu.cpp", rewritten);
        std::vector<std::string> argv = {o.cxx};
        argv.insert(argv.end(), emu_flags.begin(), emu_flags.end());
        argv.insert(argv.end(), {"-include", emu_dir + "/cuemu.h", "kernel_emu.cpp", emu_object, "-o", "kernel_emu"});
        Ran b = run(argv, box, {}, kEmulatorBuildTimeout_s, kCompileLogCap, false, true);
        if (!b.ok()) {
            const std::string line = first_error_line(b.out);
            if (!b.timed_out && line.find("#error") != std::string::npos) {
                // The emulator's build defines what nvcc defines (emu/runtime.h): an #error reached
                // there is the program's own branch, not a gap of the emulator.
                v.status = Status::kCompileError;
                v.error = "the program's #error under the emulator's build (nvcc's macros): " + line;
                return "";
            }
            v.status = Status::kUnjudged;
            v.error = line.find("poisoned \"__CUDA_ARCH__\"") != std::string::npos
                          ? "emulator: the program tests __CUDA_ARCH__, which the emulator cannot honour (its kernels "
                            "are host code): " + line
                          : "emulator: build failed: " + (line.empty() ? ending(b, kEmulatorBuildTimeout_s) : line);
            return "";
        }
        *run_timeout = o.emulate_timeout_s;
        return "./kernel_emu";
    }

    void judge_in(const std::string& source, const CheckedTask* task, const fs::path& dir, Verdict& v) {
        if (task && task->kernelbench) return judge_kernelbench(source, *task, dir, v);
        const fs::path box = dir / "box";
        double run_timeout = o.run_timeout_s;
        const std::string program = build_program(source, box, v, &run_timeout);
        if (program.empty()) return;
        const Generated* gen = nullptr;
        std::vector<SandboxMount> inputs;
        if (task && !task->gen_py.empty()) {
            gen = &generate(*task);
            if (gen->status != Status::kPass) {
                v.status = gen->status;
                v.error = gen->error;
                return;
            }
            inputs = input_mounts(*gen);
        }
        Ran r;
        try {
            r = run({program}, box, inputs, run_timeout, kRunLogCap, true, true);
        } catch (const ProcessStartError& e) {  // the program itself cannot be executed: its failure
            if (!e.step().empty()) throw;
            v.ran = false;
            v.functional = false;
            v.status = Status::kRunFailed;
            v.error = std::string("run: ") + e.what();
            return;
        }
        if (!read_run(r, run_timeout, v)) return;
        if (!gen) {  // a self-checking program: its exit status is the verdict
            v.functional = true;
            v.status = Status::kPass;
            return;
        }
        (void)check_stage(*task, *gen, box, dir, v);
        if (v.status == Status::kPass && o.speedup.enabled) measure_speedup(*task, *gen, box / program, dir, run_timeout, v);
    }

    // What a finished run says before any check, in v: false when that is the verdict (the
    // emulator ran out of time: unjudged; it failed: run-failed or run-timeout, with its CPU time
    // where the clock or the CPU limit stopped it), true when it exited 0.
    bool read_run(const Ran& r, double timeout_s, Verdict& v) const {
        v.run = report_of(r, false);
        if (o.mode == JudgeMode::kEmulate && emulator_ran_out(r, timeout_s)) {
            // On the emulator a long run says nothing about the program (a GPU would take
            // milliseconds); what kept the emulator busy to its limit is not judged.
            v.status = Status::kUnjudged;
            v.error = "emulator: no result within the limit (" + ending(r, timeout_s) + ", " +
                      seconds_text(std::round(r.cpu_seconds())) + " s of CPU): too slow to emulate, or it does not end";
            return false;
        }
        if (!r.ok()) {
            v.ran = false;
            v.functional = false;
            v.status = r.timed_out ? Status::kRunTimeout : Status::kRunFailed;
            std::string how = ending(r, timeout_s);
            if (r.timed_out || r.signal == SIGXCPU)
                how += " with " + seconds_text(std::round(r.cpu_seconds() * 10) / 10) + " s of CPU";
            v.error = "run: " + how + (v.run.line.empty() ? "" : ": " + v.run.line);
            return false;
        }
        v.ran = true;
        return true;
    }

    // Whether an emulated run ended for the emulator's own limit, measured by the judge: it used
    // the CPU to the time limit (kBusyCpuShare of it: a program that slept, stopped itself or
    // waited on a child did not), or it was sent SIGXCPU with its CPU time at RLIMIT_CPU (a
    // program that raised SIGXCPU itself was not). Everything else a program does to itself is
    // its own failure, judged as such.
    bool emulator_ran_out(const Ran& r, double timeout_s) const {
        if (r.over_disk || r.usage.oom_killed || r.killed) return false;
        if (r.timed_out) return r.cpu_seconds() >= kBusyCpuShare * timeout_s;
        if (r.signal == SIGXCPU) return r.cpu_seconds() >= std::max(1.0, o.limits.cpu_s) - 1.0;
        return false;
    }

    // The task's input files, bound read-only beside a program (data/...).
    static std::vector<SandboxMount> input_mounts(const Generated& gen) {
        std::vector<SandboxMount> inputs;
        for (const std::string& f : gen.files.inputs)
            inputs.push_back({(gen.dir / f).string(), std::string(kSandboxWork) + "/" + f, false});
        return inputs;
    }

    // The median wall time of `binary`'s timed runs (judge/timing.h), each in a fresh folder
    // `dir`/timing with a copy of the binary and the task's inputs (nothing a run leaves reaches
    // the next); nullopt when a run fails (`why` says how). One timing at a time in this runner.
    std::optional<double> time_runs(const fs::path& binary, const Generated& gen, const fs::path& dir, double timeout_s,
                                    std::string* why) {
        const std::vector<SandboxMount> inputs = input_mounts(gen);
        const fs::path box = dir / "timing";
        std::lock_guard<std::mutex> lock(timing_mu);
        const std::optional<double> median = median_of_timed_runs(
            o.speedup,
            [&](int, std::string* how) -> std::optional<double> {
                remove_tree(box);
                std::error_code ec;
                fs::create_directories(box / "data", ec);
                fs::copy_file(binary, box / binary.filename(), ec);
                if (ec) throw RuntimeFailure("judge: cannot copy " + binary.string() + ": " + ec.message());
                Ran r = run({"./" + binary.filename().string()}, box, inputs, timeout_s, kRunLogCap, true, true, 0.001);
                if (!r.ok()) {
                    *how = ending(r, timeout_s);
                    return std::nullopt;
                }
                return r.seconds;
            },
            why);
        remove_tree(box);
        return median;
    }

    // The reference solution's median run time, built and timed once per task in this runner.
    std::optional<double> reference_time(const CheckedTask& task, const Generated& gen, std::string* why) {
        std::unique_lock<std::mutex> lock(mu);
        const ReferenceTiming& t = made_once(
            lock, cv, reference_times[task.key], [&] { return time_reference(task, gen); },
            [](ReferenceTiming& slot, ReferenceTiming&& made) {
                slot.seconds = made.seconds;
                slot.why = made.why;
            },
            [](ReferenceTiming& slot) { slot.why = "the judge failed"; });
        *why = t.why;
        return t.seconds;
    }

    ReferenceTiming time_reference(const CheckedTask& task, const Generated& gen) {
        ReferenceTiming made;
        const fs::path dir = fs::path(o.work_dir) / ("reference-" + Hasher().add(task.key).hex());
        try {
            remove_tree(dir);
            Verdict rv;
            double timeout = o.run_timeout_s;
            const std::string program = task.reference_source.empty() ? "" : build_program(task.reference_source, dir / "box", rv, &timeout);
            if (program.empty()) {
                made.why = task.reference_source.empty() ? "the task has no reference solution"
                                                         : "the reference solution does not build: " + rv.error;
            } else {
                std::string w;
                made.seconds = time_runs(dir / "box" / program, gen, dir, timeout, &w);
                if (!made.seconds) made.why = "the reference solution's " + w;
            }
        } catch (...) {
            remove_tree(dir);
            throw;
        }
        remove_tree(dir);
        return made;
    }

    void measure_speedup(const CheckedTask& task, const Generated& gen, const fs::path& binary, const fs::path& dir,
                         double timeout_s, Verdict& v) {
        std::string why;
        const std::optional<double> ref = reference_time(task, gen, &why);
        if (!ref) {
            v.speedup_note = why;
            return;
        }
        const std::optional<double> mine = time_runs(binary, gen, dir, timeout_s, &why);
        if (!mine) {
            v.speedup_note = why;
            return;
        }
        v.speedup = speedup_of(*ref, *mine);
    }

    // compare.py on the outputs a program left in `box`: a fresh folder, the reference files
    // read-only, a copy of the declared outputs.
    // Returns compare.py's standard output.
    std::string check_stage(const CheckedTask& task_ref, const Generated& gen_ref, const fs::path& box, const fs::path& dir,
                            Verdict& v) {
        const CheckedTask* task = &task_ref;
        const Generated* gen = &gen_ref;
        std::error_code ec;
        const fs::path cmp = dir / "check";
        fs::create_directories(cmp / "data", ec);
        write_text(cmp / "compare.py", task->compare_py);
        // An output may be at most twice the task's largest generated file plus 1 MiB (the
        // reference outputs it is compared with are among those files), and never more than the
        // sandbox's largest file.
        const int64_t allowed = std::min(o.limits.file_mb * (int64_t{1} << 20), 2 * gen->largest_file + (int64_t{1} << 20));
        std::string refused;
        for (const std::string& out : gen->files.outputs) {
            const std::string why = copy_output(box, out, cmp, allowed);
            if (!why.empty() && why != "absent" && refused.empty()) refused = "output " + out + " not checked: " + why + "; ";
        }
        std::vector<SandboxMount> refs;
        for (const std::string& f : gen->produced)
            refs.push_back({(gen->dir / f).string(), std::string(kSandboxWork) + "/" + f, false});
        Ran k = run({o.python.executable, "-I", "-B", "compare.py"}, cmp, refs, o.compare_timeout_s, kRunLogCap,
                              true, false);
        if (!k.ok()) {
            if (!k.timed_out && missing_module(k.err))
                throw JudgeEnvironmentError("the judge's Python " + o.python.executable + " (" + o.python.origin +
                                            ") cannot run a task's compare.py: " + last_output_line(k.err) +
                                            "; set eval.python to a Python with the modules the tasks import");
            v.functional = false;
            v.status = Status::kCompareFailed;
            const std::string why = k.timed_out ? "" : last_output_line(k.err);
            v.error = refused + "compare.py: " + (why.empty() ? ending(k, o.compare_timeout_s) : why);
            return k.out;
        }
        const std::string word = verdict_line(k.out);
        if (word == "T") {
            v.functional = true;
            v.status = Status::kPass;
        } else if (word == "F") {
            v.functional = false;
            v.status = Status::kMismatch;
            const std::string first = k.out.substr(0, k.out.find('\n'));
            v.error = refused + "compare.py: F" + (first != "F" && !first.empty() ? " (" + first.substr(0, 200) + ")" : std::string());
        } else {
            v.functional = false;
            v.status = Status::kNoVerdict;
            v.error = refused + (word.empty() ? "compare.py printed no verdict" : "compare.py's last line is not T or F: " + word.substr(0, 200));
        }
        return k.out;
    }

    // KernelBench candidates (judge/kernelbench_judge.h): torch as the judge's Python has it and,
    // for emulation, the extensions' toolchain, made once per runner.
    struct KernelBenchTools {
        bool started = false, done = false;
        TorchBuildInfo torch;
        KernelBenchToolchain toolchain;
    } kb_tools;

    const KernelBenchTools& kernelbench_tools() {
        std::unique_lock<std::mutex> lock(mu);
        return made_once(
            lock, cv, kb_tools,
            [&] {
                KernelBenchTools made;
                made.torch = torch_build_info(o.python.executable);
                if (o.mode == JudgeMode::kEmulate && made.torch.error.empty() && emu_error.empty())
                    made.toolchain =
                        prepare_kernelbench_toolchain(o.cxx, emu_dir, emu_flags, made.torch, cache_root().string());
                return made;
            },
            [](KernelBenchTools& slot, KernelBenchTools&& made) {
                slot.torch = std::move(made.torch);
                slot.toolchain = std::move(made.toolchain);
            },
            [](KernelBenchTools& slot) { slot.torch.error = "the judge failed"; });
    }

    // A KernelBench candidate: static check, capture, build, generate, run, check.
    void judge_kernelbench(const std::string& source, const CheckedTask& task, const fs::path& dir, Verdict& v) {
        const KernelBenchProblemCheck& kb = *task.kernelbench;
        if (source.size() > kMaxSourceBytes) {
            v.status = Status::kCompileError;
            v.error = "the candidate is " + std::to_string(source.size() >> 20) + " MiB, more than the judge's " +
                      std::to_string(kMaxSourceBytes >> 20) + " MiB for one source";
            return;
        }
        KernelStaticCheckOptions sco;
        sco.precision = kb.precision;
        const KernelStaticCheck sc = kernel_static_check(source, sco);
        if (!sc.valid) {
            v.status = Status::kStaticCheck;
            v.error = "static check: " + sc.errors[0].check + ": " + sc.errors[0].message;
            if (sc.errors.size() > 1) v.error += " (and " + std::to_string(sc.errors.size() - 1) + " more)";
            return;
        }
        if (!sc.warnings.empty()) {
            v.note = "static check warnings:";
            for (const KernelStaticFinding& w : sc.warnings) v.note += " " + w.check + ";";
            v.note.pop_back();
        }
        if (o.mode == JudgeMode::kGpu) {
            v.status = Status::kUnjudged;
            v.error = "KernelBench candidates are judged with --judge emulate (correctness on the CPU) or --judge "
                      "compile; the GPU judge runs CUDABench programs only";
            return;
        }
        const KernelBenchTools& tools = kernelbench_tools();
        if (!tools.torch.error.empty())
            throw JudgeEnvironmentError("the judge's Python " + o.python.executable + " (" + o.python.origin +
                                        ") cannot judge KernelBench candidates: " + tools.torch.error +
                                        "; set eval.python to a Python with torch");
        const KernelBenchScripts scripts =
            kernelbench_scripts(kb, o.mode == JudgeMode::kEmulate ? o.kernelbench_max_input_elements : 0);
        CheckedTask staged = task;
        staged.gen_py = scripts.gen_py;
        staged.compare_py = scripts.compare_py;
        staged.reference_source = scripts.harness_py;
        const fs::path box = dir / "box";
        std::error_code ec;
        fs::create_directories(box / "data", ec);
        if (ec) throw RuntimeFailure("judge: cannot create " + box.string() + ": " + ec.message());
        write_text(box / "candidate.py", source);
        write_text(box / "harness.py", scripts.harness_py);
        const std::vector<std::string> python = {o.python.executable, "-I", "-B", "harness.py"};

        // capture: the candidate's module runs, load_inline recording its calls
        std::vector<std::string> argv = python;
        argv.push_back("capture");
        Ran c = run(argv, box, {}, o.compile_timeout_s, kRunLogCap, true, true);
        v.compile = report_of(c, false);
        if (!c.ok()) {
            v.status = c.timed_out ? Status::kCompileTimeout : Status::kCompileError;
            v.error = "candidate: " + (c.timed_out || v.compile.line.empty() ? ending(c, o.compile_timeout_s) : v.compile.line);
            return;
        }
        const fs::path calls_dir = dir / "calls";
        const std::string refused = copy_output(box, "build/calls.json", calls_dir, kMaxCallsBytes);
        std::string why;
        std::vector<KernelBenchCall> calls;
        if (refused.empty()) {
            std::ifstream in(calls_dir / "build/calls.json", std::ios::binary);
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            calls = parse_kernelbench_calls(text, &why);
        } else {
            why = "build/calls.json " + refused;
        }
        if (!why.empty()) {
            v.status = Status::kCompileError;
            v.error = "candidate: its load_inline calls cannot be read: " + why;
            return;
        }
        for (const KernelBenchCall& call : calls)
            for (const std::string* unit : {&call.main_cpp, &call.cuda_cu}) {
                const std::string path = kernelbench_foreign_include(*unit);
                if (path.empty()) continue;
                v.status = Status::kCompileError;
                v.error = "candidate: #include of " + path + ": a file outside its own sources (a build of it reads only "
                          "the toolkit's, torch's and the system's headers, by name)";
                return;
            }
        // Nothing the capture left in the folder (links above all) reaches the later stages: the
        // folder is made again from the judge's own files.
        remove_tree(box);
        fs::create_directories(box / "data", ec);
        if (ec) throw RuntimeFailure("judge: cannot create " + box.string() + ": " + ec.message());
        write_text(box / "candidate.py", source);
        write_text(box / "harness.py", scripts.harness_py);
        fs::create_directories(box / "build", ec);
        write_text(box / "build/calls.json", kernelbench_calls_json(calls));

        // build: each call's translation units
        for (size_t i = 0; i < calls.size(); ++i) {
            const std::string ext = "build/ext" + std::to_string(i);
            fs::create_directories(box / ext, ec);
            if (!build_extension(calls[i], ext, static_cast<int>(i), box, tools, v)) return;
        }
        v.compiled = true;
        if (o.mode == JudgeMode::kCompile) {
            v.status = Status::kCompiled;
            return;
        }

        // generate: the problem's reference run (once per problem)
        const Generated& gen = generate(staged);
        if (gen.status != Status::kPass) {
            v.status = gen.status;
            v.error = gen.error;
            return;
        }
        const std::string sizes = kernelbench_size_note(gen.out);
        if (!sizes.empty()) v.note = v.note.empty() ? sizes : sizes + "; " + v.note;

        // run: ModelNew on every trial's inputs, its "CUDA" tensors in the judge's device memory
        fs::copy_file(tools.toolchain.device_library, box / "build/device.so", fs::copy_options::overwrite_existing, ec);
        if (ec) throw RuntimeFailure("judge: cannot copy " + tools.toolchain.device_library + ": " + ec.message());
        argv = python;
        argv.push_back("run");
        const Ran ran = run(argv, box, input_mounts(gen), o.emulate_timeout_s, kRunLogCap, true, true);
        if (!read_run(ran, o.emulate_timeout_s, v)) {
            // Host code that touched device memory ended the run (kernelbench/device.cpp).
            const std::string key = "cuset-device-memory: ";
            const size_t at = ran.out.rfind(key);
            if (v.status == Status::kRunFailed && at != std::string::npos) {
                v.status = Status::kNotKernelOutput;
                v.error = ran.out.substr(at + key.size(), ran.out.find('\n', at) - at - key.size());
            }
            return;
        }

        // check: KernelBench's rule and the anti-hacking statuses
        const std::string out = check_stage(staged, gen, box, dir, v);
        if (v.status == Status::kPass) {
            // What passed on the CPU must also be what a GPU build accepts: the emulator built the
            // kernels as host code, where a kernel may call a host function.
            for (size_t i = 0; i < calls.size() && v.status == Status::kPass; ++i)
                if (!calls[i].cuda_cu.empty())
                    gpu_front_end(calls[i], "build/ext" + std::to_string(i), box, tools, v,
                                  "its CUDA sources pass on the emulator, but nvcc rejects them", /*host_unit=*/false);
            return;
        }
        if (v.status != Status::kMismatch) return;
        std::string detail;
        const std::optional<Status> named = status_from_name(kernelbench_checked_status(out, &detail));
        if (named && status_kind(*named) == StatusKind::kRule) v.status = *named;
        if (!detail.empty()) v.error = detail;
    }

    // Builds one load_inline call in `box`/`ext`: under compile, its objects as torch's build
    // makes them (nvcc for cuda.cu, the host compiler for main.cpp); under emulation, one CPU
    // extension, build/extN/cuset_extN.so. False when it does not build (`v` says why).
    bool build_extension(const KernelBenchCall& call, const std::string& ext, int index, const fs::path& box,
                         const KernelBenchTools& tools, Verdict& v) {
        const std::string name = "cuset_ext" + std::to_string(index);
        write_text(box / ext / "main.cpp", "#define TORCH_EXTENSION_NAME " + name + "\n" + call.main_cpp);
        auto failed = [&](const Ran& b, const std::string& tool) {
            v.compile = report_of(b, true);
            v.status = b.timed_out ? Status::kCompileTimeout : Status::kCompileError;
            v.error = v.compile.line.empty() || b.timed_out ? tool + " " + ending(b, kExtensionBuildTimeout_s) : v.compile.line;
            return false;
        };
        if (o.mode == JudgeMode::kCompile) {
            std::vector<std::string> argv = {o.cxx};
            for (const std::string& f : kernelbench_cxx_flags(tools.torch)) argv.push_back(f);
            argv.insert(argv.end(), {"-c", ext + "/main.cpp", "-o", ext + "/main.o"});
            Ran b = run(argv, box, {}, kExtensionBuildTimeout_s, kCompileLogCap, false, true);
            if (!b.ok()) return failed(b, "g++");
            if (call.cuda_cu.empty()) return true;
            write_text(box / ext / "cuda.cu", call.cuda_cu);
            argv = {o.nvcc};
            for (const std::string& f : kernelbench_nvcc_flags(tools.torch)) argv.push_back(f);
            argv.insert(argv.end(), {"-c", ext + "/cuda.cu", "-o", ext + "/cuda.o"});
            b = run(argv, box, {}, kExtensionBuildTimeout_s, kCompileLogCap, false, true);
            return b.ok() ? true : failed(b, "nvcc");
        }
        if (!emu_error.empty() || !tools.toolchain.error.empty()) {
            v.status = Status::kUnjudged;
            v.error = "emulator: " + (emu_error.empty() ? tools.toolchain.error : emu_error);
            return false;
        }
        std::vector<std::string> sources = {ext + "/main.cpp"};
        if (!call.cuda_cu.empty()) {
            try {
                const auto t0 = std::chrono::steady_clock::now();
                write_text(box / ext / "cuda.cpp", emu::transform_program(call.cuda_cu, [&] {
                               return signals_stop_requested() || seconds_since(t0) > kEmulatorBuildTimeout_s;
                           }));
            } catch (const std::exception& e) {
                v.status = Status::kUnjudged;
                v.error = std::string("emulator: cannot rewrite the candidate's CUDA sources: ") + e.what();
                return false;
            }
            sources.push_back(ext + "/cuda.cpp");
        }
        std::vector<std::string> argv = {o.cxx};
        argv.insert(argv.end(), tools.toolchain.flags.begin(), tools.toolchain.flags.end());
        argv.push_back("-shared");
        argv.insert(argv.end(), sources.begin(), sources.end());
        argv.insert(argv.end(), {"-o", ext + "/" + name + ".so"});
        argv.insert(argv.end(), tools.toolchain.link.begin(), tools.toolchain.link.end());
        // A content cache of built extensions (<judge cache>-extensions/, beside the judge's
        // cache and outside what the sandbox shows: no candidate can load another's): the same
        // units built by the same compilers with the same command line against the same toolchain
        // folder (its name hashes torch, the emulator's runtime and the stage files) are the same
        // library, so a candidate judged again (a repeated sample, another run, a test) is not
        // built again. Only a build that succeeded is kept; the compiler, not the candidate,
        // wrote it (nothing of the candidate runs while it builds).
        Hasher key;
        key.add("cuset-emulated-extension-1").add(tools.toolchain.dir);
        std::error_code ec;
        key.add(std::to_string(fs::file_size(o.cxx, ec))).add(std::to_string(fs::file_size(o.nvcc, ec)));
        for (const std::string& a : argv) key.add(torch_neutral(a, tools.torch));
        for (const std::string& src : sources) {
            std::ifstream in(box / src, std::ios::binary);
            key.add(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
        }
        const fs::path cached = fs::path(cache_root().string() + "-extensions") / (key.hex() + ".so");
        const fs::path built = box / ext / (name + ".so");
        if (fs::copy_file(cached, built, fs::copy_options::overwrite_existing, ec) && !ec) {
            fs::last_write_time(cached, fs::file_time_type::clock::now(), ec);  // the newest are kept
            return true;
        }
        Ran b = run(argv, box, {}, kExtensionBuildTimeout_s, kCompileLogCap, false, true);
        if (b.ok()) {
            keep_in_cache(built, cached);
            return true;
        }
        const std::string line = first_error_line(b.out);
        if (!b.timed_out && line.find("#error") != std::string::npos) return failed(b, "g++");
        v.compile = report_of(b, true);
        // Whose failure it is, the GPU build's front ends decide: the candidate's (compile-error)
        // when they reject the sources too, else the emulator's (unjudged).
        if (!gpu_front_end(call, ext, box, tools, v, "the extension does not build", /*host_unit=*/true)) return false;
        v.status = Status::kUnjudged;
        v.error = "emulator: the extension does not build: " + (line.empty() ? ending(b, kExtensionBuildTimeout_s) : line);
        return false;
    }

    // Copies a file the judge made into its cache as `entry`, whole or not at all (a copy under a
    // temporary name, renamed), then keeps the folder to its newest kMaxCachedFiles entries; a
    // cache that cannot be written is only slower.
    static void keep_in_cache(const fs::path& file, const fs::path& entry) {
        std::error_code ec;
        const fs::path dir = entry.parent_path();
        fs::create_directories(dir, ec);
        const fs::path part = entry.string() + ".part" + std::to_string(::getpid()) + "-" +
                              std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
        if (fs::copy_file(file, part, fs::copy_options::overwrite_existing, ec) && !ec) fs::rename(part, entry, ec);
        if (ec) fs::remove(part, ec);
        std::vector<std::pair<fs::file_time_type, fs::path>> entries;
        for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
            entries.emplace_back(it->last_write_time(ec), it->path());
        if (entries.size() <= kMaxCachedFiles) return;
        std::sort(entries.begin(), entries.end());
        for (size_t i = 0; i + kMaxCachedFiles < entries.size(); ++i) fs::remove(entries[i].second, ec);
    }

    // The front ends of a GPU build over a load_inline call, contained: nvcc over cuda.cu (nvcc
    // --ptx, its device pass: the front end over the whole unit, then the device code, so a
    // kernel that calls a host function, ATen or the standard library outside what CUDA allows
    // is refused) and, with `host_unit`, the host compiler over main.cpp against torch's real
    // headers (-fsyntax-only). True when they accept the call; else `v` becomes the candidate's
    // compile-error (or compile-timeout) saying `what` and the first error.
    // nvcc reads cuda.cu first without its includes of <torch/extension.h> (load_inline's own
    // <torch/types.h> stays): about 9 s of CPU instead of 23. Taking headers away takes
    // declarations away, so what nvcc accepts without them it accepts with them; what it
    // rejects is read again whole, and that answer stands.
    bool gpu_front_end(const KernelBenchCall& call, const std::string& ext, const fs::path& box,
                       const KernelBenchTools& tools, Verdict& v, const std::string& what, bool host_unit) {
        const std::vector<std::string> nvcc_mode = {"--ptx", "-o", ext + "/cuda.ptx"};
        if (!call.cuda_cu.empty()) {
            const std::string light = without_torch_extension_h(call.cuda_cu);
            std::string rejected;
            if (light == call.cuda_cu ||
                !front_end(light, ext + "/cuda.cu", o.nvcc, kernelbench_nvcc_flags(tools.torch), tools.torch, nvcc_mode, box, v, what,
                           &rejected) ||
                !rejected.empty()) {
                if (v.status == Status::kCompileTimeout) return false;
                if (!front_end(call.cuda_cu, ext + "/cuda.cu", o.nvcc, kernelbench_nvcc_flags(tools.torch), tools.torch, nvcc_mode, box,
                               v, what, &rejected))
                    return false;
                if (!rejected.empty()) return reject(v, what, "nvcc", rejected);
            }
        }
        if (host_unit && !call.main_cpp.empty()) {
            std::string rejected;
            if (!front_end("#define TORCH_EXTENSION_NAME cuset_front_end\n" + call.main_cpp, ext + "/main.cpp", o.cxx,
                           kernelbench_cxx_flags(tools.torch), tools.torch, {"-fsyntax-only"}, box, v, what, &rejected))
                return false;
            if (!rejected.empty()) return reject(v, what, fs::path(o.cxx).filename().string(), rejected);
        }
        return true;
    }

    static bool reject(Verdict& v, const std::string& what, const std::string& tool, const std::string& error) {
        v.status = Status::kCompileError;
        v.error = what + ": " + tool + ": " + error;
        return false;
    }

    // `text` without its lines that include <torch/extension.h> (or "torch/extension.h"); the
    // newlines stay, so nvcc's line numbers are the candidate's.
    static std::string without_torch_extension_h(const std::string& text) {
        std::string out;
        size_t from = 0;
        for (const KernelBenchInclude& inc : kernelbench_includes(text)) {
            if (inc.path != "torch/extension.h") continue;
            out.append(text, from, inc.begin - from);
            from = inc.end;
        }
        return out.append(text, from, std::string::npos);
    }

    // One compiler over one text at `file` in `box`, contained: `*rejected` is "" when it accepts
    // the text, else its first error. False only on a timeout (then `v` is the candidate's
    // compile-timeout). Each answer is kept per text, flags and compiler in the judge's cache
    // (gpu-front-end/), since a run's candidates repeat; a kill without a message is not kept.
    bool front_end(const std::string& text, const std::string& file, const std::string& tool,
                   const std::vector<std::string>& flags, const TorchBuildInfo& torch, const std::vector<std::string>& mode,
                   const fs::path& box, Verdict& v, const std::string& what, std::string* rejected) {
        rejected->clear();
        std::error_code ec;
        Hasher key;
        key.add(text).add(tool).add(std::to_string(fs::file_size(tool, ec)));
        for (const std::string& f : flags) key.add(torch_neutral(f, torch));
        for (const std::string& m : mode) key.add(m);
        const fs::path cache = cache_root() / "gpu-front-end";
        const fs::path entry = cache / key.hex();
        if (std::ifstream in{entry, std::ios::binary}) {
            rejected->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
            return true;
        }
        write_text(box / file, text);
        std::vector<std::string> argv = {tool};
        argv.insert(argv.end(), flags.begin(), flags.end());
        argv.push_back(file);
        argv.insert(argv.end(), mode.begin(), mode.end());
        const Ran b = run(argv, box, {}, kExtensionBuildTimeout_s, kCompileLogCap, false, true);
        if (b.timed_out) {
            v.compile = report_of(b, true);
            v.status = Status::kCompileTimeout;
            v.error = what + ": " + fs::path(tool).filename().string() + " " + ending(b, kExtensionBuildTimeout_s);
            return false;
        }
        const std::string line = b.ok() ? "" : first_error_line(b.out);
        if (!b.ok()) *rejected = line.empty() ? ending(b, kExtensionBuildTimeout_s) : line;
        if (b.ok() || !line.empty()) {
            fs::create_directories(cache, ec);
            atomic_write(entry.string(), *rejected, "the judge's cache");
        }
        return true;
    }
};

Runner::Runner(RunnerOptions opts) : opts_(std::move(opts)), impl_(std::make_unique<Impl>(opts_)) {
    if (opts_.work_dir.empty()) throw RuntimeFailure("judge: no work folder given");
    std::error_code ec;
    fs::create_directories(opts_.work_dir, ec);
    opts_.work_dir = fs::absolute(opts_.work_dir).lexically_normal().string();
    if (opts_.cxx.find('/') == std::string::npos) {
        const std::string cxx = find_program(opts_.cxx);
        if (!cxx.empty()) opts_.cxx = cxx;
    }
    impl_->cuda_include = cuda_root_of(opts_.nvcc) + "/include";
    if (opts_.contain) {
        const std::string why = Sandbox::unavailable_reason();
        if (!why.empty())
            throw UsageError("the judge cannot contain the programs it runs (" + why + "): allow unprivileged user "
                             "namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
                             "kernel.apparmor_restrict_unprivileged_userns=0), or judge without containment, at "
                             "your own risk, with --set eval.sandbox=off");
        SandboxOptions so;
        so.limits = opts_.limits;
        so.gpu = opts_.mode == JudgeMode::kGpu;
        so.read_only = {cuda_root_of(opts_.nvcc)};
        for (const std::string& r : opts_.python.roots) so.read_only.push_back(r);
        if (opts_.mode == JudgeMode::kEmulate)
            so.read_only.push_back(impl_->cache_root().string());
        if (opts_.mode == JudgeMode::kEmulate) fs::create_directories(so.read_only.back(), ec);
        impl_->sandbox = std::make_unique<Sandbox>(so);
        // Once per process (and again if it changes): which bounds hold here, memory's above all.
        static std::mutex logged_mu;
        static std::string logged;
        const std::string what = impl_->sandbox->describe();
        std::lock_guard<std::mutex> lock(logged_mu);
        if (what != logged) log_info("judge: containment: %s", (logged = what).c_str());
    }
    if (opts_.mode == JudgeMode::kEmulate) {
        impl_->prepare_emulator();
        if (!impl_->emu_error.empty()) impl_->notice = "emulation unavailable: " + impl_->emu_error + "; compiled programs are unjudged";
    }
    if (opts_.mode == JudgeMode::kCompile)
        impl_->notice = "no GPU and no emulation: gen.py, the programs and compare.py were not run; every figure is compile-only";
}

Runner::~Runner() {
    if (opts_.keep_work) return;
    for (auto& [key, g] : impl_->generated) remove_tree(g.dir);
}

const std::string& Runner::notice() const { return impl_->notice; }

std::string Runner::containment() const { return impl_->sandbox ? impl_->sandbox->describe() : "off (eval.sandbox)"; }

Generation Runner::generate_only(const CheckedTask& task, const std::string& name) {
    const fs::path dir = fs::path(opts_.work_dir) / name;
    struct Remove {
        const fs::path& dir;
        bool keep;
        ~Remove() {
            if (!keep) remove_tree(dir);
        }
    } remove{dir, opts_.keep_work};
    Generated made = impl_->run_generator(task, dir);
    Generation g;
    g.status = made.status;
    g.error = utf8_sanitize(made.error);
    g.out = utf8_sanitize(made.out);
    g.files = std::move(made.files);
    for (const std::string& f : made.produced) {
        std::error_code ec;
        const uintmax_t n = fs::file_size(dir / f, ec);
        g.produced.push_back(f);
        g.sizes.push_back(ec ? -1 : static_cast<int64_t>(n));
    }
    return g;
}

Verdict Runner::judge_files(const CheckedTask& task, const std::vector<std::pair<std::string, std::string>>& outputs,
                            const std::string& name) {
    const auto t0 = std::chrono::steady_clock::now();
    Verdict v;
    v.emulated = opts_.mode == JudgeMode::kEmulate;
    v.containment = containment();
    const fs::path dir = fs::path(opts_.work_dir) / name;
    remove_tree(dir);
    struct Remove {
        const fs::path& dir;
        bool keep;
        ~Remove() {
            if (!keep) remove_tree(dir);
        }
    } remove{dir, opts_.keep_work};
    Generated g = impl_->run_generator(task, dir / "gen");
    g.dir = dir / "gen";
    if (g.status != Status::kPass) {
        v.status = g.status;
        v.error = g.error;
    } else {
        const fs::path box = dir / "box";
        std::error_code ec;
        fs::create_directories(box / "data", ec);
        if (ec) throw RuntimeFailure("judge: cannot create " + box.string() + ": " + ec.message());
        for (const auto& [from, to] : outputs) {
            // Only a regular file gen.py wrote (never through a link it left).
            if (!std::binary_search(g.produced.begin(), g.produced.end(), from)) continue;
            fs::create_directories((box / to).parent_path(), ec);
            fs::copy_file(g.dir / from, box / to, fs::copy_options::overwrite_existing, ec);
        }
        v.compiled = true;
        v.ran = true;
        (void)impl_->check_stage(task, g, box, dir, v);
    }
    v.seconds = seconds_since(t0);
    make_texts_valid(v);
    return v;
}

void Runner::expect(const std::string& key, int64_t programs) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    Generated& g = impl_->generated[key];
    g.pending = std::max<int64_t>(g.pending, 0) + programs;
}

Verdict Runner::judge(const std::optional<std::string>& source, const CheckedTask* task, const std::string& name) {
    const auto t0 = std::chrono::steady_clock::now();
    Verdict v;
    v.emulated = opts_.mode == JudgeMode::kEmulate;
    v.containment = containment();
    if (!source) {
        v.status = Status::kNoCode;
        v.error = "no fenced program in the answer";
    } else {
        const fs::path dir = fs::path(opts_.work_dir) / name;
        remove_tree(dir);
        try {
            impl_->judge_in(*source, task, dir, v);
        } catch (...) {
            if (!opts_.keep_work) remove_tree(dir);
            if (task) impl_->done_with(*task);
            throw;
        }
        if (!opts_.keep_work) remove_tree(dir);
        // Only a program counts against expect(): an answer without one never used the task's
        // gen.py folder, and counting it would free the folder under a program still judged.
        if (task) impl_->done_with(*task);
    }
    v.seconds = seconds_since(t0);
    make_texts_valid(v);
    return v;
}

}  // namespace cuset::judge
