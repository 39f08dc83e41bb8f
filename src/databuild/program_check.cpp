// The programs of `data check --compile/--run` through the judge's runner (databuild/program_check.h).
#include "cuset/databuild/program_check.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "cuset/core/error.h"
#include "cuset/core/file_tree.h"
#include "cuset/core/log.h"
#include "cuset/core/process.h"
#include "cuset/core/progress.h"
#include "cuset/core/signals.h"
#include "cuset/judge/runner.h"
#include "cuset/judge/toolchain.h"

namespace cuset::databuild {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string w;
    while (ss >> w) out.push_back(w);
    return out;
}

// nvcc's "Cuda compilation tools, release 13.0, V13.0.88" line as "nvcc V13.0.88".
std::string nvcc_version_of(const std::string& text) {
    std::istringstream in(text);
    std::string version;
    for (std::string l; std::getline(in, l);) {
        if (!l.empty() && l.back() == '\r') l.pop_back();
        if (l.find("release") != std::string::npos) version = "nvcc " + l.substr(l.rfind(' ') + 1);
    }
    return version;
}

ProgramStep step_of(const judge::StageReport& st, bool program, double timeout_s) {
    ProgramStep r;
    if (!st.ran) return r;
    r.seconds = st.seconds;
    if (st.timed_out) {
        r.status = "timeout";
        r.message = strprintf("still running after %gs; killed", timeout_s);
        return r;
    }
    if (st.ok) {
        r.status = "pass";
        return r;
    }
    r.status = "fail";
    r.exit_code = st.signal ? 128 + st.signal : st.exit_code;
    if (st.signal != 0)
        r.message = strprintf("killed by signal %d%s%s", st.signal, st.line.empty() ? "" : ": ", st.line.c_str());
    else if (st.line.empty())
        r.message = strprintf("exit status %d, no output", st.exit_code);
    else
        r.message = program ? strprintf("exit status %d: %s", st.exit_code, st.line.c_str()) : st.line;
    return r;
}

}  // namespace

JudgeProgramChecker::JudgeProgramChecker(ProgramCheckOptions opts) : opts_(std::move(opts)) {
    if (!(opts_.timeout_s > 0) || !std::isfinite(opts_.timeout_s))  // NaN and inf included
        throw UsageError("--timeout must be a positive number of seconds");
}

void JudgeProgramChecker::prepare() {
    nvcc_ = judge::find_nvcc(opts_.nvcc, "--nvcc");
    ProcessOptions vo;
    vo.argv = {nvcc_, "--version"};
    vo.timeout_s = 60;
    vo.merge_stderr = true;
    const ProcessResult v = process_run(vo);
    if (!v.ok()) throw UsageError("--compile: " + nvcc_ + " --version failed; is it a working nvcc?");
    std::string gpu_how;
    gpu_ = opts_.run && judge::gpu_present(&gpu_how);
    if (opts_.run && !gpu_)
        std::printf("notice: --run skipped: no GPU found (%s); programs are only compiled\n", gpu_how.c_str());
    flags_ = split_words(opts_.nvcc_flags);
    if (gpu_) flags_.push_back("-arch=native");
    jobs_ = opts_.jobs > 0 ? opts_.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::string flags;
    for (const std::string& f : flags_) flags += (flags.empty() ? "" : " ") + f;
    compile_info_ = {{"nvcc", nvcc_}, {"version", nvcc_version_of(v.out)}, {"flags", flags},
                     {"jobs", jobs_}, {"timeout_s", opts_.timeout_s}};
    run_info_ = opts_.run ? nlohmann::json{{"gpu", gpu_}, {"probe", gpu_how}} : nlohmann::json(nullptr);
}

std::vector<ProgramSteps> JudgeProgramChecker::check(const std::vector<std::string>& programs,
                                                     const std::vector<std::string>& labels) {
    if (nvcc_.empty()) prepare();
    judge::RunnerOptions ro;
    ro.nvcc = nvcc_;
    ro.nvcc_flags = flags_;
    ro.program_name = "program";
    ro.compile_timeout_s = ro.run_timeout_s = opts_.timeout_s;
    ro.contain = opts_.contain;
    ro.limits = opts_.limits;
    if (gpu_) ro.mode = judge::JudgeMode::kGpu;
    std::string work = (fs::temp_directory_path() / "cuset-check-XXXXXX").string();
    if (!::mkdtemp(work.data())) throw RuntimeFailure("cannot create a temporary folder " + work);
    const RemoveTreeGuard remove_work(work);
    ro.work_dir = work;

    // SIGINT/SIGTERM only raise a flag while programs run, so the runner kills them.
    StopSignalOptions quiet;
    quiet.second_exits = false;
    StopSignalScope stop_signals(quiet);
    judge::Runner runner(ro);
    std::vector<ProgramSteps> steps(programs.size());
    std::atomic<size_t> next{0}, done{0};
    std::atomic<int64_t> n_pass{0}, n_fail{0};
    std::mutex err_mu;
    std::string failure;
    auto worker = [&] {
        for (;;) {
            if (signals_stop_requested()) return;
            const size_t k = next.fetch_add(1);
            if (k >= programs.size()) return;
            try {
                const judge::Verdict v = runner.judge(programs[k], nullptr, k < labels.size() ? labels[k] : "");
                steps[k].compile = step_of(v.compile, false, opts_.timeout_s);
                steps[k].run = step_of(v.run, true, opts_.timeout_s);
                ++(steps[k].compile.status == "pass" ? n_pass : n_fail);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(err_mu);
                if (failure.empty()) failure = e.what();
                next.store(programs.size());
                return;
            }
            ++done;
        }
    };
    Progress progress(gpu_ ? "compile+run" : "compile", static_cast<int64_t>(programs.size()), "samples",
                      opts_.progress_bar);
    std::vector<std::thread> threads;
    for (int i = 0; i < std::max(1, std::min<int>(jobs_, static_cast<int>(std::max<size_t>(programs.size(), 1)))); ++i)
        threads.emplace_back(worker);
    for (;;) {
        const size_t d = done.load();
        progress.update(static_cast<int64_t>(d), strprintf("%lld passed, %lld failed", (long long)n_pass.load(),
                                                           (long long)n_fail.load()));
        bool stop = d >= programs.size() || signals_received() != 0;
        {
            std::lock_guard<std::mutex> lock(err_mu);
            stop = stop || !failure.empty();
        }
        if (stop) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (std::thread& t : threads) t.join();
    if (int sig = signals_received()) {
        progress.finish("interrupted");
        throw StoppedBySignal(strprintf("data check: stopped by signal %d; its compiles were killed and nothing was "
                                        "written; run the command again", sig));
    }
    if (!failure.empty()) throw RuntimeFailure("data check: " + failure);
    progress.finish(strprintf("%lld passed, %lld failed", (long long)n_pass.load(), (long long)n_fail.load()));
    compile_info_["containment"] = runner.containment();
    return steps;
}

}  // namespace cuset::databuild
