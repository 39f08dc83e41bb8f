// `cuset-train eval`: prompts, generation, results.jsonl, judge, report (eval/eval_run.h).
#include "cuset/eval/eval_run.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/core/signals.h"
#include "cuset/eval/repair.h"
#include "cuset/generate/generate_run.h"

namespace fs = std::filesystem;

namespace cuset::eval {

namespace {

constexpr const char* kWorkMarker = ".cuset-eval-work";  // inside OUT/work: cuset made it
constexpr const char* kJournalName = "judged.jsonl";  // OUT/judged.jsonl: the verdicts so far (eval/judge.h)

struct Generated {
    std::map<std::string, std::vector<std::pair<std::optional<std::string>, int64_t>>> by_id;  // id -> (response, tokens)
};

Generated read_generations(const std::string& path) {
    Generated g;
    LineReader in(path, "generations file");
    std::string line;
    while (in.next(line)) {
        if (line.empty()) continue;
        std::string where = path;
        where += ":";
        where += std::to_string(in.line_no());
        const nlohmann::json j = json_parse(line, where);
        const JsonFields f(j, where);
        g.by_id[f.id("id")].emplace_back(f.opt_string("response").value_or(""), f.integer_or("generated_tokens", -1));  // a record always answers
    }
    return g;
}

}  // namespace

std::string judge_cache_dir() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/cuset/judge";
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/cuset/judge";
    return (fs::temp_directory_path() / "cuset-judge-cache").string();
}

namespace {

using JudgeFn = std::function<JudgeSummary(const std::vector<ResultRecord>&, const std::string&)>;

// The repair turns of a generating eval (turns > 1). `records` are turn 1's, one per task, and
// `first` their verdicts in the same order (judge_results keeps it). Each sample is a conversation
// (CUDABench's system and user prompt, the answer); while its last program failed for a reason
// of its own and turns remain, the judge's finding is its next user turn and the model answers
// (one prompt per sample, its id "<task>/s<k>/t<turn>" seeding its stream), and the answer is
// judged. Every later answer goes into records[..].repairs. With req.answers the answers are the
// source's (its turn t of the sample) instead of the model's.
RepairReport repair_turns(const EvalRequest& req, const std::string& out, GenerateRequest g, const TextOptions& text,
                          const Runtime* runtime, const std::vector<Task>& tasks, std::vector<ResultRecord>& records,
                          const JudgeSummary& first, const JudgeFn& judge_now) {
    std::map<std::string, const Task*> task_of;  // by id: the task's prompt, extraction and repair wording
    for (const Task& t : tasks) task_of[t.id_text] = &t;
    struct Chain {
        const Task* spec = nullptr;
        size_t task = 0, sample = 0;
        std::string id;       // "<task id>/s<k>"
        Conversation conv;
    };
    std::vector<std::vector<std::vector<SampleResult>>> history(records.size());
    std::vector<Chain> chains;
    for (size_t i = 0; i < records.size() && i < first.tasks.size(); ++i) {
        ResultRecord& r = records[i];
        r.repairs.assign(r.codes.size(), {});
        const std::string id = r.id.is_string() ? r.id.get<std::string>() : r.id.dump();
        const auto spec = task_of.find(id);
        if (spec == task_of.end()) throw RuntimeFailure("eval: repair turns for a results record of unknown task " + id);
        for (size_t k = 0; k < first.tasks[i].samples.size(); ++k) {
            history[i].push_back({first.tasks[i].samples[k]});
            Chain c;
            c.spec = spec->second;
            c.task = i;
            c.sample = k;
            c.id = id + "/s" + std::to_string(k + 1);
            c.conv.messages = {{"system", system_prompt(*c.spec)},
                               {"user", r.prompt},
                               {"assistant", k < r.responses.size() ? r.responses[k].value_or("") : ""}};
            chains.push_back(std::move(c));
        }
    }
    g.settings.n = 1;
    for (int64_t turn = 2; turn <= req.turns; ++turn) {
        const std::string T = std::to_string(turn);
        std::vector<Chain*> todo;
        std::vector<std::string> feedback;
        std::string lines;
        for (Chain& c : chains) {
            const std::vector<SampleResult>& h = history[c.task][c.sample];
            if (static_cast<int64_t>(h.size()) != turn - 1) continue;  // the conversation ended before
            std::string fb = repair_turn(*c.spec, h.back().status, h.back().error);
            if (fb.empty()) continue;  // a pass, or nothing the program can fix
            c.conv.messages.push_back({"user", fb});
            lines += prompt_record_line(c.id + "/t" + T, c.conv) + "\n";
            todo.push_back(&c);
            feedback.push_back(std::move(fb));
        }
        if (todo.empty()) break;
        g.prompts = (fs::path(out) / ("prompts-turn" + T + ".jsonl")).string();
        g.out = (fs::path(out) / ("generations-turn" + T + ".jsonl")).string();
        atomic_write(g.prompts, lines, "prompts file");
        log_info("eval: turn %lld of %lld: %zu sample(s) answer the judge's finding", static_cast<long long>(turn),
                 static_cast<long long>(req.turns), todo.size());
        Generated gen;
        if (req.answers) {  // the source's answer (task, sample, turn)
            for (const Chain* c : todo)
                if (auto a = req.answers(c->spec->id_text, static_cast<int64_t>(c->sample) + 1, turn))
                    gen.by_id[c->id + "/t" + T].emplace_back(std::move(a), -1);
        } else {
            if (!runtime) throw RuntimeFailure("eval: repair turns need the runtime to generate on");
            generate_run(g, text, *runtime);
            gen = read_generations(g.out);
        }
        std::vector<ResultRecord> recs;
        std::vector<std::pair<Chain*, int64_t>> judged;  // the conversation, its answer's tokens
        for (size_t q = 0; q < todo.size(); ++q) {
            Chain& c = *todo[q];
            auto it = gen.by_id.find(c.id + "/t" + T);
            if (it == gen.by_id.end() || it->second.empty() || !it->second.front().first) continue;  // no answer: it ends
            const std::string response = *it->second.front().first;
            const int64_t ntok = it->second.front().second;
            c.conv.messages.push_back({"assistant", response});
            const ResultRecord& r = records[c.task];
            ResultRecord rec;
            rec.id = r.id;
            rec.task_name = r.task_name;
            rec.prompt = r.prompt;
            rec.run_id = r.run_id;
            rec.responses.push_back(response);
            rec.codes.push_back(extract_code(*c.spec, response));
            records[c.task].repairs[c.sample].push_back({turn, feedback[q], rec.responses[0], rec.codes[0]});
            recs.push_back(std::move(rec));
            judged.emplace_back(&c, ntok);
        }
        if (recs.empty()) break;
        const JudgeSummary js = judge_now(recs, "judge turn " + T);
        for (size_t j = 0; j < judged.size() && j < js.tasks.size(); ++j) {
            if (js.tasks[j].samples.empty()) continue;
            SampleResult s = js.tasks[j].samples[0];
            s.index = static_cast<int>(judged[j].first->sample) + 1;
            s.generated_tokens = judged[j].second;
            history[judged[j].first->task][judged[j].first->sample].push_back(std::move(s));
        }
    }
    return repair_report(first.tasks, std::move(history), first.mode, req.turns);
}

}  // namespace

