// report: the section-7 analysis over scored samples (summaries per set and category,
// histograms, CDFs, KS test, windows) and its writers: analysis.json, the console table, the files.
#include "cuset/analysis/report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cuset/analysis/svg.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "report_rows.h"

namespace cuset {

// ---------------------------------------------------------------- the analysis report

const std::vector<CategoryName>& category_names() {
    static const std::vector<CategoryName> names = {
        {1, "kernel"}, {2, "launch"}, {4, "indexing"}, {8, "shared_memory"},
        {16, "sync"}, {32, "memory_access"}, {64, "bounds_check"},
    };
    return names;
}

const std::vector<double>& summary_quantile_levels() {
    static const std::vector<double> levels = {0.05, 0.25, 0.5, 0.75, 0.95};
    return levels;
}

namespace {

// Sorts `values` in place and summarises them.
ConfidenceSummary summarise(const std::string& name, std::vector<double>& values, double low_threshold) {
    ConfidenceSummary s;
    s.name = name;
    s.count = static_cast<int64_t>(values.size());
    s.mean = mean(values);
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    for (double q : summary_quantile_levels()) s.quantiles.push_back(quantile_sorted(values, q));
    const auto below = std::lower_bound(values.begin(), values.end(), low_threshold) - values.begin();
    s.share_low = static_cast<double>(below) / static_cast<double>(values.size());
    return s;
}

}  // namespace

AnalysisReport analyze_confidences(const std::vector<ScoredSample>& samples, const AnalysisOptions& options,
                                   const std::string& model, const std::string& data) {
    AnalysisReport r;
    r.options = options;
    r.model = model;
    r.data = data;
    r.n_samples = static_cast<int64_t>(samples.size());
    const auto& cats = category_names();
    std::vector<double> all, sens, non_sens;
    std::vector<std::vector<double>> by_cat(cats.size());
    for (const ScoredSample& s : samples) {
        const size_t n = s.confidence.size();
        if (s.sensitive.size() != n || (!s.categories.empty() && s.categories.size() != n))
            throw UsageError(strprintf("analysis: sample %lld has %zu confidences, %zu sensitivity flags and %zu "
                                       "category entries; they must match",
                                       static_cast<long long>(s.id), n, s.sensitive.size(), s.categories.size()));
        for (size_t i = 0; i < n; ++i) {
            const double c = s.confidence[i];
            all.push_back(c);
            (s.sensitive[i] ? sens : non_sens).push_back(c);
            if (s.categories.empty()) continue;
            for (size_t k = 0; k < cats.size(); ++k)
                if (s.categories[i] & cats[k].bit) by_cat[k].push_back(c);
        }
        r.windows.add(sample_windows(s.confidence.data(), s.sensitive.data(), static_cast<int64_t>(n),
                                     options.window, options.low_threshold, options.overlap));
    }
    r.hist_sensitive = histogram01(sens, options.bins);
    r.hist_non_sensitive = histogram01(non_sens, options.bins);
    if (!sens.empty() && !non_sens.empty()) {
        r.has_ks = true;
        r.ks = ks_2samp(sens, non_sens);
    }
    r.all = summarise("all", all, options.low_threshold);
    r.sensitive = summarise("sensitive", sens, options.low_threshold);
    r.non_sensitive = summarise("non-sensitive", non_sens, options.low_threshold);
    for (size_t k = 0; k < cats.size(); ++k)
        if (!by_cat[k].empty()) r.categories.push_back(summarise(cats[k].name, by_cat[k], options.low_threshold));
    constexpr int kCdfPoints = 501;
    for (int i = 0; i < kCdfPoints; ++i) r.cdf_x.push_back(static_cast<double>(i) / (kCdfPoints - 1));
    r.cdf_sensitive = ecdf_at(sens, r.cdf_x);  // summarise() sorted them
    r.cdf_non_sensitive = ecdf_at(non_sens, r.cdf_x);
    return r;
}

namespace {

nlohmann::ordered_json summary_json(const ConfidenceSummary& s) {
    nlohmann::ordered_json j;
    j["count"] = s.count;
    if (s.count == 0) {
        j["mean"] = nullptr;
        return j;
    }
    j["mean"] = s.mean;
    static const char* const kNames[] = {"p05", "p25", "median", "p75", "p95"};
    for (size_t i = 0; i < s.quantiles.size(); ++i) j[kNames[i]] = s.quantiles[i];
    j["share_below_low_threshold"] = s.share_low;
    return j;
}

nlohmann::ordered_json share_or_null(int64_t part, int64_t whole) {
    if (whole == 0) return nullptr;
    return static_cast<double>(part) / static_cast<double>(whole);
}

nlohmann::ordered_json histogram_json(const Histogram& h) {
    return {{"counts", h.counts}, {"density", h.density}, {"n_outside_0_1", h.n_outside}};
}

}  // namespace

std::string analysis_json(const AnalysisReport& r) {
    nlohmann::ordered_json j;
    j["format"] = "cuset-analysis";
    j["version"] = 1;
    j["model"] = r.model;
    j["data"] = r.data;
    j["options"] = {{"window", r.options.window},
                    {"low_threshold", r.options.low_threshold},
                    {"overlap", r.options.overlap},
                    {"bins", r.options.bins}};
    j["n_samples"] = r.n_samples;
    j["n_tokens"] = r.all.count;
    j["confidence"] = {{"all", summary_json(r.all)},
                       {"sensitive", summary_json(r.sensitive)},
                       {"non_sensitive", summary_json(r.non_sensitive)}};
    nlohmann::ordered_json cats = nlohmann::ordered_json::object();
    for (const ConfidenceSummary& c : r.categories) cats[c.name] = summary_json(c);
    j["categories"] = cats;
    j["histogram"] = {{"edges", r.hist_sensitive.edges},
                      {"sensitive", histogram_json(r.hist_sensitive)},
                      {"non_sensitive", histogram_json(r.hist_non_sensitive)}};
    if (r.has_ks) {
        j["ks"] = {{"statistic", r.ks.statistic},
                   {"pvalue", r.ks.pvalue},
                   {"log10_pvalue", r.ks.log10_pvalue},
                   {"n_sensitive", r.ks.n1},
                   {"n_non_sensitive", r.ks.n2},
                   {"n_eff", r.ks.n_eff},
                   {"method", r.ks.method},
                   {"algorithm", r.ks.algorithm},
                   {"text", ks_format_p(r.ks)}};
    } else {
        j["ks"] = nullptr;
    }
    const WindowStats& w = r.windows;
    j["windows"] = {{"n_samples", w.n_samples},
                    {"n_samples_with_low", w.n_samples_with_low},
                    {"share_samples_with_low", share_or_null(w.n_samples_with_low, w.n_samples)},
                    {"n_windows", w.n_windows},
                    {"n_low_windows", w.n_low_windows},
                    {"n_low_sensitive", w.n_low_sensitive},
                    {"share_low_sensitive", share_or_null(w.n_low_sensitive, w.n_low_windows)}};
    j["published"] = {{"ks_pvalue", kPublishedKsPvalue},
                      {"share_samples_with_low", kPublishedShareSamplesWithLow},
                      {"share_low_sensitive", kPublishedShareLowSensitive},
                      {"note", "7B model on its own data, window 64, low threshold 0.5 (docs/method.md sec. 7)"}};
    return j.dump(2) + "\n";
}

namespace detail {

std::string percent(double share) { return strprintf("%.2f%%", 100.0 * share); }

}  // namespace detail

namespace {

using detail::percent;

std::string summary_row(const ConfidenceSummary& s, const std::string& label) {
    std::string row = strprintf("%-22s %10lld", label.c_str(), static_cast<long long>(s.count));
    if (s.count == 0) return row + "          -\n";
    row += strprintf(" %8.4f", s.mean);
    for (double q : s.quantiles) row += strprintf(" %8.4f", q);
    row += strprintf(" %9s\n", percent(s.share_low).c_str());
    return row;
}

}  // namespace

namespace {

// "27.50% (11 of 40)", or "n/a (no samples)" when there is nothing to take a share of.
std::string share_text(int64_t part, int64_t whole, const char* what) {
    if (whole == 0) return strprintf("n/a (no %s)", what);
    return strprintf("%s (%lld of %lld)", percent(static_cast<double>(part) / static_cast<double>(whole)).c_str(),
                     static_cast<long long>(part), static_cast<long long>(whole));
}

}  // namespace

namespace detail {

std::vector<MeasurementRow> measurement_rows(const AnalysisReport& r) {
    const WindowStats& w = r.windows;
    std::vector<MeasurementRow> rows;
    rows.push_back({"measurement", "this run", "published (7B model)"});
    rows.push_back({"KS test, sensitive vs non-sensitive confidences",
                    r.has_ks ? strprintf("D = %.4f, %s", r.ks.statistic, ks_format_p(r.ks).c_str())
                             : std::string("not computed (a set is empty)"),
                    ks_format_p(kPublishedKsPvalue, std::log10(kPublishedKsPvalue))});
    rows.push_back({strprintf("samples with a low-confidence window (%lld tokens, mean < %.2f)",
                              static_cast<long long>(r.options.window), r.options.low_threshold),
                    share_text(w.n_samples_with_low, w.n_samples, "samples"),
                    percent(kPublishedShareSamplesWithLow)});
    rows.push_back({strprintf("low-confidence windows on sensitive structure (> %.0f%% sensitive)",
                              100.0 * r.options.overlap),
                    share_text(w.n_low_sensitive, w.n_low_windows, "low-confidence windows"),
                    percent(kPublishedShareLowSensitive)});
    return rows;
}

}  // namespace detail

std::string analysis_table(const AnalysisReport& r) {
    std::string out;
    out += strprintf("confidence of valid tokens: %s on %s (%lld samples)\n", r.model.c_str(), r.data.c_str(),
                     static_cast<long long>(r.n_samples));
    out += strprintf("%-22s %10s %8s %8s %8s %8s %8s %8s %9s\n", "set", "tokens", "mean", "p05", "p25", "median",
                     "p75", "p95", strprintf("< %.2f", r.options.low_threshold).c_str());
    out += summary_row(r.all, "all");
    out += summary_row(r.sensitive, "sensitive");
    out += summary_row(r.non_sensitive, "non-sensitive");
    for (const ConfidenceSummary& c : r.categories) out += summary_row(c, "  " + c.name);
    out += "\n";
    const std::vector<detail::MeasurementRow> rows = detail::measurement_rows(r);
    size_t w0 = 0, w1 = 0;
    for (const detail::MeasurementRow& m : rows) {
        w0 = std::max(w0, m.what.size());
        w1 = std::max(w1, m.ours.size());
    }
    for (const detail::MeasurementRow& m : rows)
        out += strprintf("%-*s  %-*s  %s\n", static_cast<int>(w0), m.what.c_str(), static_cast<int>(w1),
                         m.ours.c_str(), m.published.c_str());
    if (r.has_ks)
        out += strprintf("(KS: scipy.stats.ks_2samp method='asymp', kstwo with n_eff = %lld, %s)\n",
                         static_cast<long long>(r.ks.n_eff), r.ks.algorithm.c_str());
    return out;
}

// ---------------------------------------------------------------- the files

void analysis_write(const AnalysisReport& r, const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw RuntimeFailure(strprintf("cannot create folder %s: %s", dir.c_str(), ec.message().c_str()));
    for (const auto& [name, body] : {std::pair<std::string, std::string>{"analysis.json", analysis_json(r)},
                                     {"analysis.svg", analysis_svg(r)}}) {
        const std::string path = (std::filesystem::path(dir) / name).string();
        std::ofstream f(path, std::ios::binary);
        f << body;
        f.close();
        if (!f) throw RuntimeFailure(strprintf("cannot write %s", path.c_str()));
    }
}


}  // namespace cuset
