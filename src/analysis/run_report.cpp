// run_report: report.html of one or more run folders, curves drawn as inline SVG (see the header).
#include "cuset/analysis/run_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/core/markup.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Okabe-Ito, colour-blind safe (the yellow left out: unreadable on white).
const char* const kPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#999999"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
const char* const kDash[] = {"", "7 4", "2 3"};

// A metrics line's number at `key`; "section.name" is a count inside an object of counts (a
// GRPO step's judge statuses: a status the step did not see counts 0).
double value_of(const json& m, const std::string& key) {
    const size_t dot = key.find('.');
    if (dot != std::string::npos) {
        auto sec = m.find(key.substr(0, dot));
        if (sec == m.end() || !sec->is_object()) return kNaN;
        auto v = sec->find(key.substr(dot + 1));
        return v == sec->end() ? 0.0 : v->is_number() ? v->get<double>() : kNaN;
    }
    auto it = m.find(key);
    if (it == m.end() || !it->is_number()) return kNaN;
    return it->get<double>();
}

struct Series {
    std::string label;
    std::string key;
    bool eval = false;  // from the eval lines (dashed, with markers)
};

struct Chart {
    std::string title;
    std::string ylabel;
    std::vector<Series> series;
    bool optional = false;  // drawn only when a run has values for it (one objective's curves)
};

std::vector<Chart> charts() {
    return {
        {"Loss (the objective's)", "loss", {{"train", "loss", false}, {"eval", "eval_loss", true}}},
        {"Cross-entropy (plain, every response token)", "nats / token", {{"train", "ce", false}, {"eval", "eval_ce", true}},
         true},
        {"Learning rate", "lr", {{"lr", "lr", false}}},
        {"Gradient norm (global)", "grad norm", {{"grad norm", "grad_norm", false}}},
        {"Response tokens", "fraction",
         {{"kept", "kept_fraction", false},
          {"sensitive", "sensitive_fraction", false},
          {"kept only because sensitive", "kept_only_sensitive_fraction", false}},
         true},
        {"Sample weights", "weight", {{"min", "w_min", false}, {"mean", "w_mean", false}, {"max", "w_max", false}}, true},
        // GRPO (objective.method grpo): rewards.jsonl holds every completion behind these.
        {"Reward (mean over the step's completions)", "reward", {{"reward", "reward", false}, {"std", "reward_std", false}}, true},
        {"Judge verdicts per step", "completions",
         {{"pass", "status.pass", false},
          {"compiled", "status.compiled", false},
          {"compile error", "status.compile-error", false},
          {"no program", "status.no-code", false},
          {"run failed", "status.run-failed", false},
          {"mismatch", "status.mismatch", false},
          {"unjudged", "status.unjudged", false}},
         true},
        // Multi-turn GRPO (objective.grpo.turns > 1).
        {"Pass rate per turn (answers given at that turn)", "fraction",
         {{"turn 1", "pass_turn1", false}, {"turn 2", "pass_turn2", false}, {"turn 3", "pass_turn3", false},
          {"turn 4", "pass_turn4", false}},
         true},
        {"Multi-turn trajectories", "fraction or turns",
         {{"fixed by a later turn", "fixed_fraction", false}, {"turns per trajectory", "mean_turns", false}},
         true},
        {"KL to the reference", "nats / token", {{"KL", "kl", false}}, true},
        {"Clipped importance ratios", "fraction",
         {{"low", "clip_ratio_low", false}, {"high", "clip_ratio_high", false}, {"region", "clip_ratio_region", false}},
         true},
        {"Completion length", "tokens", {{"mean", "completion_length", false}}, true},
        {"Step time", "s", {{"generate", "generate_s", false}, {"judge", "judge_s", false}, {"update", "update_s", false}}, true},
        {"Throughput", "tokens / s", {{"tokens/s", "tokens_per_s", false}}},
        {"Peak device memory", "MiB", {{"peak memory", "peak_mem_mb", false}}},
    };
}

// 1-2-5 tick spacing for about `n` intervals over [lo, hi].
double nice_step(double lo, double hi, int n) {
    double span = hi - lo;
    if (!(span > 0)) span = std::max(1.0, std::fabs(hi));
    double raw = span / n;
    double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double f = raw / mag;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nice * mag;
}