std::vector<Task> select_tasks(const std::vector<Task>& all, const std::vector<std::string>& ids, int64_t limit) {
    std::vector<Task> out;
    if (ids.empty()) {
        out = all;
    } else {
        std::set<std::string> want(ids.begin(), ids.end()), known;
        for (const Task& t : all) known.insert(t.id_text);
        for (const std::string& id : want)
            if (!known.count(id)) throw UsageError("--task-ids: no task has id " + id);
        for (const Task& t : all)
            if (want.count(t.id_text)) out.push_back(t);
    }
    if (limit > 0 && static_cast<int64_t>(out.size()) > limit) out.resize(static_cast<size_t>(limit));
    return out;
}

JudgeOptions judge_options_for(const JudgeSettings& s, JudgeMode mode, const std::string& work_dir, bool keep_work) {
    JudgeOptions o;
    judge::RunnerOptions& ro = o.runner;
    ro.mode = mode;
    ro.nvcc = judge::find_nvcc(s.nvcc, "eval.nvcc");
    if (mode != JudgeMode::kCompile) {
        ro.python = judge::find_python(s.python, "eval.python");
    } else {
        // Compile-only judging runs no task script, but a KernelBench candidate's module runs to
        // record its load_inline calls: a Python is used where there is one.
        try {
            ro.python = judge::find_python(s.python, "eval.python");
        } catch (const UsageError&) {
        }
    }
    ro.compile_timeout_s = s.compile_timeout_s;
    ro.run_timeout_s = s.run_timeout_s;
    ro.gen_timeout_s = s.gen_timeout_s;
    ro.compare_timeout_s = s.compare_timeout_s;
    ro.emulate_timeout_s = s.emulate_timeout_s;
    ro.kernelbench_max_input_elements = s.kernelbench_max_input_elements;
    ro.contain = s.contain;
    ro.limits = s.limits;
    ro.work_dir = work_dir;
    ro.keep_work = keep_work;
    ro.cache_dir = judge_cache_dir();
    o.jobs = s.jobs;
    return o;
}

