// A KernelBench candidate in the judge (judge/runner_impl.h): static check, capture, build, run,
// check, and the front ends of a GPU build.
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

const Runner::Impl::KernelBenchTools& Runner::Impl::kernelbench_tools() {
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

bool Runner::Impl::kernelbench_admits(const std::string& source, const KernelBenchProblemCheck& kb, Verdict& v) const {
    if (source.size() > kMaxSourceBytes) {
        v.status = Status::kCompileError;
        v.error = "the candidate is " + std::to_string(source.size() >> 20) + " MiB, more than the judge's " +
                  std::to_string(kMaxSourceBytes >> 20) + " MiB for one source";
        return false;
    }
    KernelStaticCheckOptions sco;
    sco.precision = kb.precision;
    const KernelStaticCheck sc = kernel_static_check(source, sco);
    if (!sc.valid) {
        v.status = Status::kStaticCheck;
        v.error = "static check: " + sc.errors[0].check + ": " + sc.errors[0].message;
        if (sc.errors.size() > 1) v.error += " (and " + std::to_string(sc.errors.size() - 1) + " more)";
        return false;
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
        return false;
    }
    return true;
}

bool Runner::Impl::kernelbench_capture(const std::string& source, const std::string& harness_py, const fs::path& box,
                                       const fs::path& dir, Verdict& v, std::vector<KernelBenchCall>* calls) {
    std::error_code ec;
    fs::create_directories(box / "data", ec);
    if (ec) throw RuntimeFailure("judge: cannot create " + box.string() + ": " + ec.message());
    write_text(box / "candidate.py", source);
    write_text(box / "harness.py", harness_py);
    const Ran c = run({o.python.executable, "-I", "-B", "harness.py", "capture"}, box, {}, o.compile_timeout_s, kRunLogCap,
                      true, true);
    v.compile = report_of(c, false);
    if (!c.ok()) {
        v.status = c.timed_out ? Status::kCompileTimeout : Status::kCompileError;
        v.error = "candidate: " + (c.timed_out || v.compile.line.empty() ? ending(c, o.compile_timeout_s) : v.compile.line);
        return false;
    }
    const fs::path calls_dir = dir / "calls";
    const std::string refused = copy_output(box, "build/calls.json", calls_dir, kMaxCallsBytes);
    std::string why;
    if (refused.empty()) {
        std::ifstream in(calls_dir / "build/calls.json", std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        *calls = parse_kernelbench_calls(text, &why);
    } else {
        why = "build/calls.json " + refused;
    }
    if (!why.empty()) {
        v.status = Status::kCompileError;
        v.error = "candidate: its load_inline calls cannot be read: " + why;
        return false;
    }
    for (const KernelBenchCall& call : *calls)
        for (const std::string* unit : {&call.main_cpp, &call.cuda_cu}) {
            const std::string path = kernelbench_foreign_include(*unit);
            if (path.empty()) continue;
            v.status = Status::kCompileError;
            v.error = "candidate: #include of " + path + ": a file outside its own sources (a build of it reads only "
                      "the toolkit's, torch's and the system's headers, by name)";
            return false;
        }
    // Nothing the capture left in the folder (links above all) reaches the later stages: the
    // folder is made again from the judge's own files.
    remove_tree(box);
    fs::create_directories(box / "data", ec);
    if (ec) throw RuntimeFailure("judge: cannot create " + box.string() + ": " + ec.message());
    write_text(box / "candidate.py", source);
    write_text(box / "harness.py", harness_py);
    fs::create_directories(box / "build", ec);
    write_text(box / "build/calls.json", kernelbench_calls_json(*calls));
    return true;
}

void Runner::Impl::kernelbench_check(const CheckedTask& staged, const Generated& gen, const std::vector<KernelBenchCall>& calls,
                                     const KernelBenchTools& tools, const fs::path& box, const fs::path& dir, Verdict& v) {
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

void Runner::Impl::judge_kernelbench(const std::string& source, const CheckedTask& task, const fs::path& dir, Verdict& v) {
    const KernelBenchProblemCheck& kb = *task.kernelbench;
    if (!kernelbench_admits(source, kb, v)) return;
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

    // capture: the candidate's module runs, load_inline recording its calls
    std::vector<KernelBenchCall> calls;
    if (!kernelbench_capture(source, scripts.harness_py, box, dir, v, &calls)) return;

    // build: each call's translation units
    std::error_code ec;
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
    const Ran ran = run({o.python.executable, "-I", "-B", "harness.py", "run"}, box, input_mounts(gen), o.emulate_timeout_s,
                        kRunLogCap, true, true);
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
    kernelbench_check(staged, gen, calls, tools, box, dir, v);
}

bool Runner::Impl::build_extension(const KernelBenchCall& call, const std::string& ext, int index, const fs::path& box,
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

void Runner::Impl::keep_in_cache(const fs::path& file, const fs::path& entry) {
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

bool Runner::Impl::gpu_front_end(const KernelBenchCall& call, const std::string& ext, const fs::path& box,
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

bool Runner::Impl::reject(Verdict& v, const std::string& what, const std::string& tool, const std::string& error) {
    v.status = Status::kCompileError;
    v.error = what + ": " + tool + ": " + error;
    return false;
}

std::string Runner::Impl::without_torch_extension_h(const std::string& text) {
    std::string out;
    size_t from = 0;
    for (const KernelBenchInclude& inc : kernelbench_includes(text)) {
        if (inc.path != "torch/extension.h") continue;
        out.append(text, from, inc.begin - from);
        from = inc.end;
    }
    return out.append(text, from, std::string::npos);
}

bool Runner::Impl::front_end(const std::string& text, const std::string& file, const std::string& tool,
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

}  // namespace cuset::judge