std::string tick_label(double v, double step) {
    double r = std::round(v / step) * step;
    if (std::fabs(r) < step * 1e-9) r = 0.0;
    return strprintf("%g", r);
}

struct Axis {
    double lo = 0, hi = 1, step = 0.2;
};

// A range covering [lo, hi] in whole tick steps; a flat curve gets a band around its value.
Axis nice_axis(double lo, double hi, int n) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1, 0.2};
    if (hi - lo <= std::max(std::fabs(hi), std::fabs(lo)) * 1e-12) {
        double pad = lo == 0 ? 1.0 : std::fabs(lo) * 0.1;
        lo -= pad;
        hi += pad;
    }
    Axis a;
    a.step = nice_step(lo, hi, n);
    a.lo = std::floor(lo / a.step + 1e-9) * a.step;
    a.hi = std::ceil(hi / a.step - 1e-9) * a.step;
    return a;
}

std::vector<CurvePoint> curve(const RunData& run, const Series& s) {
    std::vector<CurvePoint> pts;
    const std::vector<json>& lines = s.eval ? run.evals : run.steps;
    // A count that no line holds (a judge status no step saw) has no curve, not a line at 0.
    const size_t dot = s.key.find('.');
    if (dot != std::string::npos) {
        const std::string sec = s.key.substr(0, dot), name = s.key.substr(dot + 1);
        bool seen = false;
        for (const json& m : lines) {
            auto it = m.find(sec);
            seen = seen || (it != m.end() && it->is_object() && it->contains(name));
        }
        if (!seen) return pts;
    }
    for (const json& m : lines) pts.push_back({value_of(m, "step"), value_of(m, s.key)});
    return pts;
}

bool any_finite(const std::vector<CurvePoint>& pts) {
    for (const CurvePoint& p : pts)
        if (std::isfinite(p.y)) return true;
    return false;
}

// Plot geometry of one chart (SVG pixels).
constexpr double kW = 600, kH = 330, kLeft = 78, kRight = 18, kTop = 36, kBottom = 50;