void judge_work_dir_check(const std::string& work_dir, const std::vector<std::string>& inputs, const std::string& what) {
    // The judge's scratch folder is removed at the end: never one cuset did not make, and never
    // over an input.
    std::error_code ec;
    const fs::path dir = work_dir;
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec) && !fs::exists(dir / kWorkMarker, ec))
        throw UsageError(what + ": the work folder '" + dir.string() + "' exists and was not made by cuset-train " + what +
                         " (its scratch folder, deleted after judging): move it away or choose another --out");
    const fs::path work = fs::weakly_canonical(dir, ec);
    for (const std::string& in : inputs) {
        if (in.empty() || ec) continue;
        const fs::path p = fs::weakly_canonical(in, ec);
        if (!ec && std::mismatch(work.begin(), work.end(), p.begin(), p.end()).first == work.end())
            throw UsageError(what + ": the input '" + in + "' is inside the work folder '" + work.string() + "', which " +
                             what + " removes when it ends; move it or choose another --out");
    }
}

void judge_work_dir_create(const std::string& work_dir, const std::string& what) {
    std::error_code ec;
    fs::create_directories(work_dir, ec);
    if (ec) throw RuntimeFailure(what + ": cannot create " + work_dir + ": " + ec.message());
    std::ofstream((fs::path(work_dir) / kWorkMarker).string()) << "scratch folder of cuset-train " << what
                                                               << "; removed after judging\n";
}

JudgeMode resolve_judge(const std::string& name, std::string* how) {
    std::string found;
    if (name == "compile") return JudgeMode::kCompile;
    if (name == "emulate") return JudgeMode::kEmulate;
    bool gpu = judge::gpu_present(&found);
    if (how) *how = found;
    if (name == "gpu") {
        if (!gpu) throw UsageError("--judge gpu: no GPU here (" + found + "); use --judge emulate or --judge compile");
        return JudgeMode::kGpu;
    }
    if (name != "auto") throw UsageError("--judge must be gpu, emulate, compile or auto, got '" + name + "'");
    return gpu ? JudgeMode::kGpu : JudgeMode::kCompile;
}

