// The judge's rooms (judge/runner.h): what they share. runner.cpp holds the contained run, the
// emulator's runtime, the tasks' generated files and the Runner's calls; runner_cudabench.cpp a
// CUDABench program's stages (build, run, compare, speed-up); runner_kernelbench.cpp a KernelBench
// candidate's (static check, capture, build, run, check). Internal to the judge library.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cuset/core/process.h"
#include "cuset/judge/cgroup.h"
#include "cuset/judge/kernelbench_judge.h"
#include "cuset/judge/runner.h"
#include "cuset/judge/sandbox.h"
#include "cuset/judge/task_files.h"

namespace cuset::judge {

namespace fs = std::filesystem;

namespace runner_detail {

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

void write_text(const fs::path& p, const std::string& text);

std::string seconds_text(double s);

std::string ending(const Ran& r, double timeout_s);

StageReport report_of(const ProcessResult& r, bool compiler);

// A script's failure that is the judge's environment, not the task's or the program's.
bool missing_module(const std::string& err);

// A gen.py that failed for want of a CUDA device (torch's messages without a driver, a GPU or a
// CUDA build).
bool wants_cuda(const std::string& err);

// Runs gen.py (python -c, in its folder) with every CUDA device torch is asked for replaced by the
// CPU: tensors made or moved to "cuda", "cuda:N" or torch.device("cuda") stay on the CPU, and
// Tensor.cuda() is the tensor itself. For the emulating judge, which has no GPU, on a gen.py that
// needs one (CUDABench's FIR_Filtering). Its random inputs are then the CPU generator's, not the
// GPU's (torch's two generators differ), and its reference outputs are computed from those inputs,
// so the task stays consistent; its numbers are not the GPU run's.
extern const char* const kCudaOnCpu;

// Removes a folder a sandboxed program wrote, however it is shaped (core/file_tree.h); a failure is
// reported in the log with the folder's name.
void remove_tree(const fs::path& dir);

// The regular files under `dir` (relative paths), not following links; `skip` left out.
std::vector<std::string> regular_files(const fs::path& dir, const std::string& skip);

// Copies `rel` from a folder a program wrote to `to_dir`, never following a link and only a
// regular file of at most `max_bytes`: nothing the program placed can make the judge read
// elsewhere or copy more than the task allows. Holes stay holes (a sparse file is not read as
// zeros). Returns "" when copied, else why not ("absent", "not a regular file", "N bytes, more
// than the task allows (M)").
std::string copy_output(const fs::path& from_dir, const std::string& rel, const fs::path& to_dir, int64_t max_bytes);

// Every text of a verdict comes from a program or a tool reading it: kept as valid UTF-8, so
// that no writer of the verdict (journal, eval.json, rewards, pages) can fail on its bytes.
void make_texts_valid(Verdict& v);

// The last non-empty line of a checker's standard output.
std::string verdict_line(const std::string& out);

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

}  // namespace runner_detail

using namespace runner_detail;

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
            double timeout_s, size_t cap, bool keep_tail, bool merge, double poll_s = 0.05);

    // Builds the emulator's runtime once per machine into the cache (outside any sandbox: it is
    // the project's own code): its headers, a precompiled header and the object.
    void prepare_emulator();

    // The task's generated files: made by the first program that needs them, shared by the rest.
    Generated& generate(const CheckedTask& task);

    Generated run_generator(const CheckedTask& task, const fs::path& dir);

    void done_with(const CheckedTask& task);

    // Compiles `source` in `box` with nvcc and, for emulation, builds it for the emulator: the
    // program to run ("" when it does not build: `v` says why) and its run timeout.
    std::string build_program(const std::string& source, const fs::path& box, Verdict& v, double* run_timeout);

    void judge_in(const std::string& source, const CheckedTask* task, const fs::path& dir, Verdict& v);

    // What a finished run says before any check, in v: false when that is the verdict (the
    // emulator ran out of time: unjudged; it failed: run-failed or run-timeout, with its CPU time
    // where the clock or the CPU limit stopped it), true when it exited 0.
    bool read_run(const Ran& r, double timeout_s, Verdict& v) const;

    // Whether an emulated run ended for the emulator's own limit, measured by the judge: it used
    // the CPU to the time limit (kBusyCpuShare of it: a program that slept, stopped itself or
    // waited on a child did not), or it was sent SIGXCPU with its CPU time at RLIMIT_CPU (a
    // program that raised SIGXCPU itself was not). Everything else a program does to itself is
    // its own failure, judged as such.
    bool emulator_ran_out(const Ran& r, double timeout_s) const;

    // The task's input files, bound read-only beside a program (data/...).
    static std::vector<SandboxMount> input_mounts(const Generated& gen);

    // The median wall time of `binary`'s timed runs (judge/timing.h), each in a fresh folder
    // `dir`/timing with a copy of the binary and the task's inputs (nothing a run leaves reaches
    // the next); nullopt when a run fails (`why` says how). One timing at a time in this runner.
    std::optional<double> time_runs(const fs::path& binary, const Generated& gen, const fs::path& dir, double timeout_s,
                                    std::string* why);

    // The reference solution's median run time, built and timed once per task in this runner.
    std::optional<double> reference_time(const CheckedTask& task, const Generated& gen, std::string* why);

    ReferenceTiming time_reference(const CheckedTask& task, const Generated& gen);

    void measure_speedup(const CheckedTask& task, const Generated& gen, const fs::path& binary, const fs::path& dir,
                         double timeout_s, Verdict& v);

    // compare.py on the outputs a program left in `box`: a fresh folder, the reference files
    // read-only, a copy of the declared outputs.
    // Returns compare.py's standard output.
    std::string check_stage(const CheckedTask& task_ref, const Generated& gen_ref, const fs::path& box, const fs::path& dir,
                            Verdict& v);

    // KernelBench candidates (judge/kernelbench_judge.h): torch as the judge's Python has it and,
    // for emulation, the extensions' toolchain, made once per runner.
    struct KernelBenchTools {
        bool started = false, done = false;
        TorchBuildInfo torch;
        KernelBenchToolchain toolchain;
    } kb_tools;

    const KernelBenchTools& kernelbench_tools();

    // A KernelBench candidate: static check, capture, build, generate, run, check.
    void judge_kernelbench(const std::string& source, const CheckedTask& task, const fs::path& dir, Verdict& v);
    // Before anything runs: the source's size, the static check (its warnings become the note),
    // the judge's mode. False when that is the verdict.
    bool kernelbench_admits(const std::string& source, const KernelBenchProblemCheck& kb, Verdict& v) const;
    // The candidate's module run in `box` with load_inline recording its calls (read into `calls`),
    // then the folder made again from the judge's own files and those calls. False when that is
    // the verdict.
    bool kernelbench_capture(const std::string& source, const std::string& harness_py, const fs::path& box,
                             const fs::path& dir, Verdict& v, std::vector<KernelBenchCall>* calls);
    // KernelBench's rule on the run's outputs, the anti-hacking statuses, and for a pass the nvcc
    // front end over each call's CUDA sources.
    void kernelbench_check(const CheckedTask& staged, const Generated& gen, const std::vector<KernelBenchCall>& calls,
                           const KernelBenchTools& tools, const fs::path& box, const fs::path& dir, Verdict& v);

    // Builds one load_inline call in `box`/`ext`: under compile, its objects as torch's build
    // makes them (nvcc for cuda.cu, the host compiler for main.cpp); under emulation, one CPU
    // extension, build/extN/cuset_extN.so. False when it does not build (`v` says why).
    bool build_extension(const KernelBenchCall& call, const std::string& ext, int index, const fs::path& box,
                         const KernelBenchTools& tools, Verdict& v);

    // Copies a file the judge made into its cache as `entry`, whole or not at all (a copy under a
    // temporary name, renamed), then keeps the folder to its newest kMaxCachedFiles entries; a
    // cache that cannot be written is only slower.
    static void keep_in_cache(const fs::path& file, const fs::path& entry);

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
                       const KernelBenchTools& tools, Verdict& v, const std::string& what, bool host_unit);

    static bool reject(Verdict& v, const std::string& what, const std::string& tool, const std::string& error);

    // `text` without its lines that include <torch/extension.h> (or "torch/extension.h"); the
    // newlines stay, so nvcc's line numbers are the candidate's.
    static std::string without_torch_extension_h(const std::string& text);

    // One compiler over one text at `file` in `box`, contained: `*rejected` is "" when it accepts
    // the text, else its first error. False only on a timeout (then `v` is the candidate's
    // compile-timeout). Each answer is kept per text, flags and compiler in the judge's cache
    // (gpu-front-end/), since a run's candidates repeat; a kill without a message is not kept.
    bool front_end(const std::string& text, const std::string& file, const std::string& tool,
                   const std::vector<std::string>& flags, const TorchBuildInfo& torch, const std::vector<std::string>& mode,
                   const fs::path& box, Verdict& v, const std::string& what, std::string* rejected);
};

}  // namespace cuset::judge
