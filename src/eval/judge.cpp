// CUDABench's evaluation of a results file, done by cuset (eval/judge.h).
#include "cuset/eval/judge.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "cuset/core/error.h"
#include "cuset/core/process.h"
#include "cuset/core/signals.h"
#include "cuset/emu/runtime.h"
#include "cuset/emu/transform.h"

namespace fs = std::filesystem;

namespace cuset::eval {

namespace {

constexpr size_t kOutputCap = 256 * 1024;

void write_text(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw RuntimeFailure("cannot write '" + p.string() + "'");
}

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string clip(std::string s, size_t n = 240) {
    if (s.size() > n) s = s.substr(0, n) + "...";
    return s;
}

std::string last_line(const std::string& text) {
    std::string t = trim(text);
    size_t nl = t.rfind('\n');
    return clip(trim(nl == std::string::npos ? t : t.substr(nl + 1)));
}

std::string first_line(const std::string& text) {
    std::string t = trim(text);
    return clip(trim(t.substr(0, t.find('\n'))));
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

// Runs one command to its end; a stop request kills its process group.
ProcessResult run_command(ProcessOptions po) {
    Process p(std::move(po));
    while (!p.poll()) {
        if (signals_stop_requested()) p.kill();
        process_wait_any({&p}, 0.05);
    }
    return p.result();
}

ProcessOptions command(std::vector<std::string> argv, const std::string& dir, double timeout_s, bool merge) {
    ProcessOptions po;
    po.argv = std::move(argv);
    po.cwd = dir;
    po.env = {"TMPDIR=" + dir, "MKL_THREADING_LAYER=GNU", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1",
              "PYTHONDONTWRITEBYTECODE=1"};
    po.timeout_s = timeout_s;
    po.output_cap = kOutputCap;
    po.keep_tail = false;
    po.merge_stderr = merge;
    return po;
}

// How a command ended, for an error line: "timed out after 60 s", "exit status 1", "signal 11".
std::string ending(const ProcessResult& r, double timeout_s) {
    if (r.timed_out) return "timed out after " + seconds_text(timeout_s) + " s";
    if (r.killed) return "stopped";
    if (r.signal) return "killed by signal " + std::to_string(r.signal);
    return "exit status " + std::to_string(r.exit_code);
}

struct Job {
    const Task* task;
    std::optional<std::string> code;
    size_t task_slot, sample_slot;
};

class Judge {
public:
    Judge(const JudgeOptions& o) : o_(o) {}

    // Writes the emulator's runtime (cuset_emu's embedded files) under the work folder and builds
    // its object once; false (with emu_error_) when it cannot.
    bool prepare_emulator() {
        fs::path dir = fs::path(o_.work_dir) / "cuemu";
        emu_dir_ = dir.string();
        emu_obj_ = (dir / "cuemu.o").string();
        try {
            emu::write_runtime_files(emu_dir_);
        } catch (const Error& e) {
            emu_error_ = e.what();
            return false;
        }
        std::vector<std::string> argv = {o_.cxx};
        for (const std::string& f : emu_flags()) argv.push_back(f);
        argv.insert(argv.end(), {"-c", (dir / "cuemu.cpp").string(), "-o", emu_obj_});
        ProcessResult r = run_command(command(argv, dir.string(), 600, true));
        if (!r.ok()) {
            emu_error_ = "emulator runtime build failed (" + ending(r, 600) + "): " + first_error_line(r.out);
            return false;
        }
        return true;
    }
    const std::string& emulator_error() const { return emu_error_; }

    SampleResult judge(const Job& job, int index, const std::string& dir_name) {
        auto t0 = std::chrono::steady_clock::now();
        SampleResult s;
        s.index = index;
        s.emulated = o_.mode == JudgeMode::kEmulate;
        if (!job.code) {
            s.status = SampleStatus::kNoCode;
            s.error = "no fenced program in the answer";
            return s;
        }
        fs::path dir = fs::path(o_.work_dir) / dir_name;
        std::error_code ec;
        fs::remove_all(dir, ec);
        fs::create_directories(dir / "data");
        judge_in(job, dir, s);
        if (!o_.keep_work) fs::remove_all(dir, ec);
        s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return s;
    }

private:
    std::vector<std::string> emu_flags() const { return emu::build_flags(emu_dir_, o_.cuda_include); }

    void judge_in(const Job& job, const fs::path& dir, SampleResult& s) {
        const std::string d = dir.string();
        write_text(dir / "kernel.cu", *job.code);
        std::vector<std::string> nvcc = {o_.nvcc, "kernel.cu", "-o", "kernel"};
        nvcc.insert(nvcc.end(), o_.nvcc_flags.begin(), o_.nvcc_flags.end());
        ProcessResult c = run_command(command(nvcc, d, o_.compile_timeout_s, true));
        if (c.timed_out) {
            s.status = SampleStatus::kCompileTimeout;
            s.error = "nvcc " + ending(c, o_.compile_timeout_s);
            return;
        }
        if (!c.ok()) {
            s.status = SampleStatus::kCompileError;
            std::string line = first_error_line(c.out);
            s.error = line.empty() ? "nvcc " + ending(c, o_.compile_timeout_s) : line;
            return;
        }
        s.compiled = true;
        if (o_.mode == JudgeMode::kCompile) {
            s.status = SampleStatus::kCompiled;
            return;
        }
        std::string program = "./kernel";
        double run_timeout = o_.run_timeout_s;
        if (o_.mode == JudgeMode::kEmulate) {
            if (!emu_error_.empty()) {
                s.status = SampleStatus::kUnjudged;
                s.error = emu_error_;
                return;
            }
            std::string rewritten;
            try {
                rewritten = emu::transform_program(*job.code);
            } catch (const Error& e) {
                s.status = SampleStatus::kUnjudged;
                s.error = std::string("emulator: transform failed: ") + e.what();
                return;
            }
            write_text(dir / "kernel_emu.cpp", rewritten);
            std::vector<std::string> argv = {o_.cxx};
            for (const std::string& f : emu_flags()) argv.push_back(f);
            argv.insert(argv.end(), {"-include", (fs::path(emu_dir_) / "cuemu.h").string(), "kernel_emu.cpp",
                                     emu_obj_, "-o", "kernel_emu"});
            ProcessResult b = run_command(command(argv, d, 600, true));
            if (!b.ok()) {
                s.status = SampleStatus::kUnjudged;
                s.error = "emulator: build failed: " + first_error_line(b.out);
                return;
            }
            program = "./kernel_emu";
            run_timeout = o_.emulate_timeout_s;
        }
        // gen.py: inputs and reference outputs under data/.
        write_text(dir / "gen.py", job.task->gen_py);
        ProcessResult g = run_command(command({o_.python, "gen.py"}, d, o_.gen_timeout_s, false));
        if (!g.ok()) {
            s.status = SampleStatus::kGenFailed;
            std::string why = g.timed_out ? ending(g, o_.gen_timeout_s) : last_line(g.err);
            s.error = "gen.py: " + (why.empty() ? ending(g, o_.gen_timeout_s) : why);
            return;
        }
        ProcessResult r = run_command(command({program}, d, run_timeout, true));
        if (!r.ok()) {
            s.ran = false;
            s.functional = false;
            s.status = r.timed_out ? SampleStatus::kRunTimeout : SampleStatus::kRunFailed;
            std::string line = first_error_line(r.out);
            s.error = "run: " + ending(r, run_timeout) + (line.empty() ? "" : ": " + line);
            return;
        }
        s.ran = true;
        write_text(dir / "compare.py", job.task->compare_py);
        ProcessResult v = run_command(command({o_.python, "compare.py"}, d, o_.compare_timeout_s, false));
        if (!v.ok()) {
            s.functional = false;
            s.status = SampleStatus::kCompareFailed;
            std::string why = v.timed_out ? "" : last_line(v.err);
            s.error = "compare.py: " + (why.empty() ? ending(v, o_.compare_timeout_s) : why);
            return;
        }
        if (v.out.find('F') != std::string::npos) {
            s.functional = false;
            s.status = SampleStatus::kMismatch;
            s.error = "compare.py: " + first_line(v.out);
            return;
        }
        s.functional = true;
        s.status = SampleStatus::kPass;
    }

    const JudgeOptions& o_;
    std::string emu_dir_, emu_obj_, emu_error_;
};

std::string safe_name(const std::string& s) {
    std::string out;
    for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
    return out.empty() ? "_" : out;
}

std::string id_text_of(const nlohmann::json& id) { return id.is_string() ? id.get<std::string>() : id.dump(); }

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

const char* sample_status_name(SampleStatus s) {
    switch (s) {
        case SampleStatus::kNoCode: return "no-code";
        case SampleStatus::kCompileError: return "compile-error";
        case SampleStatus::kCompileTimeout: return "compile-timeout";
        case SampleStatus::kCompiled: return "compiled";
        case SampleStatus::kGenFailed: return "gen-failed";
        case SampleStatus::kRunFailed: return "run-failed";
        case SampleStatus::kRunTimeout: return "run-timeout";
        case SampleStatus::kCompareFailed: return "compare-failed";
        case SampleStatus::kMismatch: return "mismatch";
        case SampleStatus::kPass: return "pass";
        case SampleStatus::kUnjudged: return "unjudged";
    }
    return "?";
}

std::string first_error_line(const std::string& output) {
    std::string first;
    size_t pos = 0;
    while (pos <= output.size()) {
        size_t nl = output.find('\n', pos);
        std::string line = trim(output.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
        if (!line.empty()) {
            if (first.empty()) first = line;
            std::string lower = line;
            std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
            if (lower.find("error") != std::string::npos) return clip(line);
        }
        if (nl == std::string::npos) break;
        pos = nl + 1;
    }
    return clip(first);
}

bool gpu_present(std::string* how) {
    auto say = [&](const std::string& s) {
        if (how) *how = s;
    };
    if (const char* a = std::getenv("CUSET_ASSUME_GPU"); a && (std::string(a) == "0" || std::string(a) == "1")) {
        say(std::string("CUSET_ASSUME_GPU=") + a);
        return std::string(a) == "1";
    }
    std::string smi = process_find_program("nvidia-smi");
    if (!smi.empty()) {
        ProcessOptions po;
        po.argv = {smi, "-L"};
        po.timeout_s = 30;
        po.merge_stderr = true;
        ProcessResult r = process_run(po);
        if (r.ok() && r.out.find("GPU ") != std::string::npos) {
            say("nvidia-smi -L: " + first_line(r.out));
            return true;
        }
    }
    if (fs::exists("/dev/nvidia0")) {
        say("/dev/nvidia0");
        return true;
    }
    say(smi.empty() ? "no nvidia-smi on PATH and no /dev/nvidia0" : "nvidia-smi -L lists no GPU and there is no /dev/nvidia0");
    return false;
}

std::vector<ResultRecord> reference_records(const std::vector<Task>& tasks) {
    std::vector<ResultRecord> out;
    for (const Task& t : tasks) {
        ResultRecord r;
        r.id = t.id;
        r.task_name = t.task_name;
        r.codes.push_back(t.bench_cu);
        r.responses.push_back("```cuda\n" + t.bench_cu + "\n```");
        out.push_back(std::move(r));
    }
    return out;
}

JudgeSummary judge_results(const std::vector<Task>& tasks, const std::vector<ResultRecord>& records,
                           const JudgeOptions& given) {
    if (given.work_dir.empty()) throw RuntimeFailure("judge: no work folder given");
    // Every command runs in its sample's folder: paths given relative to here are made absolute.
    JudgeOptions opts = given;
    auto program = [](const std::string& name) {
        if (name.find('/') != std::string::npos) return fs::absolute(name).lexically_normal().string();
        std::string found = process_find_program(name);
        return found.empty() ? name : found;
    };
    opts.python = program(opts.python);
    opts.nvcc = program(opts.nvcc);
    opts.cxx = program(opts.cxx);
    opts.work_dir = fs::absolute(opts.work_dir).lexically_normal().string();
    if (!opts.cuemu_dir.empty()) opts.cuemu_dir = fs::absolute(opts.cuemu_dir).lexically_normal().string();
    if (!opts.cuda_include.empty()) opts.cuda_include = fs::absolute(opts.cuda_include).lexically_normal().string();
    if (opts.mode != JudgeMode::kCompile && process_find_program(opts.python).empty())
        throw UsageError("cannot find the Python '" + opts.python + "' that runs gen.py and compare.py (eval.python)");
    if (process_find_program(opts.nvcc).empty())
        throw UsageError("cannot find nvcc ('" + opts.nvcc + "'): the judge compiles every program with it");
    std::map<std::string, const Task*> by_id;
    for (const Task& t : tasks) by_id[t.id_text] = &t;

    JudgeSummary sum;
    sum.mode = opts.mode;
    std::vector<Job> jobs;
    std::vector<std::string> dirs;
    std::vector<int> indexes;
    for (size_t i = 0; i < records.size(); ++i) {
        const ResultRecord& r = records[i];
        std::string id = id_text_of(r.id);
        auto it = by_id.find(id);
        if (it == by_id.end())
            throw InputError("results" + (r.line ? " line " + std::to_string(r.line) : std::string()) + ": id " + id +
                             " is not a task of the tasks file");
        TaskResult tr;
        tr.id = r.id;
        tr.id_text = id;
        tr.task_name = it->second->task_name;
        tr.samples.resize(r.codes.size());
        for (size_t k = 0; k < r.codes.size(); ++k) {
            jobs.push_back({it->second, r.codes[k], sum.tasks.size(), k});
            dirs.push_back("task-" + safe_name(id) + "-" + std::to_string(i) + "-sample-" + std::to_string(k + 1));
            indexes.push_back(static_cast<int>(k + 1));
        }
        sum.tasks.push_back(std::move(tr));
    }
    fs::create_directories(opts.work_dir);
    Judge judge(opts);
    if (opts.mode == JudgeMode::kEmulate && !judge.prepare_emulator())
        sum.notice = "emulation unavailable: " + judge.emulator_error() + "; compiled programs are unjudged";

    std::atomic<size_t> next{0};
    std::atomic<int64_t> done{0};
    std::mutex err_mu;
    std::string failure;
    auto worker = [&] {
        for (;;) {
            if (signals_stop_requested()) return;
            size_t j = next.fetch_add(1);
            if (j >= jobs.size()) return;
            try {
                SampleResult s = judge.judge(jobs[j], indexes[j], dirs[j]);
                sum.tasks[jobs[j].task_slot].samples[jobs[j].sample_slot] = std::move(s);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(err_mu);
                if (failure.empty()) failure = e.what();
                next.store(jobs.size());
                return;
            }
            ++done;
        }
    };
    int n = std::max(1, std::min<int>(opts.jobs, static_cast<int>(std::max<size_t>(jobs.size(), 1))));
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) threads.emplace_back(worker);
    int64_t shown = -1;
    const int64_t total = static_cast<int64_t>(jobs.size());
    for (;;) {
        int64_t d = done.load();
        if (opts.on_progress && d != shown) opts.on_progress(shown = d, total);
        if (d >= total || signals_stop_requested()) break;
        {
            std::lock_guard<std::mutex> lock(err_mu);
            if (!failure.empty()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (std::thread& t : threads) t.join();
    if (!failure.empty()) throw RuntimeFailure("judging failed: " + failure);
    if (signals_stop_requested()) throw RuntimeFailure("judging stopped by a signal before every sample was judged");
    if (opts.mode == JudgeMode::kCompile && sum.notice.empty())
        sum.notice = "no GPU and no emulation: gen.py, the programs and compare.py were not run; every figure is compile-only";
    return sum;
}

}  // namespace cuset::eval
