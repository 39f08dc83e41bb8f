// `cuset-train data check`: sample-by-sample validation of a JSONL file, the fenced programs
// compiled (and run) through the command's ProgramChecker, the filtered file and the JSON report.
// Reading samples for training is data.cpp's job, not this file's.
#include "cuset/data/data_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/core/utf8_text.h"
#include "cuset/data/data.h"
#include "cuset/data/dataset.h"
#include "cuset/data/decontaminate.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/chat_format.h"
#include "cuset/text/tokenizer.h"

namespace cuset {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ---------------------------------------------------------------- samples and their verdicts

struct Finding {
    std::string code;
    std::string message;
};

struct Sample {
    int64_t line = 0;      // 1-based line in the input
    std::string raw;       // the line as it is in the file (without the newline)
    std::string written;   // what the filtered file gets (raw, or with UTF-8 replaced)
    Conversation conv;
    bool parsed = false;
    std::vector<Finding> rejected;  // non-empty = refused
    std::vector<Finding> warnings;
    int64_t n_tokens = -1, n_response_tokens = -1;
    uint32_t tag_bits = 0;
    bool tagged = false;
    ProgramStep compile, run;

    bool ok() const { return rejected.empty(); }
};

std::vector<Sample> read_samples(const std::string& path, int64_t* n_lines) {
    LineReader in(path, "data file");
    std::vector<Sample> out;
    std::string line;
    int64_t n = 0;
    while (in.next(line)) {
        ++n;
        std::string_view body = line;
        if (!body.empty() && body.back() == '\r') body.remove_suffix(1);
        if (data_line_blank(body)) continue;
        Sample s;
        s.line = n;
        s.raw = line;
        out.push_back(std::move(s));
    }
    *n_lines = n;
    return out;
}

std::string collapse_whitespace(const std::string& s) {
    std::string out;
    bool space = false;
    for (char c : s) {
        bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
        if (ws) {
            space = !out.empty();
        } else {
            if (space) out += ' ';
            space = false;
            out += c;
        }
    }
    return out;
}

// Content identity of a sample (its id does not count): roles and texts, unambiguous.
std::string sample_key(const Conversation& c, bool normalise) {
    json k = json::array();
    for (const Message& m : c.messages)
        k.push_back({m.role, normalise ? collapse_whitespace(m.content) : m.content});
    return k.dump();
}

void mark_duplicates(std::vector<Sample>& samples) {
    std::unordered_map<std::string, int64_t> exact, normalised;
    for (Sample& s : samples) {
        if (!s.ok()) continue;
        std::string k = sample_key(s.conv, false);
        std::string kn = sample_key(s.conv, true);
        if (auto it = exact.find(k); it != exact.end()) {
            s.rejected.push_back({"duplicate", strprintf("duplicate of line %lld", (long long)it->second)});
        } else if (auto jt = normalised.find(kn); jt != normalised.end()) {
            s.rejected.push_back({"whitespace_duplicate",
                                  strprintf("same as line %lld up to whitespace", (long long)jt->second)});
        } else {
            exact.emplace(std::move(k), s.line);
            normalised.emplace(std::move(kn), s.line);
        }
    }
}

// ---------------------------------------------------------------- programs

std::string clip(const std::string& s, size_t n = 300) { return utf8_sanitize(s, n); }

// ---------------------------------------------------------------- statistics and output

json quantiles(std::vector<int64_t> v) {
    if (v.empty()) return nullptr;
    std::sort(v.begin(), v.end());
    // Linear interpolation between order statistics (numpy's default "linear" method).
    auto q = [&](double p) {
        double pos = p * double(v.size() - 1);
        size_t lo = static_cast<size_t>(std::floor(pos));
        size_t hi = std::min(lo + 1, v.size() - 1);
        return double(v[lo]) + (pos - double(lo)) * double(v[hi] - v[lo]);
    };
    double sum = 0;
    for (int64_t x : v) sum += double(x);
    return {{"min", v.front()}, {"mean", sum / double(v.size())}, {"p50", q(0.5)},
            {"p95", q(0.95)},  {"max", v.back()}};
}

bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(b, ec) && fs::equivalent(a, b, ec)) return true;
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// The text pipeline of the configuration, when a tokenizer is configured and present.
struct TextSetup {
    TextPipeline pipe;  // tokenizer and formatter null when token statistics are skipped
    std::string tokenizer_path;
    std::string notice;  // why token statistics are skipped
};

