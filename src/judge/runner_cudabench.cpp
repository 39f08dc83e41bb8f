// A CUDABench program in the judge (judge/runner_impl.h): its build, its run, compare.py over its
// outputs, and its speed-up over the reference solution.
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
#include "runner_impl.h"

namespace cuset::judge {

std::string Runner::Impl::build_program(const std::string& source, const fs::path& box, Verdict& v, double* run_timeout) {
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

void Runner::Impl::judge_in(const std::string& source, const CheckedTask* task, const fs::path& dir, Verdict& v) {
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

bool Runner::Impl::read_run(const Ran& r, double timeout_s, Verdict& v) const {
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

bool Runner::Impl::emulator_ran_out(const Ran& r, double timeout_s) const {
    if (r.over_disk || r.usage.oom_killed || r.killed) return false;
    if (r.timed_out) return r.cpu_seconds() >= kBusyCpuShare * timeout_s;
    if (r.signal == SIGXCPU) return r.cpu_seconds() >= std::max(1.0, o.limits.cpu_s) - 1.0;
    return false;
}

std::vector<SandboxMount> Runner::Impl::input_mounts(const Generated& gen) {
    std::vector<SandboxMount> inputs;
    for (const std::string& f : gen.files.inputs)
        inputs.push_back({(gen.dir / f).string(), std::string(kSandboxWork) + "/" + f, false});
    return inputs;
}

std::optional<double> Runner::Impl::time_runs(const fs::path& binary, const Generated& gen, const fs::path& dir, double timeout_s,
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

std::optional<double> Runner::Impl::reference_time(const CheckedTask& task, const Generated& gen, std::string* why) {
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

Runner::Impl::ReferenceTiming Runner::Impl::time_reference(const CheckedTask& task, const Generated& gen) {
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

void Runner::Impl::measure_speedup(const CheckedTask& task, const Generated& gen, const fs::path& binary, const fs::path& dir,
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

std::string Runner::Impl::check_stage(const CheckedTask& task_ref, const Generated& gen_ref, const fs::path& box, const fs::path& dir,
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

}  // namespace cuset::judge
