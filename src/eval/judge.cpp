// CUDABench's evaluation of a results file through the one runner (eval/judge.h).
#include "cuset/core/json_io.h"
#include "cuset/eval/judge.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/journal.h"
#include "cuset/core/log.h"
#include "cuset/core/signals.h"

namespace cuset::eval {

namespace {

struct Job {
    const Task* task;
    std::optional<std::string> code;
    size_t task_slot, sample_slot;
    std::string dir;
    int index;
    std::string key;  // verdict_key()
};

std::string safe_name(const std::string& s) {
    std::string out;
    for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
    return out.empty() ? "_" : out.substr(0, 64);
}

std::string id_text_of(const nlohmann::json& id) { return id.is_string() ? id.get<std::string>() : id.dump(); }

// What a verdict depends on: the judge's settings, the task's files and the program. A journal
// entry is reused only under the same key.
std::string verdict_key(const judge::RunnerOptions& ro, const Task& t, const std::string& id, int index,
                        const std::optional<std::string>& code) {
    Hasher h;
    h.add("cuset-judge-journal-1").add(judge::judge_mode_name(ro.mode)).add_u64(ro.contain ? 1 : 0);
    h.add(judge::verdict_salt(ro.mode));
    for (double s : {ro.compile_timeout_s, ro.run_timeout_s, ro.gen_timeout_s, ro.compare_timeout_s, ro.emulate_timeout_s})
        h.add(std::to_string(s));
    h.add(id).add_u64(static_cast<uint64_t>(index)).add(t.gen_py).add(t.compare_py).add(t.bench_cu);
    if (t.kernelbench)
        h.add("kernelbench").add(t.kernelbench->source).add(t.kernelbench->precision).add(std::to_string(t.kernelbench->tolerance))
            .add(std::to_string(ro.kernelbench_max_input_elements));
    for (const TensorSpec& in : t.inputs) h.add(in.name);
    h.add_u64(code ? 1 : 0).add(code ? *code : std::string());
    if (ro.speedup.enabled)  // a verdict without the speed-up measure is not one with it
        h.add("speedup").add_u64(static_cast<uint64_t>(ro.speedup.warmup)).add_u64(static_cast<uint64_t>(ro.speedup.repeats));
    return h.hex();
}

nlohmann::json optional_json(const std::optional<bool>& b) { return b ? nlohmann::json(*b) : nlohmann::json(nullptr); }
std::optional<bool> optional_bool(const nlohmann::json& j) {
    if (j.is_boolean()) return j.get<bool>();
    return std::nullopt;
}

std::string journal_line(const std::string& key, const std::string& id, const SampleResult& s) {
    nlohmann::json j = {{"key", key},           {"task", id},          {"sample", s.index},
                        {"status", judge::status_name(s.status)},     {"compiled", s.compiled},
                        {"ran", optional_json(s.ran)},               {"functional", optional_json(s.functional)},
                        {"emulated", s.emulated}, {"error", s.error}, {"seconds", s.seconds},
                        {"containment", s.containment}};
    if (s.speedup) j["speedup"] = *s.speedup;
    if (!s.speedup_note.empty()) j["speedup_note"] = s.speedup_note;
    if (!s.note.empty()) j["note"] = s.note;
    return json_text(j);
}

std::optional<SampleStatus> status_of(const std::string& name) { return judge::status_from_name(name); }

// Whether a judge in `mode` can reach `s`: compile-only judging ends at "compiled"; a judge that
// runs programs never stops there.
bool status_possible(SampleStatus s, JudgeMode mode) {
    switch (s) {
        case SampleStatus::kCompiled:
            return mode == JudgeMode::kCompile;
        case SampleStatus::kNoCode:
        case SampleStatus::kCompileError:
        case SampleStatus::kCompileTimeout:
            return true;
        case SampleStatus::kUnjudged:
            return mode == JudgeMode::kEmulate;
        case SampleStatus::kStaticCheck:  // before anything is built
            return true;
        default:
            return mode != JudgeMode::kCompile;
    }
}

// The verdicts of a journal by key, for a judge in `mode`. A line that is not one of ours
// (another version, a hand edit: bad JSON, a missing or mistyped field, a status this judge
// cannot reach) is skipped: its sample is judged again.
std::map<std::string, SampleResult> read_verdicts(const std::string& path, JudgeMode mode) {
    std::map<std::string, SampleResult> out;
    int64_t skipped = 0;
    for (const std::string& line : read_journal(path, "judge journal")) try {
        nlohmann::json j = json_depth_problem(line).empty() ? nlohmann::json::parse(line, nullptr, false) : nlohmann::json();
        if (!j.is_object() || !j.contains("key") || !j["key"].is_string() || !j.contains("status") ||
            !j["status"].is_string() || !j.contains("sample") || !j["sample"].is_number_integer())
            continue;
        std::optional<SampleStatus> st = status_of(j["status"].get<std::string>());
        if (!st) continue;
        if (!status_possible(*st, mode)) {
            ++skipped;
            continue;
        }
        SampleResult s;
        s.index = j["sample"].get<int>();
        s.status = *st;
        s.compiled = j.value("compiled", false);
        s.ran = optional_bool(j.value("ran", nlohmann::json()));
        s.functional = optional_bool(j.value("functional", nlohmann::json()));
        s.emulated = j.value("emulated", false);
        s.error = j.value("error", std::string());
        s.seconds = j.value("seconds", 0.0);
        s.containment = j.value("containment", std::string());
        if (j.contains("speedup") && j["speedup"].is_number()) s.speedup = j["speedup"].get<double>();
        s.speedup_note = j.value("speedup_note", std::string());
        s.note = j.value("note", std::string());
        out[j["key"].get<std::string>()] = std::move(s);
    } catch (const nlohmann::json::exception&) {  // a field of another type
        ++skipped;
    }
    if (skipped > 0)
        log_warn("%s: %lld line(s) with a field of the wrong type or a status this judge cannot reach skipped (their "
                 "samples are judged again)",
                 path.c_str(),
                 static_cast<long long>(skipped));
    return out;
}

}  // namespace

void require_reference(const Task& t) {
    if (t.kernelbench)
        throw InputError(t.file + ":" + std::to_string(t.line) + ": task " + t.id_text +
                         " is a KernelBench problem, which has no reference kernel to judge (--reference judges "
                         "CUDABench's bench.cu); judge candidates with --results or --candidates");
}

judge::CheckedTask checked_task_of(const Task& t) {
    judge::CheckedTask c;
    c.key = "cudabench:" + t.id_text + ":" + t.file + ":" + std::to_string(t.line);
    c.gen_py = t.gen_py;
    c.compare_py = t.compare_py;
    c.reference_source = t.bench_cu;
    for (const TensorSpec& in : t.inputs) c.declared_inputs.push_back(in.name);
    if (t.kernelbench) {
        judge::KernelBenchProblemCheck kb;
        kb.source = t.kernelbench->source;
        kb.precision = t.kernelbench->precision;
        kb.tolerance = t.kernelbench->tolerance;
        c.kernelbench = std::move(kb);
    }
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

namespace {

// One job per sample of every record, and the summary's task rows they fill; a record whose id
// is not a task of the tasks file is an InputError naming its line.
std::vector<Job> jobs_of(const std::vector<Task>& tasks, const std::vector<ResultRecord>& records,
                         const JudgeOptions& opts, JudgeSummary& sum) {
    std::map<std::string, const Task*> by_id;
    for (const Task& t : tasks) by_id[t.id_text] = &t;

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
        tr.kernelbench = it->second->kernelbench.has_value();
        tr.samples.resize(r.codes.size());
        for (size_t k = 0; k < r.codes.size(); ++k)
            jobs.push_back({it->second, r.codes[k], sum.tasks.size(), k,
                            "task-" + safe_name(id) + "-" + std::to_string(i) + "-sample-" + std::to_string(k + 1),
                            static_cast<int>(k + 1),
                            verdict_key(opts.runner, *it->second, id, static_cast<int>(k + 1), r.codes[k])});
        sum.tasks.push_back(std::move(tr));
    }
    return jobs;
}

// A sample's result from the judge's verdict.
SampleResult sample_result(const judge::Verdict& v, int index) {
    SampleResult s;
    s.index = index;
    s.status = v.status;
    s.compiled = v.compiled;
    s.ran = v.ran;
    s.functional = v.functional;
    s.emulated = v.emulated;
    s.error = v.error;
    s.seconds = v.seconds;
    s.containment = v.containment;
    s.speedup = v.speedup;
    s.speedup_note = v.speedup_note;
    s.note = v.note;
    if (v.run.ran) s.run_seconds = v.run.seconds;
    return s;
}

}  // namespace

JudgeSummary judge_results(const std::vector<Task>& tasks, const std::vector<ResultRecord>& records,
                           const JudgeOptions& opts) {
    JudgeSummary sum;
    sum.mode = opts.runner.mode;
    std::vector<Job> jobs = jobs_of(tasks, records, opts, sum);
    const int64_t total = static_cast<int64_t>(jobs.size());
    std::unique_ptr<JournalWriter> journal;
    if (!opts.journal.empty()) {  // the samples a stopped run judged are not judged again
        std::map<std::string, SampleResult> known = read_verdicts(opts.journal, opts.runner.mode);
        std::vector<Job> left;
        for (Job& j : jobs) {
            auto k = known.find(j.key);
            if (k != known.end() && k->second.index == j.index) {
                sum.tasks[j.task_slot].samples[j.sample_slot] = k->second;
                ++sum.from_journal;
            } else {
                left.push_back(std::move(j));
            }
        }
        jobs = std::move(left);
        journal = std::make_unique<JournalWriter>(opts.journal, "judge journal");
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
                // A stop kills the commands under way: a verdict reached after it may be the
                // kill's ("nvcc stopped"), not the program's. It is dropped, and judged again
                // by the next run.
                if (signals_stop_requested()) return;
                SampleResult s = sample_result(v, job.index);
                if (opts.on_sample) opts.on_sample(job.task_slot, s);
                if (journal) {
                    std::lock_guard<std::mutex> lock(err_mu);
                    journal->append(journal_line(job.key, sum.tasks[job.task_slot].id_text, s));
                }
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
    for (;;) {
        int64_t d = sum.from_journal + done.load();
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
    if (signals_stop_requested()) {
        const int64_t judged = sum.from_journal + done.load();
        if (journal)
            throw StoppedBySignal("judging stopped by a signal after " + std::to_string(judged) + " of " +
                                  std::to_string(total) + " sample(s); their verdicts are in " + opts.journal +
                                  ": run the same command again to judge the rest");
        throw StoppedBySignal("judging stopped by a signal after " + std::to_string(judged) + " of " +
                              std::to_string(total) + " sample(s)");
    }
    return sum;
}

}  // namespace cuset::eval