TextSetup load_text(const DataCheckOptions& o, const TextOptions& text) {
    TextSetup t;
    t.tokenizer_path = text.tokenizer;
    bool asked = !o.config.empty() || !o.tokenizer.empty();
    if (!asked && !fs::exists(t.tokenizer_path)) {
        t.notice = "no tokenizer at " + t.tokenizer_path + " (give --tokenizer PATH or --config FILE)";
        return t;
    }
    try {
        t.pipe = text_pipeline_from(text);
    } catch (const Error& e) {
        if (asked) throw;  // the user named this tokenizer: its problem is the answer
        t.pipe = TextPipeline{};
        t.notice = std::string("the default tokenizer is unusable here: ") + e.what();
    }
    return t;
}

}  // namespace

bool data_extract_program(std::string_view text, std::string* program) {
    struct Block {
        std::string lang, body;
    };
    std::vector<Block> blocks;
    size_t pos = 0;
    bool in_fence = false;
    char fence_char = 0;
    size_t fence_len = 0;
    Block cur;
    while (pos <= text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        std::string_view line = text.substr(pos, eol - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        size_t indent = line.find_first_not_of(' ');
        bool fence_line = false;
        size_t run = 0;
        char ch = 0;
        if (indent != std::string_view::npos && indent <= 3) {
            ch = line[indent];
            if (ch == '`' || ch == '~') {
                while (indent + run < line.size() && line[indent + run] == ch) ++run;
                fence_line = run >= 3;
            }
        }
        if (!in_fence && fence_line) {
            std::string info(line.substr(indent + run));
            size_t b = info.find_first_not_of(" \t");
            info = b == std::string::npos ? "" : info.substr(b);
            size_t e = info.find_first_of(" \t{");
            std::string lang = info.substr(0, e);
            std::transform(lang.begin(), lang.end(), lang.begin(), [](unsigned char c) { return std::tolower(c); });
            cur = Block{lang, ""};
            in_fence = true;
            fence_char = ch;
            fence_len = run;
        } else if (in_fence && fence_line && ch == fence_char && run >= fence_len &&
                   line.find_first_not_of(" \t", indent + run) == std::string_view::npos) {
            blocks.push_back(std::move(cur));
            in_fence = false;
        } else if (in_fence) {
            cur.body.append(line);
            cur.body += '\n';
        }
        if (eol == text.size()) break;
        pos = eol + 1;
    }
    if (in_fence) blocks.push_back(std::move(cur));  // unclosed: runs to the end

    auto has_main = [](const std::string& body) {
        for (size_t p = body.find("main"); p != std::string::npos; p = body.find("main", p + 4)) {
            bool start_ok = p == 0 || !(std::isalnum((unsigned char)body[p - 1]) || body[p - 1] == '_');
            size_t q = body.find_first_not_of(" \t", p + 4);
            if (start_ok && q != std::string::npos && body[q] == '(') return true;
        }
        return false;
    };
    auto pick = [&](auto&& accept) -> bool {
        const Block* first = nullptr;
        for (const Block& b : blocks) {
            if (!accept(b)) continue;
            if (has_main(b.body)) {
                *program = b.body;
                return true;
            }
            if (!first) first = &b;
        }
        if (first) *program = first->body;
        return first != nullptr;
    };
    if (pick([](const Block& b) { return b.lang == "cuda" || b.lang == "cu" || b.lang == "cuh"; }))
        return true;
    return pick([](const Block& b) {
        static const char* kLangs[] = {"", "c", "cpp", "c++", "cc", "cxx"};
        bool lang_ok = std::any_of(std::begin(kLangs), std::end(kLangs),
                                   [&](const char* l) { return b.lang == l; });
        return lang_ok && b.body.find("__global__") != std::string::npos;
    });
}

namespace {

// The options' checks, before any file is read.
void check_options(const DataCheckOptions& o) {
    if (o.input.empty()) throw UsageError("data check: no input file given");
    if (!fs::exists(o.input)) throw InputError("cannot open data file " + o.input);
    require_regular_file(o.input, "data file");
    if (!o.against.empty()) require_regular_file(o.against, "benchmark file");
    for (const std::string* p : {&o.out, &o.report})
        if (!p->empty()) refuse_output_equal_to_input(*p, {o.input, o.against}, "data check");
    if (!o.out.empty() && !o.report.empty() && same_file(o.out, o.report))
        throw UsageError("--out and --report name the same file " + o.out);
    if ((o.compile || o.run) && !o.programs) throw UsageError("data check: --compile/--run without the tools to compile with");
}

// 1. Records: UTF-8, JSON, schema, empty fields.
void parse_records(std::vector<Sample>& samples, bool replace_utf8) {
    for (Sample& s : samples) {
        RecordProblem problem;
        Record rec;
        s.parsed = data_parse_record(s.raw, {RecordUse::kTraining, replace_utf8}, &rec, &problem);
        if (!s.parsed) {
            s.rejected.push_back({problem.code, problem.message});
            continue;
        }
        s.conv = std::move(rec.conversation);
        const std::string& fixed = rec.fixed_line;
        // The filtered file must load without data.invalid_utf8=replace: it gets the repaired line.
        s.written = fixed.empty() ? s.raw : fixed;
        if (!fixed.empty())
            s.warnings.push_back({"invalid_utf8_replaced", "invalid UTF-8 replaced by U+FFFD"});
    }
}

// 2b. Overlap with a benchmark (--against): a shared span of o.ngram tokens in the prompt or
// response rejects a sample. Returns the report's "against" part (null without --against).
json check_against(std::vector<Sample>& samples, const DataCheckOptions& o) {
    if (o.against.empty()) return nullptr;
    const BenchmarkIndex bench = benchmark_index_load(o.against, o.ngram);
    int64_t flagged = 0;
    for (Sample& s : samples) {
        if (!s.ok()) continue;
        std::vector<std::string_view> texts;
        for (const Message& m : s.conv.messages)
            if (m.role != "system") texts.push_back(m.content);
        const Overlap ov = benchmark_overlap(bench, texts);
        if (ov.shared == 0) continue;
        ++flagged;
        s.rejected.push_back(
            {"contaminated", strprintf("shares %lld %d-token span(s) with %s, %lld of them with task '%s' (first: '%s')",
                                       (long long)ov.shared, o.ngram, o.against.c_str(), (long long)ov.task_shared,
                                       bench.task_names[ov.task].c_str(), ov.first.c_str())});
    }
    return {{"file", o.against}, {"tasks", bench.task_names.size()}, {"ngram", o.ngram}, {"contaminated", flagged}};
}

// 3. Token lengths with the text pipeline (when there is a tokenizer) and the tagger's coverage.
void measure_samples(std::vector<Sample>& samples, const TextSetup& text, const TaggerOptions& tagger_opts,
                     const DataCheckOptions& o, bool bar) {
    Progress scan(text.pipe.formatter ? "tokenize+tag" : "tag", static_cast<int64_t>(samples.size()), "samples", bar);
    for (size_t i = 0; i < samples.size(); ++i) {
        Sample& s = samples[i];
        scan.update(static_cast<int64_t>(i));
        if (!s.ok()) continue;
        uint32_t bits = 0;
        for (const Message& m : s.conv.messages)
            if (m.role == "assistant" || m.role == kTextRole)
                for (const TagSpan& t : tag_text(m.content, tagger_opts)) bits |= t.bits;
        s.tag_bits = bits;
        s.tagged = true;
        if (!(bits & kTagKernel)) s.warnings.push_back({"no_kernel", "the tagger found no kernel body"});
        if (!(bits & kTagLaunch)) s.warnings.push_back({"no_launch", "the tagger found no kernel launch"});
        if (text.pipe.formatter) {
            FormattedSample f;
            try {
                f = text.pipe.formatter->format(s.conv);
            } catch (const InputError& e) {
                s.rejected.push_back({"format_error", e.what()});
                continue;
            }
            s.n_tokens = static_cast<int64_t>(f.ids.size());
            s.n_response_tokens = 0;
            for (size_t t = 0; t < f.ids.size(); ++t) s.n_response_tokens += f.trainable[t] != 0;
            if (s.n_tokens > o.max_seq_len)
                s.warnings.push_back(
                    {"too_long", strprintf("%lld tokens > data.max_seq_len %lld: the trainer %s it",
                                           (long long)s.n_tokens, (long long)o.max_seq_len,
                                           o.drop_too_long ? "drops" : "truncates")});
        }
    }

    scan.update(static_cast<int64_t>(samples.size()));
    scan.finish();
}

// 4. Compile (and with --run, run) the programs of the samples still standing, through
// o.programs, and turn their steps into verdicts. Returns the report's "compile" and "run" parts
// (run null without --run).
std::pair<json, json> compile_programs(std::vector<Sample>& samples, const DataCheckOptions& o) {
    std::vector<size_t> todo;
    std::vector<std::string> programs, labels;
    for (size_t i = 0; i < samples.size(); ++i) {
        Sample& s = samples[i];
        if (!s.ok()) continue;
        std::string program;
        bool found = false;
        for (auto it = s.conv.messages.rbegin(); it != s.conv.messages.rend() && !found; ++it)
            if (it->role == "assistant" || it->role == kTextRole)
                found = data_extract_program(it->content, &program);
        if (!found) {
            s.rejected.push_back({"no_program", "no ```cuda code block with a program to compile"});
            continue;
        }
        todo.push_back(i);
        programs.push_back(std::move(program));
        labels.push_back(strprintf("L%lld", (long long)s.line));
    }
    const std::vector<ProgramSteps> steps = o.programs->check(programs, labels);
    if (steps.size() != todo.size()) throw RuntimeFailure("data check: the program checker answered for " +
                                                          std::to_string(steps.size()) + " of " +
                                                          std::to_string(todo.size()) + " programs");
    for (size_t k = 0; k < todo.size(); ++k) {
        Sample& s = samples[todo[k]];
        s.compile = steps[k].compile;
        s.run = steps[k].run;
        if (s.compile.status == "timeout")
            s.rejected.push_back({"compile_timeout", "nvcc " + s.compile.message});
        else if (s.compile.status == "fail")
            s.rejected.push_back({"compile_error", s.compile.message});
        else if (s.run.status == "timeout")
            s.rejected.push_back({"run_timeout", "program " + s.run.message});
        else if (s.run.status == "fail")
            s.rejected.push_back({"run_failed", s.run.message});
    }
    return {o.programs->compile_info(), o.run ? o.programs->run_info() : json(nullptr)};
}

// 5. The verdicts over the samples: the summary, the counts the report and the console give, the
// filtered file's text and the report's per-sample rows.
struct Tally {
    DataCheckSummary sum;
    std::map<std::string, int64_t> reasons, warnings;  // kept samples' warnings only
    std::vector<int64_t> tok_total, tok_resp;          // token counts of the kept samples
    int64_t n_no_kernel = 0, n_no_launch = 0, n_too_long = 0;
    int64_t c_pass = 0, c_fail = 0, c_timeout = 0, r_pass = 0, r_fail = 0, r_timeout = 0;
    std::string filtered;
    json rows = json::array();
};

Tally tally(const std::vector<Sample>& samples, int64_t n_lines, bool compile, bool run) {
    Tally t;
    DataCheckSummary& sum = t.sum;
    sum.lines = n_lines;
    sum.samples = static_cast<int64_t>(samples.size());
    for (const Sample& s : samples) {
        if (s.ok()) {
            ++sum.kept;
            if (!s.warnings.empty()) ++sum.warnings;
            t.filtered += s.written;
            t.filtered += '\n';
            if (s.n_tokens >= 0) {
                t.tok_total.push_back(s.n_tokens);
                t.tok_resp.push_back(s.n_response_tokens);
            }
        } else {
            ++sum.rejected;
            ++t.reasons[s.rejected.front().code];
        }
        for (const Finding& w : s.warnings) {
            if (!s.ok()) break;  // the counts describe the kept samples
            ++t.warnings[w.code];
            t.n_no_kernel += w.code == "no_kernel";
            t.n_no_launch += w.code == "no_launch";
            t.n_too_long += w.code == "too_long";
        }
        t.c_pass += s.compile.status == "pass";
        t.c_fail += s.compile.status == "fail";
        t.c_timeout += s.compile.status == "timeout";
        t.r_pass += s.run.status == "pass";
        t.r_fail += s.run.status == "fail";
        t.r_timeout += s.run.status == "timeout";

        json row = {{"line", s.line}, {"status", !s.ok() ? "rejected" : s.warnings.empty() ? "ok" : "warning"}};
        if (s.parsed && !s.conv.id.empty()) row["id"] = s.conv.id;
        auto findings = [](const std::vector<Finding>& v) {
            json a = json::array();
            for (const Finding& f : v) a.push_back({{"code", f.code}, {"message", f.message}});
            return a;
        };
        row["reasons"] = findings(s.rejected);
        row["warnings"] = findings(s.warnings);
        if (s.n_tokens >= 0) row["tokens"] = {{"total", s.n_tokens}, {"response", s.n_response_tokens}};
        if (s.tagged) row["tags"] = {{"kernel", bool(s.tag_bits & kTagKernel)}, {"launch", bool(s.tag_bits & kTagLaunch)}};
        auto step = [](const ProgramStep& r) {
            json j = {{"status", r.status}, {"seconds", std::round(r.seconds * 100) / 100}};
            if (r.status == "fail") j["exit_code"] = r.exit_code;
            if (!r.message.empty()) j["message"] = r.message;
            return j;
        };
        if (compile) row["compile"] = step(s.compile);
        if (run) row["run"] = step(s.run);
        t.rows.push_back(std::move(row));
    }
    return t;
}

// The JSON report (--report).
json report_of(const DataCheckOptions& o, const TextSetup& text, const Tally& t,
               const json& against_info, json compile_info, json run_info, bool compile) {
    const DataCheckSummary& sum = t.sum;
    json rep;
    rep["input"] = o.input;
    rep["lines"] = sum.lines;
    rep["samples"] = sum.samples;
    rep["kept"] = sum.kept;
    rep["rejected"] = sum.rejected;
    rep["warned"] = sum.warnings;
    rep["rejected_by_reason"] = t.reasons;
    rep["warnings_by_code"] = t.warnings;
    if (text.pipe.formatter) {
        rep["tokens"] = {{"tokenizer", text.tokenizer_path}, {"chat_format", text.pipe.formatter->name()},
                         {"max_seq_len", o.max_seq_len}, {"over_max_seq_len", t.n_too_long},
                         {"total", quantiles(t.tok_total)}, {"response", quantiles(t.tok_resp)}};
    } else {
        rep["tokens"] = {{"skipped", text.notice}};
    }
    rep["tagger"] = {{"no_kernel", t.n_no_kernel}, {"no_launch", t.n_no_launch}};
    if (!against_info.is_null()) rep["against"] = against_info;
    if (compile) {
        compile_info["passed"] = t.c_pass;
        compile_info["failed"] = t.c_fail;
        compile_info["timed_out"] = t.c_timeout;
        rep["compile"] = compile_info;
    }
    if (o.run) {
        run_info["passed"] = t.r_pass;
        run_info["failed"] = t.r_fail;
        run_info["timed_out"] = t.r_timeout;
        rep["run"] = run_info;
    }
    rep["output"] = o.out.empty() ? json(nullptr) : json(o.out);
    rep["per_sample"] = t.rows;
    return rep;
}

// The console summary, then one line per rejected or warned sample.
void print_summary(const DataCheckOptions& o, const TextSetup& text, const Tally& t,
                   const std::vector<Sample>& samples, const json& against_info, const json& compile_info,
                   const json& run_info, bool compile) {
    const DataCheckSummary& sum = t.sum;
    std::printf("data check %s: %lld samples in %lld lines: %lld kept (%lld with warnings), %lld rejected\n",
                o.input.c_str(), (long long)sum.samples, (long long)sum.lines, (long long)sum.kept,
                (long long)sum.warnings, (long long)sum.rejected);
    auto counts = [](const std::map<std::string, int64_t>& m) {
        std::string s;
        for (const auto& [k, v] : m) s += strprintf("%s%s %lld", s.empty() ? "" : ", ", k.c_str(), (long long)v);
        return s;
    };
    if (!t.reasons.empty()) std::printf("  rejected: %s\n", counts(t.reasons).c_str());
    if (!t.warnings.empty()) std::printf("  warnings: %s\n", counts(t.warnings).c_str());
    if (text.pipe.formatter && !t.tok_total.empty()) {
        json tq = quantiles(t.tok_total), rq = quantiles(t.tok_resp);
        std::printf("  tokens (%s, %s): total min %lld / mean %.0f / p95 %.0f / max %lld; response mean %.0f; "
                    "over data.max_seq_len %lld: %lld\n",
                    text.pipe.formatter->name().c_str(), text.tokenizer_path.c_str(), tq["min"].get<long long>(),
                    tq["mean"].get<double>(), tq["p95"].get<double>(), tq["max"].get<long long>(),
                    rq["mean"].get<double>(), (long long)o.max_seq_len, (long long)t.n_too_long);
    } else if (!text.pipe.formatter) {
        std::printf("  tokens: skipped: %s\n", text.notice.c_str());
    }
    std::printf("  tagger: %lld kept sample(s) without a kernel, %lld without a launch\n",
                (long long)t.n_no_kernel, (long long)t.n_no_launch);
    if (!against_info.is_null())
        std::printf("  against %s (%lld tasks, %d-token spans): %lld sample(s) overlap\n", o.against.c_str(),
                    against_info.at("tasks").get<long long>(), o.ngram, against_info.at("contaminated").get<long long>());
    if (compile)
        std::printf("  compile (%s, %s, %d jobs, timeout %gs): %lld passed, %lld failed, %lld timed out\n",
                    compile_info.at("version").get<std::string>().c_str(),
                    compile_info.at("flags").get<std::string>().c_str(), compile_info.at("jobs").get<int>(),
                    compile_info.at("timeout_s").get<double>(), (long long)t.c_pass, (long long)t.c_fail,
                    (long long)t.c_timeout);
    if (o.run && run_info.at("gpu").get<bool>())
        std::printf("  run (%s): %lld passed, %lld failed, %lld timed out\n",
                    run_info.at("probe").get<std::string>().c_str(), (long long)t.r_pass, (long long)t.r_fail,
                    (long long)t.r_timeout);
    const size_t kMaxListed = 50;
    size_t listed = 0, unlisted = 0;
    for (const Sample& s : samples) {
        if (s.ok() && s.warnings.empty()) continue;
        if (listed == kMaxListed) {
            ++unlisted;
            continue;
        }
        ++listed;
        std::string id = s.parsed && !s.conv.id.empty() ? " (" + clip(s.conv.id, 60) + ")" : "";
        const std::vector<Finding>& f = s.ok() ? s.warnings : s.rejected;
        std::string what;
        for (const Finding& x : f) what += (what.empty() ? "" : "; ") + x.code + ": " + x.message;
        std::printf("  line %lld%s %s: %s\n", (long long)s.line, id.c_str(), s.ok() ? "warning" : "REJECTED",
                    what.c_str());
    }
    if (unlisted) std::printf("  ... %zu more in the report\n", unlisted);
    if (!o.out.empty()) std::printf("  filtered: %s (%lld samples)\n", o.out.c_str(), (long long)sum.kept);
    if (!o.report.empty()) std::printf("  report: %s\n", o.report.c_str());
    std::fflush(stdout);
}

}  // namespace

DataCheckSummary data_check(const DataCheckOptions& o, const TextOptions& text_options) {
    check_options(o);
    // The tools are checked before any work, so a missing compiler fails fast.
    const bool compile = o.compile || o.run;  // --run builds first
    if (compile) o.programs->prepare();

    int64_t n_lines = 0;
    std::vector<Sample> samples = read_samples(o.input, &n_lines);
    parse_records(samples, text_options.load.replace_invalid_utf8);
    mark_duplicates(samples);  // 2. among the well-formed samples, the first occurrence kept
    const json against_info = check_against(samples, o);
    const TextSetup text = load_text(o, text_options);
    measure_samples(samples, text, text_options.tagger, o, progress_bar_wanted(o.progress));
    json compile_info = nullptr, run_info = nullptr;
    if (compile) std::tie(compile_info, run_info) = compile_programs(samples, o);

    const Tally t = tally(samples, n_lines, compile, o.run);
    const json rep = report_of(o, text, t, against_info, compile_info, run_info, compile);
    if (!o.out.empty()) atomic_write(o.out, t.filtered);
    if (!o.report.empty()) atomic_write(o.report, json_text(rep, 2) + "\n");
    print_summary(o, text, t, samples, against_info, compile_info, run_info, compile);
    return t.sum;
}

}  // namespace cuset