std::string chart_svg(const Chart& c, const std::vector<RunData>& runs, int chart_id, std::string* legend_html) {
    const bool multi = runs.size() > 1;
    std::vector<std::vector<std::vector<CurvePoint>>> data(runs.size());  // [run][series]
    double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
    bool have = false;
    for (size_t r = 0; r < runs.size(); ++r)
        for (const Series& s : c.series) {
            data[r].push_back(curve(runs[r], s));
            for (const CurvePoint& p : data[r].back()) {
                if (!std::isfinite(p.y) || !std::isfinite(p.x)) continue;
                have = true;
                xmin = std::min(xmin, p.x), xmax = std::max(xmax, p.x);
                ymin = std::min(ymin, p.y), ymax = std::max(ymax, p.y);
            }
        }
    const double x0 = kLeft, x1 = kW - kRight, y0 = kTop, y1 = kH - kBottom;
    std::string s = strprintf("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
                              "font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n",
                              kW, kH, kW, kH);
    s += strprintf("<title>%s</title>\n", xml_escape(c.title).c_str());
    s += strprintf("<text x=\"%.1f\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">%s</text>\n",
                   (x0 + x1) / 2, xml_escape(c.title).c_str());
    s += strprintf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" stroke=\"#333333\"/>\n", x0, y0,
                   x1 - x0, y1 - y0);
    if (!have) {
        s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#777777\">no values in %s</text>\n",
                       (x0 + x1) / 2, (y0 + y1) / 2, multi ? "these runs" : "this run");
        s += "</svg>\n";
        return s;
    }
    // A little room above and below so that no point sits on the frame (none below 0 for
    // quantities that cannot be negative).
    const double pad = 0.04 * (ymax - ymin);
    Axis ax = nice_axis(xmin, xmax, 6);
    Axis ay = nice_axis(ymin >= 0 ? std::max(0.0, ymin - pad) : ymin - pad, ymax + pad, 5);
    if (xmin == xmax) ax = nice_axis(std::max(0.0, xmin - 1), xmin + 1, 2);  // one step: a small range around it
    auto px = [&](double x) { return x0 + (x - ax.lo) / (ax.hi - ax.lo) * (x1 - x0); };
    auto py = [&](double y) { return y1 - (y - ay.lo) / (ay.hi - ay.lo) * (y1 - y0); };
    // Grid, ticks, labels.
    for (double v = ay.lo; v <= ay.hi + ay.step * 1e-6; v += ay.step) {
        double y = py(v);
        if (v > ay.lo + ay.step * 1e-6 && v < ay.hi - ay.step * 1e-6)
            s += strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>\n", x0, y, x1, y);
        s += strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n", x0 - 5, y, x0, y);
        s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", x0 - 8, y + 4,
                       xml_escape(tick_label(v, ay.step)).c_str());
    }
    for (double v = ax.lo; v <= ax.hi + ax.step * 1e-6; v += ax.step) {
        double x = px(v);
        if (v > ax.lo + ax.step * 1e-6 && v < ax.hi - ax.step * 1e-6)
            s += strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#f0f0f0\"/>\n", x, y0, x, y1);
        s += strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n", x, y1, x, y1 + 5);
        s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, y1 + 18,
                       xml_escape(tick_label(v, ax.step)).c_str());
    }
    s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">step</text>\n", (x0 + x1) / 2, kH - 10);
    const double lx = 16, ly = (y0 + y1) / 2;
    s += strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\">%s</text>\n", lx, ly,
                   lx, ly, xml_escape(c.ylabel).c_str());
    s += strprintf("<clipPath id=\"plot%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>\n", chart_id,
                   x0 - 4, y0 - 4, x1 - x0 + 8, y1 - y0 + 8);
    s += strprintf("<g clip-path=\"url(#plot%d)\" fill=\"none\" stroke-width=\"1.6\" stroke-linejoin=\"round\">\n", chart_id);
    const size_t buckets = static_cast<size_t>(x1 - x0);
    std::string legend;
    for (size_t r = 0; r < runs.size(); ++r)
        for (size_t k = 0; k < c.series.size(); ++k) {
            const std::vector<CurvePoint>& raw = data[r][k];
            if (!any_finite(raw)) continue;
            const char* color = kPalette[(multi ? r : k) % kPaletteSize];
            const char* dash = multi ? kDash[k % 3] : (c.series[k].eval ? kDash[1] : "");
            std::vector<CurvePoint> pts = downsample_minmax(raw, buckets);
            std::string d;
            bool pen = false;
            for (const CurvePoint& p : pts) {
                if (!std::isfinite(p.y)) {
                    pen = false;
                    continue;
                }
                d += strprintf("%s%.1f %.1f ", pen ? "L" : "M", px(p.x), py(p.y));
                pen = true;
            }
            s += strprintf("<path d=\"%s\" stroke=\"%s\"%s%s/>\n", d.c_str(), color, *dash ? " stroke-dasharray=\"" : "",
                           *dash ? (std::string(dash) + "\"").c_str() : "");
            // Markers where the points are few (eval, short runs): a one-step curve is a dot.
            size_t n_finite = 0;
            for (const CurvePoint& p : raw) n_finite += std::isfinite(p.y);
            if (c.series[k].eval || n_finite <= 40)
                for (const CurvePoint& p : pts)
                    if (std::isfinite(p.y))
                        s += strprintf("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" stroke=\"none\"/>\n", px(p.x), py(p.y),
                                       color);
            std::string label = multi ? runs[r].name + (c.series.size() > 1 ? " · " + c.series[k].label : "")
                                      : c.series[k].label;
            legend += strprintf("<span class=\"key\"><svg width=\"30\" height=\"12\"><line x1=\"1\" y1=\"6\" x2=\"29\" y2=\"6\" "
                                "stroke=\"%s\" stroke-width=\"2.5\"%s%s/></svg>%s</span>\n",
                                color, *dash ? " stroke-dasharray=\"" : "", *dash ? (std::string(dash) + "\"").c_str() : "",
                                xml_escape(label).c_str());
        }
    s += "</g>\n</svg>\n";
    *legend_html = legend;
    return s;
}

std::string fmt(const json& v) {
    if (v.is_null()) return "n/a";
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    if (v.is_number()) return strprintf("%.6g", v.get<double>());
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, json>>& out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it.value().is_object()) flatten(it.value(), key, out);
        else out.emplace_back(key, it.value());
    }
}

json summary_get(const json& summary, const std::string& a, const std::string& b = "") {
    if (!summary.is_object() || !summary.contains(a)) return nullptr;
    const json& v = summary[a];
    if (b.empty()) return v;
    if (!v.is_object() || !v.contains(b)) return nullptr;
    return v[b];
}