namespace {

// The folder eval writes into (--out, or beside the results file, or in the run's folder), checked:
// not a file, and none of what eval writes there is one of its inputs.
std::string eval_out_dir(const EvalRequest& req, bool generating) {
    std::string out = req.out;
    if (out.empty())
        out = !req.results.empty() ? (fs::path(req.results).parent_path() / (fs::path(req.results).stem().string() + ".eval")).string()
                                   : (fs::path(req.run_dir) / ("cudabench-level" + std::to_string(req.level))).string();
    if (out.empty()) out = ".";
    if (std::error_code ec; fs::exists(out, ec) && !fs::is_directory(out, ec))
        throw UsageError("eval: --out '" + out + "' is a file; --out names the folder eval writes eval.json, eval.html "
                         "and the results into");
    {  // none of the files written into `out` may be an input: the tasks, the results, the model's files
        std::vector<std::string> inputs = {req.tasks, req.results, req.answers_file};
        if (generating && !req.answers) {
            const std::string model = req.model.empty() ? req.generate.model : req.model;
            for (const std::string& dir : {model, req.generate.tokenizer, req.generate.adapter})
                for (const std::string& f : folder_entries(dir)) inputs.push_back(f);
            inputs.push_back(req.generate.tokenizer);
        }
        std::vector<std::string> written = {"eval.json", "eval.html", kJournalName};
        if (generating) written.insert(written.end(), {"prompts.jsonl", "generations.jsonl", "results.jsonl"});
        if (req.answers && req.answers_file.empty()) throw RuntimeFailure("eval: answers without the file they come from");
        for (int64_t t = 2; t <= req.turns; ++t)
            for (std::string f : {"prompts-turn", "generations-turn"}) written.push_back(f.append(std::to_string(t)).append(".jsonl"));
        for (const std::string& name : written) refuse_output_equal_to_input((fs::path(out) / name).string(), inputs, "eval");
        judge_work_dir_check((fs::path(out) / "work").string(), {req.tasks, req.results}, "eval");
    }
    return out;
}

// Generating: CUDABench's prompts written, K samples per task from the model (or the answers
// source), their programs extracted, results.jsonl written. `g` keeps the generation request for
// the repair turns; `tokens` the answers' token counts per task.
std::vector<ResultRecord> generated_records(const EvalRequest& req, const std::vector<Task>& tasks, const std::string& out,
                                            const TextOptions& text, const Runtime* runtime, GenerateRequest* g_out,
                                            std::map<std::string, std::vector<int64_t>>* tokens_out,
                                            std::string* results_out) {
    GenerateRequest& g = *g_out;
    std::map<std::string, std::vector<int64_t>>& tokens = *tokens_out;
    std::string& results_file = *results_out;
    std::vector<ResultRecord> records;
    // CUDABench's two messages per task, K samples each, answered by the model or the source.
    std::string prompt_lines;
    std::map<std::string, std::string> user_of;
    for (const Task& t : tasks) {
        std::string user = build_user_prompt(t, req.level, req.gpu_name);
        user_of[t.id_text] = user;
        nlohmann::json j;
        j["id"] = t.id_text;
        j["system"] = system_prompt(t);
        j["prompt"] = user;
        prompt_lines += j.dump() + "\n";
    }
    const std::string prompts = (fs::path(out) / "prompts.jsonl").string();
    atomic_write(prompts, prompt_lines, "prompts file");
    Generated gen;
    if (req.answers) {  // sample k is the source's answer (task, k, turn 1); none: no answer
        for (const Task& t : tasks)
            for (int64_t k = 1; k <= req.samples; ++k) gen.by_id[t.id_text].emplace_back(req.answers(t.id_text, k, 1), -1);
        log_info("eval: %lld sample(s) for each of %zu task(s) from %s", static_cast<long long>(req.samples), tasks.size(),
                 req.answers_file.c_str());
    } else {
        g = req.generate;
        if (!req.model.empty()) g.model = req.model;
        g.settings.n = req.samples;
        g.prompts = prompts;
        g.out = (fs::path(out) / "generations.jsonl").string();
        log_info("eval: generating %lld sample(s) for each of %zu task(s) at level %d",
                 static_cast<long long>(req.samples), tasks.size(), req.level);
        if (!runtime) throw RuntimeFailure("eval: generating needs the runtime to generate on");
        generate_run(g, text, *runtime);
        gen = read_generations(g.out);
    }
    std::string run_id = new_run_id();
    for (const Task& t : tasks) {
        ResultRecord r;
        r.id = t.id;
        r.task_name = t.task_name;
        r.prompt = user_of[t.id_text];
        r.run_id = run_id;
        for (const auto& [response, ntok] : gen.by_id[t.id_text]) {
            r.codes.push_back(response ? extract_code(t, *response) : std::nullopt);
            r.responses.push_back(response);
            tokens[t.id_text].push_back(ntok);
        }
        records.push_back(std::move(r));
    }
    results_file = (fs::path(out) / "results.jsonl").string();
    write_results(results_file, records);
    log_info("eval: %s written (CUDABench's results format)", results_file.c_str());
    return records;
}

// A results file's records, those of the selected tasks (--task, --limit) only.
std::vector<ResultRecord> loaded_records(const EvalRequest& req, const std::vector<Task>& tasks) {
    std::vector<ResultRecord> records = load_results(req.results);
    if (req.task_ids.empty() && req.limit <= 0) return records;
    std::set<std::string> keep;
    for (const Task& t : tasks) keep.insert(t.id_text);
    std::vector<ResultRecord> kept;
    for (ResultRecord& r : records)
        if (keep.count(r.id.is_string() ? r.id.get<std::string>() : r.id.dump())) kept.push_back(std::move(r));
    return kept;
}

}  // namespace

