// `cuset-train data build`: rounds of answers -> judge -> repair turns, then the keep policy and
// the outputs (databuild/build_run.h).
#include "cuset/databuild/build_run.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/core/signals.h"
#include "cuset/data/decontaminate.h"
#include "cuset/databuild/attempt_log.h"
#include "cuset/databuild/build_report.h"
#include "cuset/eval/eval_run.h"
#include "cuset/eval/repair.h"

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace cuset::databuild {

const char* train_format_name(TrainFormat f) { return f == TrainFormat::kPrompt ? "prompt" : "messages"; }

TrainFormat train_format_parse(const std::string& name) {
    if (name == "prompt") return TrainFormat::kPrompt;
    if (name == "messages") return TrainFormat::kMessages;
    throw UsageError("--format must be prompt or messages, got '" + name + "'");
}

namespace {

constexpr int kSettingsVersion = 1;
judge::Status status_of(const std::string& name) {
    judge::Status s;
    if (!eval::status_parse(name, &s)) throw InputError("unknown attempt status '" + quote_bounded(name) + "' in build.jsonl");
    return s;
}

// The user turn after an attempt of build.jsonl at `task` (eval's renderer).
std::string repair_turn(const eval::Task& task, const std::string& status, const std::string& error) {
    return eval::repair_turn(task, status_of(status), error);
}

// The settings that decide which attempts a build makes and what they are judged as; the keep
// policy, the training format and `against` act on the finished attempts and may change.
ordered_json settings_of(const std::vector<eval::Task>& tasks, const BuildOptions& o) {
    Hasher h;
    for (const eval::Task& t : tasks)
        h.add(t.id_text).add(t.task_name).add(t.task_description).add(t.bench_cu).add(t.gen_py).add(t.compare_py)
            .add(t.level_prompt[0]).add(t.level_prompt[1]).add(t.level_prompt[2]).add(t.gpu);
    ordered_json j;
    j["version"] = kSettingsVersion;
    j["tasks"] = h.hex();
    j["samples"] = o.samples;
    j["rounds"] = o.rounds;
    j["level"] = o.level;
    j["gpu_name"] = o.gpu_name;
    j["judge"] = judge::judge_mode_name(o.judge.runner.mode);
    j["source"] = o.source_key;
    return j;
}

void check_settings(const std::string& path, const ordered_json& want) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        atomic_write(path, want.dump(2) + "\n", "build settings");
        return;
    }
    json have = json_read_file(path, "build settings");
    if (!have.is_object())
        throw InputError(path + ": not a build's settings; move the output folder away to start afresh");
    for (const auto& [key, value] : want.items()) {
        if (have.contains(key) && have[key] == json::parse(value.dump())) continue;
        const std::string was = have.contains(key) ? have[key].dump() : "nothing";
        throw UsageError("data build: the output folder holds a build made with other settings (" + key + ": " +
                         quote_bounded(was) + " there, " + quote_bounded(value.dump()) +
                         " now); run it with the same settings to continue, or choose another --out");
    }
}

}  // namespace

void build_output_check(const BuildOptions& opts) {
    const fs::path out = opts.out;
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec))
        throw UsageError("data build: --out '" + opts.out + "' is a file; name a folder (it receives train.jsonl, "
                         "build.jsonl, build.json and build.html)");
    // No file the build writes is one it reads, through any link.
    const std::vector<std::string> inputs = {opts.tasks_file, opts.candidates_file, opts.against};
    for (const char* name :
         {"train.jsonl", "build.json", "build.html", "build.jsonl", "build-settings.json", "generations.jsonl"})
        refuse_output_equal_to_input((out / name).string(), inputs, "data build");
    eval::judge_work_dir_check((out / "work").string(), inputs, "data build");
}