// The run's last value of `key` (from summary.json's eval_after, else the last eval line).
json final_eval(const RunData& r, const std::string& key) {
    json v = summary_get(r.summary, "eval_after", key);
    if (!v.is_null()) return v;
    for (auto it = r.evals.rbegin(); it != r.evals.rend(); ++it)
        if (it->contains(key) && (*it)[key].is_number()) return (*it)[key];
    return nullptr;
}

// The mean of `key` over the run's step lines (every session of it, unlike summary.json's
// figures, which are the last session's), or null.
json step_mean(const RunData& r, const std::string& key) {
    double sum = 0.0;
    int64_t n = 0;
    for (const json& m : r.steps) {
        double v = value_of(m, key);
        if (std::isfinite(v)) sum += v, ++n;
    }
    return n ? json(sum / n) : json(nullptr);
}

std::string final_table(const std::vector<RunData>& runs) {
    bool pass = false, compile = false;
    for (const RunData& r : runs) {
        pass = pass || !summary_get(r.summary, "eval_pass_at_1").is_null();
        compile = compile || !summary_get(r.summary, "eval_compile_rate").is_null();
    }
    std::string s = "<table class=\"final\">\n<tr><th>run</th><th>method</th><th>steps</th><th>final train loss</th>"
                    "<th>eval loss</th><th>eval CE</th>";
    if (pass) s += "<th>pass@1</th>";
    if (compile) s += "<th>compile rate</th>";
    s += "<th>tokens/s (mean)</th><th>kept (mean)</th><th>sensitive (mean)</th></tr>\n";
    for (size_t i = 0; i < runs.size(); ++i) {
        const RunData& r = runs[i];
        json steps = summary_get(r.summary, "steps");
        if (steps.is_null() && !r.steps.empty()) steps = r.steps.back()["step"];
        json last_loss = summary_get(r.summary, "final_train_loss");
        if (last_loss.is_null() && !r.steps.empty()) last_loss = r.steps.back().value("loss", json(nullptr));
        s += strprintf("<tr><td><span class=\"swatch\" style=\"background:%s\"></span>%s</td>", kPalette[i % kPaletteSize],
                       xml_escape(r.name).c_str());
        s += "<td>" + xml_escape(fmt(summary_get(r.summary, "method"))) + "</td>";
        s += "<td>" + xml_escape(fmt(steps)) + "</td>";
        s += "<td>" + xml_escape(fmt(last_loss)) + "</td>";
        s += "<td>" + xml_escape(fmt(final_eval(r, "eval_loss"))) + "</td>";
        s += "<td>" + xml_escape(fmt(final_eval(r, "eval_ce"))) + "</td>";
        if (pass) s += "<td>" + xml_escape(fmt(summary_get(r.summary, "eval_pass_at_1"))) + "</td>";
        if (compile) s += "<td>" + xml_escape(fmt(summary_get(r.summary, "eval_compile_rate"))) + "</td>";
        json tps = step_mean(r, "tokens_per_s");
        s += "<td>" + xml_escape(tps.is_number() ? strprintf("%.0f", tps.get<double>()) : std::string("n/a")) + "</td>";
        s += "<td>" + xml_escape(fmt(step_mean(r, "kept_fraction"))) + "</td>";
        s += "<td>" + xml_escape(fmt(step_mean(r, "sensitive_fraction"))) + "</td></tr>\n";
    }
    return s + "</table>\n";
}

std::string summary_table(const std::vector<RunData>& runs) {
    std::vector<std::string> keys;
    std::set<std::string> seen;
    std::vector<std::map<std::string, json>> values(runs.size());
    for (size_t i = 0; i < runs.size(); ++i) {
        if (!runs[i].summary.is_object()) continue;
        std::vector<std::pair<std::string, json>> flat;
        flatten(runs[i].summary, "", flat);
        for (auto& [k, v] : flat) {
            if (seen.insert(k).second) keys.push_back(k);
            values[i][k] = v;
        }
    }
    if (keys.empty()) return "<p class=\"note\">No summary.json yet (the run has not finished).</p>\n";
    std::string s = "<table class=\"summary\">\n<tr><th>summary.json</th>";
    for (const RunData& r : runs) s += "<th>" + xml_escape(r.name) + "</th>";
    s += "</tr>\n";
    for (const std::string& k : keys) {
        s += "<tr><td class=\"k\">" + xml_escape(k) + "</td>";
        for (size_t i = 0; i < runs.size(); ++i) {
            auto it = values[i].find(k);
            s += "<td>" + (it == values[i].end() ? std::string() : xml_escape(fmt(it->second))) + "</td>";
        }
        s += "</tr>\n";
    }
    return s + "</table>\n";
}

}  // namespace

