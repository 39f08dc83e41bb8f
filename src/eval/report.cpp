// Figures, eval.json, the console table and eval.html of a judged results file (eval/report.h).
#include "cuset/eval/report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/markup.h"
#include "cuset/core/utf8_text.h"

namespace cuset::eval {

namespace {

using ojson = nlohmann::ordered_json;

bool judged(const SampleResult& s) { return !judge::status_unjudged(s.status); }

// An unjudged sample never succeeds, whatever its stages recorded (the emulator's build fails
// after nvcc compiled it).
bool success(const SampleResult& s, bool runs) {
    return judged(s) && (runs ? s.functional.value_or(false) : s.compiled);
}

std::string pct(int64_t a, int64_t b) {
    if (b <= 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * static_cast<double>(a) / static_cast<double>(b));
    return buf;
}

std::string fixed(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

ojson ratio(int64_t a, int64_t b) { return b > 0 ? ojson(static_cast<double>(a) / static_cast<double>(b)) : ojson(nullptr); }

ojson figures_json(const Figures& f) {
    ojson j;
    j["label"] = f.label;
    j["criterion"] = f.criterion;
    j["tasks"] = f.tasks;
    j["samples"] = f.samples;
    j["samples_per_task"] = f.max_samples;
    j["no_code"] = f.no_code;
    j["compiled"] = f.compiled;
    j["compile_rate"] = ratio(f.compiled, f.samples);
    j["ran"] = f.runs() ? ojson(f.ran) : ojson(nullptr);
    j["run_rate"] = f.runs() ? ratio(f.ran, f.samples) : ojson(nullptr);
    j["run_rate_judged"] = f.runs() ? ratio(f.ran, f.samples - f.unjudged) : ojson(nullptr);
    j["functional"] = f.runs() ? ojson(f.functional) : ojson(nullptr);
    j["unjudged"] = f.unjudged;
    ojson causes = ojson::object();
    for (const auto& [cause, n] : f.unjudged_by_cause) causes[cause] = n;
    j["unjudged_by_cause"] = causes;
    j["pass@1"] = ratio(f.pass1, f.pass1_tasks);
    j["pass@1_passed"] = f.pass1;
    j["pass@1_tasks"] = f.pass1_tasks;
    j["pass@1_judged"] = ratio(f.pass1, f.pass1_judged_tasks);
    j["pass@1_judged_tasks"] = f.pass1_judged_tasks;
    j["pass@K"] = ratio(f.passk, f.passk_tasks);
    j["pass@K_passed"] = f.passk;
    j["pass@K_tasks"] = f.passk_tasks;
    j["pass@K_judged"] = ratio(f.passk, f.passk_judged_tasks);
    j["pass@K_judged_tasks"] = f.passk_judged_tasks;
    j["correctness@1"] = f.runs() ? ratio(f.correct1, f.pass1_tasks) : ojson(nullptr);
    j["correctness@K"] = f.runs() ? ratio(f.correctk, f.passk_tasks) : ojson(nullptr);
    j["correctness@1_judged"] = f.runs() ? ratio(f.correct1, f.pass1_judged_tasks) : ojson(nullptr);
    j["correctness@K_judged"] = f.runs() ? ratio(f.correctk, f.passk_judged_tasks) : ojson(nullptr);
    auto estimates = [](const std::vector<double>& v) {
        ojson est = ojson::object();
        for (size_t k = 0; k < v.size(); ++k) est[std::to_string(k + 1)] = v[k];
        return est;
    };
    j["pass@k_unbiased"] = estimates(f.pass_at);
    j["pass@k_unbiased_judged"] = estimates(f.pass_at_judged);
    j["mean_generated_tokens"] = f.mean_tokens >= 0 ? ojson(f.mean_tokens) : ojson(nullptr);
    return j;
}

ojson repair_json(const RepairReport& r) {
    ojson j;
    j["turns"] = r.turns;
    j["final"] = figures_json(r.final_figures);
    j["fixed_samples"] = r.fixed_samples;
    j["fixed_tasks"] = r.fixed_tasks;
    ojson turns = ojson::array();
    for (const TurnFigures& t : r.by_turn)
        turns.push_back({{"turn", t.turn}, {"attempts", t.attempts}, {"passed", t.passed}, {"samples_passing", t.samples_passing},
                         {"tasks_passing", t.tasks_passing}});
    j["by_turn"] = turns;
    return j;
}

const char* status_colour(SampleStatus s) {
    if (judge::status_kind(s) == judge::StatusKind::kRule) return "#6a1b9a";  // KernelBench's anti-hacking rules
    switch (s) {
        case SampleStatus::kPass: return "#2e7d32";
        case SampleStatus::kCompiled: return "#558b2f";
        case SampleStatus::kMismatch:
        case SampleStatus::kNoVerdict:
        case SampleStatus::kCompareFailed: return "#ef6c00";
        case SampleStatus::kTaskError: return "#757575";
        case SampleStatus::kRunFailed:
        case SampleStatus::kRunTimeout:
        case SampleStatus::kGenFailed: return "#c62828";
        case SampleStatus::kCompileError:
        case SampleStatus::kCompileTimeout: return "#8e0000";
        case SampleStatus::kUnjudged: return "#757575";
        case SampleStatus::kNoCode: return "#424242";
        default: return "#000";
    }
}

// "0", "1", "1.2", ...: the key of fast_p for p.
std::string p_name(double p) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%g", p);
    return buf;
}

// "KernelBench fast_p over 14 problems (sample 1 of each): fast_0 92.9% (13 correct), fast_1 -, ..."
std::string fast_p_text(const FastP& f) {
    std::string out = "KernelBench fast_p over " + std::to_string(f.tasks) + " problem(s) (sample 1 of each):";
    for (const auto& [p, v] : f.fast) {
        out += " fast_" + p_name(p) + " " + (v ? fixed(100 * *v, 1) + "%" : std::string("-"));
        if (p == 0) out += " (" + std::to_string(f.correct) + " correct)";
        out += p == 2.0 ? "" : ",";
    }
    if (!f.note.empty()) out += "; " + f.note;
    return out;
}

std::string pct_of(int64_t a, int64_t b) { return b > 0 ? pct(a, b) + " (" + std::to_string(a) + "/" + std::to_string(b) + ")" : "-"; }

}  // namespace

std::string unjudged_cause(const SampleResult& s) {
    if (s.status != SampleStatus::kUnjudged) return sample_status_name(s.status);
    // "emulator: build failed: kernel_emu.cpp:3: ..." -> "emulator: build failed";
    // "emulator: no result within the limit (timed out after 600 s): ..." -> "emulator: no result within the limit"
    size_t first = s.error.find(": ");
    size_t end = first == std::string::npos ? std::string::npos : std::min(s.error.find(": ", first + 2), s.error.find(" (", first + 2));
    return end == std::string::npos ? utf8_sanitize(s.error, 60) : utf8_sanitize(s.error.substr(0, end));
}

std::string unjudged_text(int64_t unjudged, int64_t all, const std::map<std::string, int64_t>& causes) {
    std::string out = std::to_string(unjudged) + " of " + std::to_string(all) + " samples unjudged";
    std::string list;
    for (const auto& [cause, n] : causes) list += (list.empty() ? "" : ", ") + cause + " " + std::to_string(n);
    return list.empty() ? out : out + " (" + list + ")";
}

std::string rate_text(int64_t passed, int64_t all, int64_t judged) {
    if (all <= 0) return "-";
    std::string out = pct(passed, all) + " (" + std::to_string(passed) + "/" + std::to_string(all);
    if (judged < all) out += "; judged only " + pct(passed, judged) + ", " + std::to_string(passed) + "/" + std::to_string(judged);
    return out + ")";
}

double pass_at_k(int64_t n, int64_t c, int64_t k) {
    if (k <= 0 || n <= 0 || k > n) return 0.0;
    if (n - c < k) return 1.0;
    double prod = 1.0;
    for (int64_t i = n - c + 1; i <= n; ++i) prod *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
    return 1.0 - prod;
}

namespace {

// The unbiased estimates of one set of tasks, [k-1] averaged over the tasks with n >= k.
class PassAtK {
public:
    void add(int64_t n, int64_t c) {
        if (static_cast<int64_t>(sum_.size()) < n) {
            sum_.resize(n, 0.0);
            n_.resize(n, 0);
        }
        for (int64_t k = 1; k <= n; ++k) {
            sum_[k - 1] += pass_at_k(n, c, k);
            ++n_[k - 1];
        }
    }
    std::vector<double> means() const {
        std::vector<double> out;
        for (size_t k = 0; k < sum_.size(); ++k) out.push_back(sum_[k] / static_cast<double>(n_[k]));
        return out;
    }

private:
    std::vector<double> sum_;
    std::vector<int64_t> n_;
};

}  // namespace

Figures figures_of(const std::vector<const TaskResult*>& tasks, JudgeMode mode) {
    Figures f;
    f.label = judge_label(mode);
    f.criterion = mode == JudgeMode::kCompile ? "compiled" : "functional";
    const bool runs = f.runs();
    f.tasks = static_cast<int64_t>(tasks.size());
    f.min_samples = tasks.empty() ? 0 : INT64_MAX;
    int64_t tok_n = 0;
    double tok_sum = 0;
    PassAtK all_est, judged_est;
    auto ran = [](const SampleResult& s) { return judged(s) && s.ran.value_or(false); };
    for (const TaskResult* t : tasks) {
        int64_t n_judged = 0, c = 0;
        bool any_ok = false, any_ran = false;
        const int64_t n = static_cast<int64_t>(t->samples.size());
        f.max_samples = std::max<int64_t>(f.max_samples, n);
        f.min_samples = std::min<int64_t>(f.min_samples, n);
        for (const SampleResult& s : t->samples) {
            ++f.samples;
            f.no_code += s.status == SampleStatus::kNoCode;
            f.compiled += s.compiled;
            f.ran += ran(s);
            f.functional += s.functional.value_or(false) && judged(s);
            f.unjudged += !judged(s);
            if (!judged(s)) ++f.unjudged_by_cause[unjudged_cause(s)];
            if (s.generated_tokens >= 0) {
                tok_sum += static_cast<double>(s.generated_tokens);
                ++tok_n;
            }
            n_judged += judged(s);
            c += success(s, runs);
            any_ok = any_ok || success(s, runs);
            any_ran = any_ran || ran(s);
        }
        if (n == 0) continue;
        // The headline: every task, an unjudged sample as one that did not pass.
        ++f.pass1_tasks;
        f.pass1 += success(t->samples[0], runs);
        f.correct1 += ran(t->samples[0]);
        ++f.passk_tasks;
        f.passk += any_ok;
        f.correctk += any_ran;
        all_est.add(n, c);
        // Beside it, the judged samples alone.
        f.pass1_judged_tasks += judged(t->samples[0]);
        f.passk_judged_tasks += n_judged > 0;
        judged_est.add(n_judged, c);
    }
    f.pass_at = all_est.means();
    f.pass_at_judged = judged_est.means();
    if (tok_n > 0) f.mean_tokens = tok_sum / static_cast<double>(tok_n);
    return f;
}

RepairReport repair_report(const std::vector<TaskResult>& tasks, std::vector<std::vector<std::vector<SampleResult>>> history,
                           JudgeMode mode, int64_t turns) {
    if (history.size() != tasks.size()) throw RuntimeFailure("repair_report: a history per task is needed");
    RepairReport r;
    r.turns = turns;
    const bool runs = mode != JudgeMode::kCompile;
    r.by_turn.resize(static_cast<size_t>(std::max<int64_t>(turns, 1)));
    for (size_t t = 0; t < r.by_turn.size(); ++t) r.by_turn[t].turn = static_cast<int64_t>(t) + 1;
    std::vector<TaskResult> finals = tasks;
    for (size_t i = 0; i < tasks.size(); ++i) {
        int64_t task_first = 0;  // the first turn at which one of the task's samples succeeded (0 = none)
        bool ok_at_1 = false, ok_at_end = false;
        for (size_t k = 0; k < history[i].size(); ++k) {
            const std::vector<SampleResult>& h = history[i][k];
            if (h.empty()) continue;
            int64_t first_ok = 0;
            for (size_t t = 0; t < h.size() && t < r.by_turn.size(); ++t) {
                TurnFigures& tf = r.by_turn[t];
                ++tf.attempts;
                if (success(h[t], runs)) {
                    ++tf.passed;
                    if (!first_ok) first_ok = static_cast<int64_t>(t) + 1;
                }
            }
            if (first_ok) {
                for (size_t t = static_cast<size_t>(first_ok - 1); t < r.by_turn.size(); ++t) ++r.by_turn[t].samples_passing;
                if (!task_first || first_ok < task_first) task_first = first_ok;
            }
            ok_at_1 = ok_at_1 || success(h.front(), runs);
            ok_at_end = ok_at_end || success(h.back(), runs);
            if (!success(h.front(), runs) && success(h.back(), runs)) ++r.fixed_samples;
            if (k < finals[i].samples.size()) {
                const int index = finals[i].samples[k].index;
                finals[i].samples[k] = h.back();
                finals[i].samples[k].index = index;
            }
        }
        if (task_first)
            for (size_t t = static_cast<size_t>(task_first - 1); t < r.by_turn.size(); ++t) ++r.by_turn[t].tasks_passing;
        if (!ok_at_1 && ok_at_end) ++r.fixed_tasks;
    }
    std::vector<const TaskResult*> all;
    for (const TaskResult& t : finals) all.push_back(&t);
    r.final_figures = figures_of(all, mode);
    r.history = std::move(history);
    return r;
}

std::optional<FastP> kernelbench_fast_p(const std::vector<TaskResult>& tasks, JudgeMode mode) {
    FastP f;
    for (const TaskResult& t : tasks) {
        if (!t.kernelbench || t.samples.empty()) continue;
        ++f.tasks;
        const SampleResult& s = t.samples.front();
        if (s.status != SampleStatus::kPass) continue;
        ++f.correct;
        if (!s.speedup) continue;
        ++f.timed;
        if (*s.speedup > kExcessiveSpeedup) ++f.flagged;
    }
    if (f.tasks == 0) return std::nullopt;
    const bool judged = mode != JudgeMode::kCompile;
    const bool timed = f.correct > 0 && f.timed == f.correct;
    for (double p : {0.0, 1.0, 1.2, 1.5, 2.0}) {
        std::optional<double> v;
        if (judged && (p == 0 || timed || f.correct == 0)) {
            int64_t n = 0;
            for (const TaskResult& t : tasks) {
                if (!t.kernelbench || t.samples.empty()) continue;
                const SampleResult& s = t.samples.front();
                if (s.status != SampleStatus::kPass) continue;
                if (p == 0 || (s.speedup && *s.speedup > p && *s.speedup <= kExcessiveSpeedup)) ++n;
            }
            v = static_cast<double>(n) / static_cast<double>(f.tasks);
        }
        f.fast.emplace_back(p, v);
    }
    if (!judged)
        f.note = "compile-only: no candidate ran, so neither correctness nor speed is known";
    else if (f.correct > 0 && !timed)
        f.note = "fast_p above p = 0 needs the speed-up of every correct candidate over the reference module, timed by "
                 "a GPU judge; this judge (" + std::string(judge_label(mode)) + ") timed " + std::to_string(f.timed) +
                 " of " + std::to_string(f.correct);
    if (f.flagged)
        f.note += std::string(f.note.empty() ? "" : "; ") + std::to_string(f.flagged) +
                  " speed-up(s) above 10x flagged for inspection and not credited";
    return f;
}

EvalReport make_report(const JudgeSummary& s, const std::string& tasks_file, const std::string& results_file) {
    EvalReport r;
    r.mode = s.mode;
    r.notice = s.notice;
    r.containment = s.containment;
    r.python = s.python;
    r.tasks_file = tasks_file;
    r.results_file = results_file;
    r.tasks = s.tasks;
    std::vector<const TaskResult*> all;
    std::map<std::string, std::vector<const TaskResult*>> fam;
    for (const TaskResult& t : s.tasks) {
        all.push_back(&t);
        fam[t.task_name].push_back(&t);
    }
    r.overall = figures_of(all, s.mode);
    for (const auto& [name, ts] : fam) r.families.emplace_back(name, figures_of(ts, s.mode));
    r.fast_p = kernelbench_fast_p(s.tasks, s.mode);
    return r;
}

ojson report_json(const EvalReport& r) {
    ojson j;
    j["format"] = "cuset-eval-1";
    j["judge"] = judge_label(r.mode);
    j["notice"] = r.notice;
    j["containment"] = r.containment;
    j["python"] = r.python;
    j["tasks_file"] = r.tasks_file;
    j["results_file"] = r.results_file;
    j["overall"] = figures_json(r.overall);
    ojson fams = ojson::object();
    for (const auto& [name, f] : r.families) fams[name] = figures_json(f);
    j["families"] = fams;
    if (r.fast_p) {
        ojson kb;
        kb["tasks"] = r.fast_p->tasks;
        kb["correct"] = r.fast_p->correct;
        kb["timed"] = r.fast_p->timed;
        kb["flagged"] = r.fast_p->flagged;
        ojson fp = ojson::object();
        for (const auto& [p, v] : r.fast_p->fast) fp[p_name(p)] = v ? ojson(*v) : ojson(nullptr);
        kb["fast_p"] = fp;
        kb["note"] = r.fast_p->note;
        j["kernelbench"] = kb;
    }
    ojson tasks = ojson::array();
    for (size_t i = 0; i < r.tasks.size(); ++i) {
        const TaskResult& t = r.tasks[i];
        ojson tj;
        tj["id"] = json_parse<ojson>(t.id.dump(), "task id", ExitCode::kRuntime);
        tj["task_name"] = t.task_name;
        ojson ss = ojson::array();
        for (const SampleResult& s : t.samples) {
            ojson sj;
            sj["sample"] = s.index;
            sj["status"] = sample_status_name(s.status);
            sj["compiled"] = s.compiled;
            sj["ran"] = s.ran ? ojson(*s.ran) : ojson(nullptr);
            sj["functional"] = s.functional ? ojson(*s.functional) : ojson(nullptr);
            sj["emulated"] = s.emulated;
            sj["error"] = s.error;
            sj["seconds"] = s.seconds;
            sj["generated_tokens"] = s.generated_tokens >= 0 ? ojson(s.generated_tokens) : ojson(nullptr);
            sj["containment"] = s.containment;
            if (!s.note.empty()) sj["note"] = s.note;
            ss.push_back(sj);
        }
        if (r.repair && i < r.repair->history.size())  // every turn of every sample
            for (size_t k = 0; k < ss.size() && k < r.repair->history[i].size(); ++k) {
                ojson turns = ojson::array();
                for (const SampleResult& s : r.repair->history[i][k]) {
                    ojson tj2;
                    tj2["status"] = sample_status_name(s.status);
                    tj2["error"] = s.error;
                    tj2["generated_tokens"] = s.generated_tokens >= 0 ? ojson(s.generated_tokens) : ojson(nullptr);
                    turns.push_back(tj2);
                }
                ss[k]["turns"] = turns;
            }
        tj["samples"] = ss;
        tasks.push_back(tj);
    }
    j["tasks"] = tasks;
    if (r.repair) j["repair"] = repair_json(*r.repair);
    return j;
}

std::string report_table(const EvalReport& r) {
    const Figures& o = r.overall;
    const bool runs = o.runs();
    const bool one = o.max_samples <= 1;  // K = 1: pass@K is pass@1, shown once
    std::string K = std::to_string(o.max_samples);
    std::string out;
    out += "CUDABench eval [" + o.label + "]: " + std::to_string(o.tasks) + " tasks, " + std::to_string(o.samples) +
           " samples (" + (o.min_samples == o.max_samples ? std::to_string(o.max_samples) : std::to_string(o.min_samples) + "-" + K) +
           " per task)\n";
    if (!r.notice.empty()) out += "note: " + r.notice + "\n";
    std::string crit = runs ? "" : " (compile-only)";
    char line[640];
    std::snprintf(line, sizeof line, "%-32s %6s %9s %9s %24s %24s\n", "family", "tasks", "compiled", runs ? "ran" : "ran(n/a)",
                  ("pass@1" + crit).c_str(), one ? "" : ("pass@" + K + crit).c_str());
    out += line;
    auto row = [&](const std::string& name, const Figures& f) {
        std::snprintf(line, sizeof line, "%-32s %6lld %9s %9s %24s %24s\n", utf8_visible(utf8_sanitize(name, name.size() > 32 ? 29 : 32)).c_str(),
                      static_cast<long long>(f.tasks), pct(f.compiled, f.samples).c_str(),
                      runs ? pct(f.ran, f.samples).c_str() : "-", pct_of(f.pass1, f.pass1_tasks).c_str(),
                      one ? "" : pct_of(f.passk, f.passk_tasks).c_str());
        out += line;
    };
    for (const auto& [name, f] : r.families) row(name, f);
    row("overall", o);
    out += "pass@1" + crit + ": " + rate_text(o.pass1, o.pass1_tasks, o.pass1_judged_tasks) + "\n";
    if (!one) out += "pass@" + K + crit + ": " + rate_text(o.passk, o.passk_tasks, o.passk_judged_tasks) + "\n";
    if (o.unjudged) out += unjudged_text(o.unjudged, o.samples, o.unjudged_by_cause) + ", each counted as not passing\n";
    auto estimates = [&](const std::string& what, const std::vector<double>& v) {
        out += what + crit + ":";
        for (size_t k = 0; k < v.size(); ++k) out += " k=" + std::to_string(k + 1) + " " + fixed(v[k], 4);
        out += "\n";
    };
    if (!one) estimates("unbiased pass@k", o.pass_at);
    if (!one && o.unjudged) estimates("unbiased pass@k, judged only", o.pass_at_judged);
    if (runs)
        out += "CUDABench correctness (exit 0): @1 " + pct_of(o.correct1, o.pass1_tasks) + (one ? "" : ", @" + K + " " +
               pct_of(o.correctk, o.passk_tasks)) + "; functionality: @1 " + pct_of(o.pass1, o.pass1_tasks) +
               (one ? "" : ", @" + K + " " + pct_of(o.passk, o.passk_tasks)) + "\n";
    out += "mean generated tokens per sample: " + (o.mean_tokens >= 0 ? fixed(o.mean_tokens, 1) : std::string("n/a")) + "\n";
    if (r.fast_p) out += fast_p_text(*r.fast_p) + "\n";
    if (r.repair) {
        const RepairReport& rp = *r.repair;
        const Figures& f = rp.final_figures;
        const std::string T = std::to_string(rp.turns);
        out += "repair turns (up to " + T + " per sample, the judge's finding as the next user turn):\n";
        out += "  pass@1" + crit + " at turn 1 " + pct_of(o.pass1, o.pass1_tasks) + ", after " + T + " turns " +
               pct_of(f.pass1, f.pass1_tasks) + "\n";
        if (!one)
            out += "  pass@" + K + crit + " at turn 1 " + pct_of(o.passk, o.passk_tasks) + ", after " + T + " turns " +
                   pct_of(f.passk, f.passk_tasks) + "\n";
        out += "  fixed by repair: " + std::to_string(rp.fixed_samples) + " sample(s) that failed at turn 1; " +
               std::to_string(rp.fixed_tasks) + " task(s) without a passing sample at turn 1\n";
        std::snprintf(line, sizeof line, "  %4s %9s %9s %16s %14s\n", "turn", "attempts", "passed", "samples passing",
                      "tasks passing");
        out += line;
        for (const TurnFigures& t : rp.by_turn) {
            std::snprintf(line, sizeof line, "  %4lld %9lld %9lld %16s %14s\n", static_cast<long long>(t.turn),
                          static_cast<long long>(t.attempts), static_cast<long long>(t.passed),
                          pct_of(t.samples_passing, o.samples).c_str(), pct_of(t.tasks_passing, o.tasks).c_str());
            out += line;
        }
    }
    return out;
}

namespace {

// eval.html's repair section: the figures after T turns and, per turn, the share of samples and
// tasks passing by then, drawn as bars.
std::string repair_html(const RepairReport& rp, const Figures& o, const std::string& crit) {
    const Figures& f = rp.final_figures;
    const std::string T = std::to_string(rp.turns), K = std::to_string(o.max_samples);
    const bool one = o.max_samples <= 1;
    std::string h = "<h2>Repair turns</h2>\n<p>Up to " + T +
                    " turns per sample: a failed program's verdict (the compiler's first error, the run's failure, the "
                    "mismatch) goes back as the next user turn.<br><b>pass@1" + html_escape(crit) + ": turn 1 " +
                    pct_of(o.pass1, o.pass1_tasks) + ", after " + T + " turns " + pct_of(f.pass1, f.pass1_tasks) + "</b>";
    if (!one)
        h += "<br><b>pass@" + K + html_escape(crit) + ": turn 1 " + pct_of(o.passk, o.passk_tasks) + ", after " + T +
             " turns " + pct_of(f.passk, f.passk_tasks) + "</b>";
    h += "<br>fixed by repair: " + std::to_string(rp.fixed_samples) + " sample(s) that failed at turn 1; " +
         std::to_string(rp.fixed_tasks) + " task(s) without a passing sample at turn 1</p>\n";
    h += "<table><tr><th>turn</th><th>attempts</th><th>passed</th><th>samples passing by this turn</th>"
         "<th>tasks passing by this turn</th></tr>\n";
    auto bar = [](int64_t a, int64_t b, const char* colour) {
        const double w = b > 0 ? 200.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0;
        return "<div style=\"display:inline-block;vertical-align:middle;width:" + fixed(w, 1) + "px;height:10px;background:" +
               colour + "\"></div> " + pct_of(a, b);
    };
    for (const TurnFigures& t : rp.by_turn)
        h += "<tr><td class=num>" + std::to_string(t.turn) + "</td><td class=num>" + std::to_string(t.attempts) +
             "</td><td class=num>" + std::to_string(t.passed) + "</td><td>" + bar(t.samples_passing, o.samples, "#2e7d32") +
             "</td><td>" + bar(t.tasks_passing, o.tasks, "#1565c0") + "</td></tr>\n";
    return h + "</table>\n";
}

}  // namespace

std::string report_html(const EvalReport& r) {
    const Figures& o = r.overall;
    const bool runs = o.runs();
    std::string K = std::to_string(o.max_samples);
    std::string crit = runs ? "" : " (compile-only)";
    std::string h;
    h += "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>CUDABench eval</title>\n<style>\n"
         "body{font-family:sans-serif;margin:20px;color:#222}table{border-collapse:collapse;margin:10px 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}th{background:#f0f0f0}"
         ".num{text-align:right}.st{color:#fff;font-weight:bold;white-space:nowrap}"
         ".err{font-family:monospace;font-size:12px;max-width:700px;word-break:break-all}"
         ".notice{background:#fff3cd;border:1px solid #e0c060;padding:6px 10px;display:inline-block}\n"
         "</style></head><body>\n";
    h += "<h1>CUDABench evaluation <small>[" + html_escape(o.label) + "]</small></h1>\n";
    h += "<p>tasks: " + html_escape(r.tasks_file) + (r.results_file.empty() ? "" : "<br>results: " + html_escape(r.results_file)) +
         "<br>" + std::to_string(o.tasks) + " tasks, " + std::to_string(o.samples) + " samples</p>\n";
    if (!r.notice.empty()) h += "<p class=\"notice\">" + html_escape(r.notice) + "</p>\n";
    const bool one = o.max_samples <= 1;
    h += "<p><b>pass@1" + html_escape(crit) + ": " + html_escape(rate_text(o.pass1, o.pass1_tasks, o.pass1_judged_tasks)) +
         "</b>" +
         (one ? std::string()
              : "<br><b>pass@" + K + html_escape(crit) + ": " +
                    html_escape(rate_text(o.passk, o.passk_tasks, o.passk_judged_tasks)) + "</b>") +
         (o.unjudged ? "<br>" + html_escape(unjudged_text(o.unjudged, o.samples, o.unjudged_by_cause)) +
                           ": each counted as not passing (the judged-only rates leave them out)"
                     : std::string()) +
         "<br>containment: " + html_escape(r.containment) + "</p>\n";
    h += "<h2>Figures</h2>\n<table><tr><th>family</th><th>tasks</th><th>compiled</th><th>ran</th><th>pass@1" + crit +
         "</th><th>pass@1 judged only</th>" +
         (one ? std::string() : "<th>pass@" + K + crit + "</th><th>pass@" + K + " judged only</th>") +
         "<th>unjudged samples</th></tr>\n";
    auto row = [&](const std::string& name, const Figures& f, bool bold) {
        std::string b0 = bold ? "<b>" : "", b1 = bold ? "</b>" : "";
        h += "<tr><td>" + b0 + html_escape(name) + b1 + "</td><td class=num>" + std::to_string(f.tasks) + "</td><td class=num>" +
             pct(f.compiled, f.samples) + "</td><td class=num>" + (runs ? pct(f.ran, f.samples) : "-") + "</td><td class=num>" +
             pct_of(f.pass1, f.pass1_tasks) + "</td><td class=num>" + pct_of(f.pass1, f.pass1_judged_tasks) + "</td>" +
             (one ? std::string()
                  : "<td class=num>" + pct_of(f.passk, f.passk_tasks) + "</td><td class=num>" +
                        pct_of(f.passk, f.passk_judged_tasks) + "</td>") +
             "<td class=num>" + std::to_string(f.unjudged) + "</td></tr>\n";
    };
    row("overall", o, true);
    for (const auto& [name, f] : r.families) row(name, f, false);
    auto estimates = [&](const std::string& what, const std::vector<double>& v) {
        h += what + crit + ":";
        for (size_t k = 0; k < v.size(); ++k) h += " k=" + std::to_string(k + 1) + ": " + fixed(v[k], 4) + ";";
    };
    h += "</table>\n<p>";
    estimates("unbiased pass@k", o.pass_at);
    if (o.unjudged) {
        h += "<br>";
        estimates("unbiased pass@k, judged only", o.pass_at_judged);
    }
    h += "<br>mean generated tokens per sample: " + (o.mean_tokens >= 0 ? fixed(o.mean_tokens, 1) : std::string("n/a")) + "</p>\n";
    if (r.fast_p) h += "<h2>KernelBench</h2>\n<p>" + html_escape(fast_p_text(*r.fast_p)) + "</p>\n";
    if (r.repair) h += repair_html(*r.repair, o, crit);
    h += "<h2>Tasks</h2>\n<table><tr><th>id</th><th>task</th>";
    for (int64_t k = 1; k <= o.max_samples; ++k) h += "<th>sample " + std::to_string(k) + "</th>";
    h += "<th>first error</th></tr>\n";
    for (size_t i = 0; i < r.tasks.size(); ++i) {
        const TaskResult& t = r.tasks[i];
        h += "<tr><td class=num>" + html_escape(t.id_text) + "</td><td>" + html_escape(t.task_name) + "</td>";
        std::string err;
        for (int64_t k = 0; k < o.max_samples; ++k) {
            if (k >= static_cast<int64_t>(t.samples.size())) {
                h += "<td></td>";
                continue;
            }
            const SampleResult& s = t.samples[k];
            h += std::string("<td class=st title=\"") + html_escape(s.error) + "\" style=\"background:" +
                 status_colour(s.status) + "\">" +
                 sample_status_name(s.status) + (s.emulated && s.ran ? " (emu)" : "");
            if (r.repair && i < r.repair->history.size() && static_cast<size_t>(k) < r.repair->history[i].size())
                for (size_t t = 1; t < r.repair->history[i][static_cast<size_t>(k)].size(); ++t) {  // the later turns
                    const SampleResult& l = r.repair->history[i][static_cast<size_t>(k)][t];
                    h += std::string(" &rarr; <span title=\"") + html_escape(l.error) + "\" style=\"padding:0 3px;background:" +
                         status_colour(l.status) + "\">" + sample_status_name(l.status) + "</span>";
                }
            h += "</td>";
            if (err.empty() && !s.error.empty()) err = "#" + std::to_string(s.index) + ": " + s.error;
        }
        h += "<td class=err>" + html_escape(err) + "</td></tr>\n";
    }
    h += "</table>\n</body></html>\n";
    return h;
}

void write_report(const EvalReport& r, const std::string& dir) {
    std::filesystem::create_directories(dir);
    atomic_write((std::filesystem::path(dir) / "eval.json").string(), json_text(report_json(r), 2) + "\n", "eval report");
    atomic_write((std::filesystem::path(dir) / "eval.html").string(), report_html(r), "eval page");
}

}  // namespace cuset::eval