namespace {

// One build's state across its parts: the tasks and options, the attempt log, each task's user
// prompt, the figures being made.
struct Build {
    const std::vector<eval::Task>& tasks;
    const BuildOptions& opts;
    CandidateSource& source;
    AttemptLog& log;
    fs::path out;
    std::string work;
    judge::Status pass_status;  // pass, or compiled under compile-only
    std::vector<std::string> user_of;
    std::map<std::string, size_t> index_of;
    BuildSummary sum;

    const AttemptRecord* record_at(size_t i, int64_t k, int64_t r) const {
        auto it = log.records().find(AttemptKey{tasks[i].id_text, k, r});
        return it == log.records().end() ? nullptr : &it->second;
    }
    StoppedBySignal stopped() const {
        return StoppedBySignal(strprintf("data build: stopped by signal %d; %zu attempt(s) are in %s, and the same "
                                         "command continues the build",
                                         signals_received(), log.records().size(), (out / "build.jsonl").c_str()));
    }
};

// Per task, what build.json's per_task rows count.
struct TaskRow {
    int64_t samples_passed = 0, attempts = 0, first_round = 0, kept = 0;
};

void check_build_options(const std::vector<eval::Task>& tasks, const BuildOptions& opts) {
    if (opts.out.empty()) throw UsageError("data build: no output folder (--out DIR)");
    if (opts.samples < 1) throw UsageError("--samples must be at least 1");
    if (opts.rounds < 1) throw UsageError("--rounds must be at least 1");
    if (opts.level < 1 || opts.level > 3) throw UsageError("--level must be 1, 2 or 3");
    if (!opts.tokenizer) throw RuntimeFailure("data build: no tokenizer to count the answers' tokens with");
    if (opts.keep == KeepPolicy::kFastest && opts.judge.runner.mode != judge::JudgeMode::kGpu)
        throw UsageError("--keep fastest needs run times measured on a GPU (--judge gpu)");
    if (tasks.empty()) throw InputError(opts.tasks_file + ": no task to build from");
}

// Round r's requests: every sample not yet judged at r whose chain is still open (each earlier
// attempt failed with a finding a repair turn can carry), its conversation the chain so far.
std::vector<Request> round_requests(const Build& b, int64_t r) {
    const std::vector<eval::Task>& tasks = b.tasks;
    const BuildOptions& opts = b.opts;
    const std::vector<std::string>& user_of = b.user_of;
    std::vector<Request> todo;
    for (size_t i = 0; i < tasks.size(); ++i) {
        for (int64_t k = 1; k <= opts.samples; ++k) {
            if (b.record_at(i, k, r)) continue;  // judged before a restart
            Request q;
            q.key = {tasks[i].id_text, k, r};
            q.conversation.id = q.key.name();
            q.conversation.messages.push_back({"system", eval::system_prompt(tasks[i])});
            q.conversation.messages.push_back({"user", user_of[i]});
            bool open = true;
            for (int64_t p = 1; p < r && open; ++p) {
                const AttemptRecord* a = b.record_at(i, k, p);
                const std::string turn = a ? repair_turn(tasks[i], a->status, a->error) : "";
                open = !turn.empty();
                if (open) {
                    q.conversation.messages.push_back({"assistant", a->response});
                    q.conversation.messages.push_back({"user", turn});
                }
            }
            if (open) todo.push_back(std::move(q));
        }
    }
    return todo;
}

// Round r: the answers to `todo` judged, each verdict appended to the attempt log as it comes.
void judge_round(Build& b, int64_t r, const std::vector<Request>& todo, const std::vector<Answer>& answers) {
    const std::vector<eval::Task>& tasks = b.tasks;
    const BuildOptions& opts = b.opts;
    const auto& index_of = b.index_of;
    std::vector<eval::ResultRecord> records;
    std::vector<std::pair<const Request*, int64_t>> judged;  // request, answer tokens
    for (size_t q = 0; q < todo.size(); ++q) {
        if (!answers[q].response) continue;  // no answer: the chain ends
        const std::string& resp = *answers[q].response;
        const eval::Task& t = tasks[index_of.at(todo[q].key.task)];
        eval::ResultRecord rec;
        rec.id = t.id;
        rec.task_name = t.task_name;
        rec.responses.push_back(resp);
        rec.codes.push_back(eval::extract_code(t, resp));
        records.push_back(std::move(rec));
        const int64_t ntok = answers[q].tokens >= 0 ? answers[q].tokens
                                                    : static_cast<int64_t>(opts.tokenizer->encode(resp, false).ids.size());
        judged.emplace_back(&todo[q], ntok);
    }
    if (records.empty()) return;

    eval::JudgeOptions jo = opts.judge;
    jo.runner.work_dir = (fs::path(b.work) / ("round-" + std::to_string(r))).string();
    eval::judge_work_dir_create(b.work, "data build");
    eval::judge_work_dir_create(jo.runner.work_dir, "data build");
    std::atomic<int64_t> passed{0};
    Progress progress(strprintf("build round %lld/%lld", static_cast<long long>(r), static_cast<long long>(opts.rounds)),
                      static_cast<int64_t>(records.size()), "attempts", opts.progress_bar);
    jo.on_progress = [&](int64_t done, int64_t) {
        const int64_t p = passed.load();
        progress.update(done, strprintf("pass %lld/%lld (%.0f%%)", static_cast<long long>(p), static_cast<long long>(done),
                                        done ? 100.0 * static_cast<double>(p) / static_cast<double>(done) : 0.0));
    };
    jo.on_sample = [&](size_t idx, const eval::SampleResult& s) {
        // Once a stop is requested the judge kills its commands: a verdict from then on may be
        // the kill's ("nvcc stopped"), not the program's, and is judged again on resume.
        if (signals_stop_requested()) return;
        AttemptRecord a;
        a.key = judged[idx].first->key;
        a.status = judge::status_name(s.status);
        a.error = s.error;
        a.response = *records[idx].responses[0];
        a.tokens = judged[idx].second;
        a.seconds = s.seconds;
        a.run_seconds = s.run_seconds;
        a.emulated = s.emulated;
        b.log.append(a);
        if (s.status == b.pass_status) ++passed;
    };
    eval::JudgeSummary js;
    try {
        js = eval::judge_results(tasks, records, jo);
    } catch (const judge::JudgeEnvironmentError&) {
        throw;
    } catch (const Error&) {
        if (signals_stop_requested()) throw b.stopped();
        throw;
    }
    progress.finish(strprintf("pass %lld/%zu", static_cast<long long>(passed.load()), records.size()));
    if (b.sum.notice.empty() && !js.notice.empty()) {
        b.sum.notice = js.notice;
        log_warn("data build: %s", js.notice.c_str());
    }
    std::error_code ec;
    if (!opts.judge.runner.keep_work) fs::remove_all(jo.runner.work_dir, ec);
}

// The figures of every round and task from the attempts alone, and the passing samples (each
// sample's first passing attempt) as candidates for the keep policy.
void tally(Build& b, std::vector<Candidate>* cands_out, std::vector<const AttemptRecord*>* attempt_of,
           std::vector<TaskRow>* rows_out) {
    const std::vector<eval::Task>& tasks = b.tasks;
    const BuildOptions& opts = b.opts;
    BuildSummary& sum = b.sum;
    std::vector<Candidate>& cands = *cands_out;
    std::vector<const AttemptRecord*>& cand_attempt = *attempt_of;
    std::vector<TaskRow>& rows = *rows_out;
    rows.assign(tasks.size(), TaskRow{});
    sum.rounds.resize(static_cast<size_t>(opts.rounds));
    for (int64_t r = 1; r <= opts.rounds; ++r) sum.rounds[static_cast<size_t>(r - 1)].round = r;
    for (size_t i = 0; i < tasks.size(); ++i) {
        int64_t task_first = 0;
        for (int64_t k = 1; k <= opts.samples; ++k) {
            for (int64_t r = 1; r <= opts.rounds; ++r) {
                const AttemptRecord* a = b.record_at(i, k, r);
                if (!a) break;
                RoundFigures& f = sum.rounds[static_cast<size_t>(r - 1)];
                ++f.attempts;
                ++rows[i].attempts;
                ++sum.attempts;
                sum.attempt_tokens += a->tokens;
                sum.judge_seconds += a->seconds;
                if (judge::status_unjudged(status_of(a->status))) ++f.unjudged;
                if (a->status != judge::status_name(b.pass_status)) continue;
                ++f.passed;
                ++rows[i].samples_passed;
                for (int64_t later = r; later <= opts.rounds; ++later) ++sum.rounds[static_cast<size_t>(later - 1)].samples_passed;
                task_first = task_first ? std::min(task_first, r) : r;
                Candidate c;
                c.task = i;
                c.sample = k;
                c.tokens = a->tokens;
                c.run_seconds = a->run_seconds;
                c.prompt = b.user_of[i];
                c.program = eval::extract_code(tasks[i], a->response).value_or("");
                cands.push_back(std::move(c));
                cand_attempt.push_back(a);
                break;
            }
        }
        rows[i].first_round = task_first;
        if (task_first)
            for (int64_t later = task_first; later <= opts.rounds; ++later) ++sum.rounds[static_cast<size_t>(later - 1)].tasks_passed;
    }
}

// train.jsonl's lines: the kept candidates not found in the benchmark, in the training format.
std::string train_lines(Build& b, const std::vector<Candidate>& cands, const std::vector<const AttemptRecord*>& cand_attempt,
                        const KeepResult& kr, std::vector<TaskRow>& rows) {
    const std::vector<eval::Task>& tasks = b.tasks;
    const BuildOptions& opts = b.opts;
    BuildSummary& sum = b.sum;
    std::optional<BenchmarkIndex> bench;
    if (!opts.against.empty()) bench = benchmark_index_load(opts.against, opts.ngram);
    std::string train;
    for (size_t ci : kr.kept) {
        const Candidate& c = cands[ci];
        const AttemptRecord* a = cand_attempt[ci];
        if (bench && benchmark_overlap(*bench, {c.prompt, a->response}).shared > 0) {
            ++sum.contaminated;
            continue;
        }
        ordered_json j;
        j["id"] = tasks[c.task].id_text + "-s" + std::to_string(c.sample);
        if (opts.format == TrainFormat::kPrompt) {
            j["system"] = eval::system_prompt(tasks[c.task]);
            j["prompt"] = c.prompt;
            j["response"] = a->response;
        } else {
            ordered_json msgs = ordered_json::array();
            msgs.push_back({{"role", "system"}, {"content", eval::system_prompt(tasks[c.task])}});
            msgs.push_back({{"role", "user"}, {"content", c.prompt}});
            for (int64_t r = 1; r <= a->key.round; ++r) {
                const AttemptRecord* p = b.record_at(c.task, c.sample, r);
                msgs.push_back({{"role", "assistant"}, {"content", p->response}});
                if (r < a->key.round) msgs.push_back({{"role", "user"}, {"content", repair_turn(tasks[c.task], p->status, p->error)}});
            }
            j["messages"] = std::move(msgs);
        }
        train += j.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
        ++sum.kept;
        ++rows[c.task].kept;
        sum.kept_tokens += c.tokens;
    }

    return train;
}

// build.json: the settings, the figures by round and by task, every sample's chain of verdicts.
ordered_json build_json(const Build& b, const std::vector<TaskRow>& rows, size_t passing_samples) {
    const std::vector<eval::Task>& tasks = b.tasks;
    const BuildOptions& opts = b.opts;
    const BuildSummary& sum = b.sum;
    ordered_json j;
    j["tasks_file"] = opts.tasks_file;
    j["source"] = b.source.describe();
    j["judge"] = sum.judge_label;
    j["criterion"] = sum.criterion;
    j["notice"] = sum.notice;
    j["samples"] = opts.samples;
    j["rounds"] = opts.rounds;
    j["level"] = opts.level;
    j["keep"] = keep_policy_name(opts.keep);
    j["train_format"] = train_format_name(opts.format);
    j["against"] = opts.against.empty() ? ordered_json() : ordered_json(opts.against);
    j["tasks"] = sum.tasks;
    j["attempts"] = sum.attempts;
    ordered_json rounds = ordered_json::array();
    for (const RoundFigures& f : sum.rounds) {
        ordered_json rj;
        rj["round"] = f.round;
        rj["attempts"] = f.attempts;
        rj["passed"] = f.passed;
        rj["unjudged"] = f.unjudged;
        rj["tasks_passed"] = f.tasks_passed;
        rj["task_pass_rate"] = sum.tasks ? static_cast<double>(f.tasks_passed) / static_cast<double>(sum.tasks) : 0.0;
        rj["samples_passed"] = f.samples_passed;
        rj["sample_pass_rate"] = sum.samples ? static_cast<double>(f.samples_passed) / static_cast<double>(sum.samples) : 0.0;
        rounds.push_back(std::move(rj));
    }
    j["by_round"] = std::move(rounds);
    j["passing_samples"] = static_cast<int64_t>(passing_samples);
    j["kept"] = sum.kept;
    j["duplicates"] = {{"exact", sum.exact_duplicates}, {"near", sum.near_duplicates}};
    j["contaminated"] = sum.contaminated;
    j["tokens_per_kept_sample"] = sum.kept ? ordered_json(static_cast<double>(sum.kept_tokens) / static_cast<double>(sum.kept))
                                           : ordered_json();
    j["attempt_tokens_per_kept_sample"] =
        sum.kept ? ordered_json(static_cast<double>(sum.attempt_tokens) / static_cast<double>(sum.kept)) : ordered_json();
    j["judge_seconds"] = sum.judge_seconds;
    ordered_json per_task = ordered_json::array();
    for (size_t i = 0; i < tasks.size(); ++i) {
        ordered_json t;
        t["id"] = tasks[i].id;
        t["task_name"] = tasks[i].task_name;
        t["attempts"] = rows[i].attempts;
        t["samples_passed"] = rows[i].samples_passed;
        t["first_pass_round"] = rows[i].first_round ? ordered_json(rows[i].first_round) : ordered_json();
        t["kept"] = rows[i].kept;
        ordered_json chains = ordered_json::array();
        for (int64_t k = 1; k <= opts.samples; ++k) {
            ordered_json chain = ordered_json::array();
            for (int64_t r = 1; r <= opts.rounds; ++r)
                if (const AttemptRecord* a = b.record_at(i, k, r))
                    chain.push_back({{"status", a->status}, {"error", a->error}, {"tokens", a->tokens}});
            chains.push_back(std::move(chain));
        }
        t["samples"] = std::move(chains);
        per_task.push_back(std::move(t));
    }
    j["per_task"] = std::move(per_task);
    return j;
}

}  // namespace