std::vector<CurvePoint> downsample_minmax(const std::vector<CurvePoint>& pts, size_t buckets) {
    if (buckets == 0 || pts.size() <= 2 * buckets) return pts;
    const double xa = pts.front().x, xb = pts.back().x;
    if (!(xb > xa)) return {pts.front(), pts.back()};
    std::vector<CurvePoint> out;
    out.push_back(pts.front());
    size_t i = 1;
    const size_t last = pts.size() - 1;
    while (i < last) {
        const size_t b = std::min(buckets - 1, static_cast<size_t>((pts[i].x - xa) / (xb - xa) * buckets));
        size_t lo = SIZE_MAX, hi = SIZE_MAX, gap = SIZE_MAX;
        size_t j = i;
        for (; j < last && std::min(buckets - 1, static_cast<size_t>((pts[j].x - xa) / (xb - xa) * buckets)) == b; ++j) {
            if (!std::isfinite(pts[j].y)) {
                if (gap == SIZE_MAX) gap = j;
                continue;
            }
            if (lo == SIZE_MAX || pts[j].y < pts[lo].y) lo = j;
            if (hi == SIZE_MAX || pts[j].y > pts[hi].y) hi = j;
        }
        std::vector<size_t> keep;
        for (size_t k : {lo, hi, gap})
            if (k != SIZE_MAX) keep.push_back(k);
        std::sort(keep.begin(), keep.end());
        keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
        for (size_t k : keep) out.push_back(pts[k]);
        i = j;
    }
    out.push_back(pts.back());
    return out;
}