EvalOutcome eval_run(const EvalRequest& req, const TextOptions& text, const Runtime* runtime) {
    if (req.tasks.empty()) throw UsageError("eval: no tasks file given (--tasks CUDABench-Set.jsonl)");
    if (req.level < 1 || req.level > 3) throw UsageError("--level must be 1, 2 or 3");
    if (req.samples < 1) throw UsageError("--samples must be at least 1");
    if (req.turns < 1) throw UsageError("--turns must be at least 1");
    const bool generating = !req.reference && req.results.empty();
    if (req.turns > 1 && !generating)
        throw UsageError("eval: --turns above 1 needs a model to answer the repair turns; it cannot be used with "
                         "--results or --reference");
    std::vector<Task> all = load_tasks(req.tasks);
    std::vector<Task> tasks = select_tasks(all, req.task_ids, req.limit);
    if (req.reference)  // refused before anything is written
        for (const Task& t : tasks) require_reference(t);
    std::string how;
    JudgeMode mode = resolve_judge(req.judge, &how);

    EvalOutcome res;
    const std::string out = eval_out_dir(req, generating);
    fs::create_directories(out);
    res.out_dir = out;

    std::vector<ResultRecord> records;
    std::map<std::string, std::vector<int64_t>> tokens;
    std::string results_file;
    GenerateRequest g;  // generating: the request of turn 1, again for the repair turns
    if (req.reference) {
        records = reference_records(tasks);
        log_info("eval: judging the reference solutions (bench.cu) of %zu task(s)", tasks.size());
    } else if (!req.results.empty()) {
        records = loaded_records(req, tasks);
        results_file = req.results;
        log_info("eval: judging %zu result(s) of %s", records.size(), req.results.c_str());
    } else {
        records = generated_records(req, tasks, out, text, runtime, &g, &tokens, &results_file);
    }

    JudgeOptions o = judge_options_for(req.judge_settings, mode, (fs::path(out) / "work").string(), req.keep_work);
    const judge::RunnerOptions& ro = o.runner;
    o.journal = (fs::path(out) / kJournalName).string();
    int64_t total = 0;
    for (const ResultRecord& r : records) total += static_cast<int64_t>(r.codes.size());
    log_info("eval: judge %s (%s), %lld sample(s), %d job(s)", judge_label(mode), how.empty() ? "as asked" : how.c_str(),
             static_cast<long long>(total), o.jobs);
    if (mode != JudgeMode::kCompile)
        log_info("eval: gen.py and compare.py run with %s (%s, Python %s)", ro.python.executable.c_str(),
                 ro.python.origin.c_str(), ro.python.version.c_str());
    if (!ro.contain) log_warn("eval: eval.sandbox is off: the programs run unconfined, with your files and network");
    // Judges `recs` (one verdict per code, in order), with a progress bar called `what`; OUT/work
    // is made for it and removed whichever way it ends.
    auto judge_now = [&](const std::vector<ResultRecord>& recs, const std::string& what) {
        int64_t n = 0;
        for (const ResultRecord& r : recs) n += static_cast<int64_t>(r.codes.size());
        Progress progress(what, n, "samples", progress_bar_wanted(req.progress));
        JudgeOptions oo = o;
        oo.on_progress = [&](int64_t done, int64_t) { progress.update(done); };
        judge_work_dir_create(ro.work_dir, "eval");
        JudgeSummary js;
        {
            struct RemoveWork {  // OUT/work goes whichever way judging ends
                const judge::RunnerOptions& ro;
                ~RemoveWork() {
                    std::error_code ec;
                    if (!ro.keep_work) fs::remove_all(ro.work_dir, ec);
                }
            } remove_work{ro};
            StopSignalOptions quiet;
            quiet.first_message = "cuset-train: stopping the judge (its commands are killed)\n";
            quiet.second_exits = false;
            StopSignalScope stop(quiet);
            js = judge_results(all, recs, oo);
        }
        progress.finish();
        return js;
    };
    res.summary = judge_now(records, "judge");
    if (res.summary.from_journal > 0)
        log_info("eval: %lld sample(s) were judged by an earlier run that stopped (%s)",
                 static_cast<long long>(res.summary.from_journal), o.journal.c_str());
    for (TaskResult& t : res.summary.tasks) {
        auto it = tokens.find(t.id_text);
        if (it == tokens.end()) continue;
        for (size_t k = 0; k < t.samples.size() && k < it->second.size(); ++k) t.samples[k].generated_tokens = it->second[k];
    }
    if (!res.summary.notice.empty()) log_warn("eval: %s", res.summary.notice.c_str());
    res.report = make_report(res.summary, req.tasks, results_file);
    if (req.turns > 1) {
        res.report.repair = repair_turns(req, out, g, text, runtime, tasks, records, res.summary, judge_now);
        write_results(results_file, records);  // with every turn's answer and program
    }
    write_report(res.report, out);
    std::error_code ec;  // eval.json holds every verdict now: the next run judges afresh
    fs::remove(o.journal, ec);
    return res;
}

}  // namespace cuset::eval