BuildSummary build_run(const std::vector<eval::Task>& tasks, CandidateSource& source, const BuildOptions& opts) {
    check_build_options(tasks, opts);
    const judge::JudgeMode mode = opts.judge.runner.mode;
    const fs::path out = opts.out;
    build_output_check(opts);
    fs::create_directories(out);
    check_settings((out / "build-settings.json").string(), settings_of(tasks, opts));
    AttemptLog log((out / "build.jsonl").string());
    if (log.torn_bytes() > 0)
        log_warn("data build: cut a torn last line (%lld bytes) off %s", static_cast<long long>(log.torn_bytes()),
                 (out / "build.jsonl").string().c_str());
    if (log.resumed() > 0)
        log_info("data build: continuing: %lld attempt(s) already judged in %s", static_cast<long long>(log.resumed()),
                 (out / "build.jsonl").string().c_str());
    const judge::Status pass_status = mode == judge::JudgeMode::kCompile ? judge::Status::kCompiled : judge::Status::kPass;
    Build b{tasks, opts, source, log, out, (out / "work").string(), pass_status, {}, {}, {}};
    b.user_of.resize(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
        b.user_of[i] = eval::build_user_prompt(tasks[i], opts.level, opts.gpu_name);
        b.index_of[tasks[i].id_text] = i;
    }
    BuildSummary& sum = b.sum;
    sum.judge_label = judge::judge_label(mode);
    sum.criterion = mode == judge::JudgeMode::kCompile ? "compiled" : "functional";
    sum.tasks = static_cast<int64_t>(tasks.size());
    sum.samples = sum.tasks * opts.samples;
    sum.resumed = log.resumed();

    log_info("data build: %zu task(s) x %lld sample(s), up to %lld round(s), answers from %s, judge %s, %d job(s)",
             tasks.size(), static_cast<long long>(opts.samples), static_cast<long long>(opts.rounds),
             source.describe().c_str(), judge::judge_label(mode), opts.judge.jobs);
    StopSignalOptions quiet;
    quiet.first_message =
        "cuset-train: stopping the build (the attempts judged so far are kept; the same command continues it)\n";
    StopSignalScope stop(quiet);
    struct RemoveWork {  // OUT/work goes whichever way the build ends
        std::string dir;
        bool keep;
        ~RemoveWork() {
            std::error_code ec;
            if (!keep) fs::remove_all(dir, ec);
        }
    } remove_work{b.work, opts.judge.runner.keep_work};

    for (int64_t r = 1; r <= opts.rounds; ++r) {
        const std::vector<Request> todo = round_requests(b, r);
        if (todo.empty()) continue;
        if (signals_stop_requested()) throw b.stopped();
        log_info("data build: round %lld of %lld: %zu attempt(s)", static_cast<long long>(r),
                 static_cast<long long>(opts.rounds), todo.size());
        std::vector<Answer> answers;
        try {
            answers = source.answer(todo);
        } catch (const StoppedBySignal&) {  // a model stops within a step
            throw b.stopped();
        }
        if (signals_stop_requested()) throw b.stopped();
        judge_round(b, r, todo, answers);
    }

    // ---- the figures, the keep policy and the outputs, from the attempts alone
    std::vector<Candidate> cands;
    std::vector<const AttemptRecord*> cand_attempt;
    std::vector<TaskRow> rows;
    tally(b, &cands, &cand_attempt, &rows);
    const KeepResult kr = keep_select(cands, opts.keep);
    sum.exact_duplicates = kr.exact_duplicates;
    sum.near_duplicates = kr.near_duplicates;
    const std::string train = train_lines(b, cands, cand_attempt, kr, rows);
    sum.json = build_json(b, rows, cands.size());

    atomic_write((out / "train.jsonl").string(), train, "training data");
    atomic_write((out / "build.json").string(), json_text(sum.json, 2) + "\n", "build report");
    atomic_write((out / "build.html").string(), build_html(sum.json), "build report");
    log_info("data build: %lld of %lld task(s) passed, %lld sample(s) kept (%lld exact and %lld near duplicate(s), "
             "%lld contaminated dropped) -> %s",
             static_cast<long long>(sum.rounds.back().tasks_passed), static_cast<long long>(sum.tasks),
             static_cast<long long>(sum.kept), static_cast<long long>(sum.exact_duplicates),
             static_cast<long long>(sum.near_duplicates), static_cast<long long>(sum.contaminated),
             (out / "train.jsonl").c_str());
    return sum;
}

}  // namespace cuset::databuild
