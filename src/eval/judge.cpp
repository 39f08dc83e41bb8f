// CUDABench's evaluation of a results file through the one runner (eval/judge.h).
#include "cuset/eval/judge.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "cuset/core/error.h"
#include "cuset/core/signals.h"

namespace cuset::eval {

namespace {

struct Job {
    const Task* task;
    std::optional<std::string> code;
    size_t task_slot, sample_slot;
    std::string dir;
    int index;
};

std::string safe_name(const std::string& s) {
    std::string out;
    for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
    return out.empty() ? "_" : out.substr(0, 64);
}

std::string id_text_of(const nlohmann::json& id) { return id.is_string() ? id.get<std::string>() : id.dump(); }

}  // namespace

judge::CheckedTask checked_task_of(const Task& t) {
    judge::CheckedTask c;
    c.key = "cudabench:" + t.id_text + ":" + t.file + ":" + std::to_string(t.line);
    c.gen_py = t.gen_py;
    c.compare_py = t.compare_py;
    c.reference_source = t.bench_cu;
    for (const TensorSpec& in : t.inputs) c.declared_inputs.push_back(in.name);
    return c;
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
                           const JudgeOptions& opts) {
    std::map<std::string, const Task*> by_id;
    for (const Task& t : tasks) by_id[t.id_text] = &t;

    JudgeSummary sum;
    sum.mode = opts.runner.mode;
    std::vector<Job> jobs;
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
        for (size_t k = 0; k < r.codes.size(); ++k)
            jobs.push_back({it->second, r.codes[k], sum.tasks.size(), k,
                            "task-" + safe_name(id) + "-" + std::to_string(i) + "-sample-" + std::to_string(k + 1),
                            static_cast<int>(k + 1)});
        sum.tasks.push_back(std::move(tr));
    }
    judge::Runner runner(opts.runner);
    sum.notice = runner.notice();
    sum.containment = runner.containment();
    if (opts.runner.mode != JudgeMode::kCompile) sum.python = opts.runner.python.executable;
    std::map<const Task*, judge::CheckedTask> checked;
    for (const Job& j : jobs) {
        auto [it, fresh] = checked.try_emplace(j.task, checked_task_of(*j.task));
        if (j.code) runner.expect(it->second.key, 1);
    }

    std::atomic<size_t> next{0};
    std::atomic<int64_t> done{0};
    std::mutex err_mu;
    std::string failure;
    bool environment = false;
    auto worker = [&] {
        for (;;) {
            if (signals_stop_requested()) return;
            size_t j = next.fetch_add(1);
            if (j >= jobs.size()) return;
            const Job& job = jobs[j];
            try {
                judge::Verdict v = runner.judge(job.code, &checked.at(job.task), job.dir);
                SampleResult s;
                s.index = job.index;
                s.status = v.status;
                s.compiled = v.compiled;
                s.ran = v.ran;
                s.functional = v.functional;
                s.emulated = v.emulated;
                s.error = v.error;
                s.seconds = v.seconds;
                s.containment = v.containment;
                if (v.run.ran) s.run_seconds = v.run.seconds;
                if (opts.on_sample) opts.on_sample(job.task_slot, s);
                sum.tasks[job.task_slot].samples[job.sample_slot] = std::move(s);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(err_mu);
                if (failure.empty()) {
                    failure = e.what();
                    environment = dynamic_cast<const judge::JudgeEnvironmentError*>(&e) != nullptr;
                }
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
    if (!failure.empty()) {
        if (environment) throw judge::JudgeEnvironmentError(failure);
        throw RuntimeFailure("judging failed: " + failure);
    }
    if (signals_stop_requested()) throw RuntimeFailure("judging stopped by a signal before every sample was judged");
    return sum;
}

}  // namespace cuset::eval
