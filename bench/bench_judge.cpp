// Judge throughput: CUDABench reference programs (bench.cu of the first N tasks of a tasks file)
// judged by cuset's runner, against CUDABench's own evaluator's compile step on the same programs
// in the same run (bench_judge_cudabench.py: its compile_code, one nvcc per program, serially).
// Prints programs per second and the ratio for --judge compile at 1 job and at --jobs J, and for
// --judge emulate (which also runs gen.py, the program and compare.py) at J jobs. Containment is
// on, as by default. The compile cache is cold: a fresh cache folder per measurement.
//   build/bench/bench_judge --tasks CUDABench-Set.jsonl --cudabench CHECKOUT [--limit 100]
//       [--jobs 2] [--no-emulate] [--work DIR]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/core/process.h"
#include "cuset/eval/judge.h"
#include "cuset/judge/toolchain.h"

namespace fs = std::filesystem;
using namespace cuset;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Measured {
    double seconds = 0;
    int64_t programs = 0, counted = 0;  // counted: compiled (compile) or passed (emulate)
};

Measured judge_run(const std::vector<eval::Task>& tasks, judge::JudgeMode mode, int jobs, const std::string& work) {
    eval::JudgeOptions o;
    o.runner.mode = mode;
    o.runner.work_dir = work + "/work";
    o.runner.cache_dir = work + "/cache";
    o.runner.nvcc = judge::find_nvcc("", "nvcc");
    if (mode != judge::JudgeMode::kCompile) o.runner.python = judge::find_python("", "python");
    o.jobs = jobs;
    fs::remove_all(work);
    const auto t0 = std::chrono::steady_clock::now();
    eval::JudgeSummary s = eval::judge_results(tasks, eval::reference_records(tasks), o);
    Measured m;
    m.seconds = seconds_since(t0);
    for (const eval::TaskResult& t : s.tasks)
        for (const eval::SampleResult& r : t.samples) {
            ++m.programs;
            m.counted += mode == judge::JudgeMode::kCompile ? r.compiled : r.status == judge::Status::kPass;
        }
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    std::string tasks_file, checkout, work = "bench-work/judge";
    int64_t limit = 100;
    int jobs = 2;
    bool emulate = true;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_judge: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--tasks") tasks_file = value();
        else if (a == "--cudabench") checkout = value();
        else if (a == "--limit") limit = std::stoll(value());
        else if (a == "--jobs") jobs = std::stoi(value());
        else if (a == "--work") work = value();
        else if (a == "--no-emulate") emulate = false;
        else {
            std::fprintf(stderr, "usage: bench_judge --tasks FILE --cudabench CHECKOUT [--limit N] [--jobs J] [--no-emulate] [--work DIR]\n");
            return 2;
        }
    }
    if (tasks_file.empty() || checkout.empty()) {
        std::fprintf(stderr, "bench_judge: --tasks and --cudabench (a checkout of github.com/CUDA-Bench/CUDABench) are required\n");
        return 2;
    }
    try {
        std::vector<eval::Task> tasks = eval::load_tasks(tasks_file);
        if (static_cast<int64_t>(tasks.size()) > limit) tasks.resize(static_cast<size_t>(limit));
        fs::create_directories(work);
        const std::string programs = work + "/programs.json";
        {
            nlohmann::json list = nlohmann::json::array();
            for (const eval::Task& t : tasks) list.push_back(t.bench_cu);
            std::ofstream(programs) << list.dump();
        }
        std::printf("bench_judge: %zu reference programs of %s, %u cores\n", tasks.size(), tasks_file.c_str(),
                    std::thread::hardware_concurrency());
        // The reference: CUDABench's compile step, serially.
        fs::remove_all(work + "/cudabench");
        fs::create_directories(work + "/cudabench");
        ProcessOptions po;
        po.argv = {judge::find_python("", "python").executable, std::string(CUSET_SOURCE_DIR) + "/bench/bench_judge_cudabench.py",
                   checkout, programs, work + "/cudabench"};
        po.merge_stderr = true;
        po.timeout_s = 7200;
        ProcessResult r = process_run(po);
        if (!r.ok()) {
            std::fprintf(stderr, "bench_judge: the CUDABench reference failed: %s\n", r.out.c_str());
            return 4;
        }
        const nlohmann::json ref = nlohmann::json::parse(r.out.substr(r.out.rfind('{')));
        const double ref_s = ref["seconds"].get<double>();
        const double ref_rate = static_cast<double>(tasks.size()) / ref_s;
        std::printf("%-44s %8s %10s %10s %8s\n", "", "seconds", "programs/s", "counted", "ratio");
        std::printf("%-44s %8.1f %10.3f %10lld %8s\n", "CUDABench compile_code (serial)", ref_s, ref_rate,
                    ref["compiled"].get<long long>(), "1.00x");
        auto row = [&](const char* name, const Measured& m) {
            const double rate = static_cast<double>(m.programs) / m.seconds;
            std::printf("%-44s %8.1f %10.3f %10lld %7.2fx\n", name, m.seconds, rate, static_cast<long long>(m.counted),
                        rate / ref_rate);
            std::fflush(stdout);
        };
        row("cuset --judge compile, 1 job", judge_run(tasks, judge::JudgeMode::kCompile, 1, work + "/c1"));
        const std::string jn = std::to_string(jobs);
        if (jobs != 1)
            row(("cuset --judge compile, " + jn + " jobs").c_str(), judge_run(tasks, judge::JudgeMode::kCompile, jobs, work + "/cj"));
        if (emulate)
            row(("cuset --judge emulate, " + jn + " jobs").c_str(), judge_run(tasks, judge::JudgeMode::kEmulate, jobs, work + "/ej"));
        std::printf("counted: programs compiled (CUDABench, compile) or passed (emulate); containment on\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_judge: %s\n", e.what());
        return 4;
    }
    return 0;
}
