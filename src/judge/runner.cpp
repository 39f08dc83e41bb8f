// Compiling, running and checking one untrusted program, every command contained (judge/runner.h).
#include "cuset/judge/runner.h"
#include "runner_impl.h"

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


namespace cuset::judge {

namespace runner_detail {

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

bool missing_module(const std::string& err) {
    return err.find("ModuleNotFoundError") != std::string::npos || err.find("ImportError:") != std::string::npos;
}

bool wants_cuda(const std::string& err) {
    for (const char* m : {"Found no NVIDIA driver", "Torch not compiled with CUDA enabled", "No CUDA GPUs are available",
                          "CUDA driver initialization failed"})
        if (err.find(m) != std::string::npos) return true;
    return false;
}

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

void remove_tree(const fs::path& dir) {
    const std::string error = cuset::remove_tree(dir.string());
    if (!error.empty()) log_warn("judge: %s", error.c_str());
}

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

void make_texts_valid(Verdict& v) {
    for (std::string* t : {&v.error, &v.compile.line, &v.run.line, &v.speedup_note, &v.containment, &v.note})
        if (!utf8_valid(*t)) *t = utf8_sanitize(*t);
}

std::string verdict_line(const std::string& out) {
    size_t e = out.find_last_not_of(" \t\r\n");
    if (e == std::string::npos) return "";
    size_t b = out.find_last_of('\n', e);
    std::string line = out.substr(b == std::string::npos ? 0 : b + 1, e + 1 - (b == std::string::npos ? 0 : b + 1));
    size_t lb = line.find_first_not_of(" \t\r");
    return lb == std::string::npos ? "" : line.substr(lb);
}

}  // namespace runner_detail


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

Ran Runner::Impl::run(std::vector<std::string> argv, const fs::path& work, const std::vector<SandboxMount>& files,
                  double timeout_s, size_t cap, bool keep_tail, bool merge, double poll_s) {
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

void Runner::Impl::prepare_emulator() {
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

Generated& Runner::Impl::generate(const CheckedTask& task) {
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

Generated Runner::Impl::run_generator(const CheckedTask& task, const fs::path& dir) {
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

void Runner::Impl::done_with(const CheckedTask& task) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = generated.find(task.key);
    if (it == generated.end() || it->second.pending < 0) return;
    if (--it->second.pending == 0 && !o.keep_work) {
        remove_tree(it->second.dir);
        generated.erase(it);
    }
}


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