RunData run_data_load(const std::string& run_dir) {
    RunData r;
    r.dir = run_dir;
    fs::path p(run_dir);
    r.name = (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
    if (r.name.empty()) r.name = run_dir;
    const std::string metrics = (p / "metrics.jsonl").string();
    std::error_code ec;
    if (!fs::exists(metrics, ec)) throw InputError(run_dir + ": no metrics.jsonl (is it a cuset run folder?)");
    LineReader f(metrics, "metrics file");  // a folder, FIFO or device is refused, not read or waited on
    std::map<int64_t, json> steps, evals;  // a repeated step (a resume after a stop): the later line wins
    std::string line;
    int64_t n_line = 0, n_bad = 0;
    while (f.next(line)) {
        n_line = f.line_no();
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string at = metrics + ":" + std::to_string(n_line);
        if (std::string deep = json_depth_problem(line); !deep.empty()) throw InputError(at + ": " + deep);
        json m = json::parse(line, nullptr, false);
        if (m.is_discarded() || !m.is_object() || !m.contains("step") || !m["step"].is_number_integer()) {
            if (++n_bad <= 3) log_warn("%s:%lld: not a metrics line, skipped", metrics.c_str(), (long long)n_line);
            continue;
        }
        int64_t step = m["step"].get<int64_t>();
        if (m.contains("loss")) steps[step] = std::move(m);
        else if (m.contains("eval_loss") || m.contains("eval_ce")) evals[step] = std::move(m);
    }
    for (auto& [k, v] : steps) r.steps.push_back(std::move(v));
    for (auto& [k, v] : evals) r.evals.push_back(std::move(v));
    const std::string summary = (p / "summary.json").string();
    if (fs::exists(summary, ec)) {
        // A summary too deep to walk is an error like every such JSON; a malformed one only a warning.
        const std::string text = read_input_file(summary, "run summary");
        if (std::string deep = json_depth_problem(text); !deep.empty()) throw InputError(summary + ": " + deep);
        json s = json::parse(text, nullptr, false);
        if (!s.is_discarded() && s.is_object()) r.summary = std::move(s);
        else log_warn("%s/summary.json: malformed JSON, left out of the report", run_dir.c_str());
    }
    return r;
}

std::string run_report_html(const std::vector<RunData>& runs) {
    std::string title = "cuset run report";
    if (runs.size() == 1) title += ": " + runs[0].name;
    else title += ": " + std::to_string(runs.size()) + " runs";
    std::string h;
    h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    h += "<title>" + xml_escape(title) + "</title>\n";
    h += "<style>\n"
         "body{font-family:sans-serif;margin:24px;color:#222;background:#fafafa}\n"
         "h1{font-size:22px;margin:0 0 6px}h2{font-size:17px;margin:26px 0 8px}\n"
         ".runs{margin:4px 0 0;padding-left:20px}.runs code{color:#555}\n"
         ".grid{display:flex;flex-wrap:wrap;gap:16px}\n"
         "figure{margin:0;background:#fff;border:1px solid #ddd;padding:8px;width:600px;box-sizing:content-box}\n"
         "figure svg{display:block;max-width:100%;height:auto}\n"
         "figcaption{font-size:13px;line-height:1.9;padding:4px 6px 0}\n"
         ".key{display:inline-flex;align-items:center;margin-right:14px;white-space:nowrap}.key svg{margin-right:5px}\n"
         "table{border-collapse:collapse;background:#fff;font-size:13px}\n"
         "th,td{border:1px solid #ccc;padding:4px 9px;text-align:right}th{background:#eee}\n"
         "td:first-child,th:first-child{text-align:left}td.k{font-family:monospace}\n"
         ".swatch{display:inline-block;width:11px;height:11px;margin-right:6px;vertical-align:-1px}\n"
         ".note{color:#666;font-size:13px}\n"
         "</style>\n</head>\n<body>\n";
    h += "<h1>" + xml_escape(title) + "</h1>\n<ul class=\"runs\">\n";
    for (size_t i = 0; i < runs.size(); ++i) {
        const RunData& r = runs[i];
        std::string span = r.steps.empty() ? "no step logged yet"
                                           : strprintf("%zu step lines, steps %lld to %lld", r.steps.size(),
                                                       (long long)r.steps.front()["step"].get<int64_t>(),
                                                       (long long)r.steps.back()["step"].get<int64_t>());
        h += strprintf("<li><span class=\"swatch\" style=\"background:%s\"></span><b>%s</b> <code>%s</code>: %s, %zu evaluations",
                       runs.size() > 1 ? kPalette[i % kPaletteSize] : "transparent", xml_escape(r.name).c_str(), xml_escape(r.dir).c_str(),
                       span.c_str(), r.evals.size());
        json ext = summary_get(r.summary, "schedule_extended_at_step");
        if (ext.is_number()) h += strprintf("; schedule extended at step %lld", (long long)ext.get<int64_t>());
        h += "</li>\n";
    }
    h += "</ul>\n";
    h += "<h2>Final figures</h2>\n" + final_table(runs);
    h += "<h2>Curves</h2>\n";
    if (runs.size() > 1)
        h += "<p class=\"note\">Colour: the run; line style: the curve (solid, dashed, dotted, in the legend's order).</p>\n";
    h += "<div class=\"grid\">\n";
    int id = 0;
    for (const Chart& c : charts()) {
        if (c.optional) {
            bool any = false;
            for (const RunData& r : runs)
                for (const Series& se : c.series) any = any || any_finite(curve(r, se));
            if (!any) continue;
        }
        std::string legend;
        std::string svg = chart_svg(c, runs, id++, &legend);
        h += "<figure>\n" + svg + "<figcaption>" + legend + "</figcaption>\n</figure>\n";
    }
    h += "</div>\n";
    h += "<h2>Summary</h2>\n" + summary_table(runs);
    h += "<p class=\"note\">Written by cuset-train report. Curves longer than the plot is wide show each pixel column's "
         "lowest and highest value.</p>\n";
    h += "</body>\n</html>\n";
    return h;
}

void run_report_write(const std::vector<std::string>& run_dirs, const std::string& out_file) {
    if (run_dirs.empty()) throw UsageError("report: no run folder given");
    {  // never over a file it reads: a run's metrics.jsonl or summary.json (another run's report.html may be replaced)
        std::vector<std::string> inputs;
        for (const std::string& d : run_dirs)
            for (const char* f : {"metrics.jsonl", "summary.json"}) inputs.push_back((fs::path(d) / f).string());
        refuse_output_equal_to_input(out_file, inputs, "report");
    }
    std::vector<RunData> runs;
    for (const std::string& d : run_dirs) runs.push_back(run_data_load(d));
    file_write_atomic(out_file, run_report_html(runs));
}

}  // namespace cuset
