// stats: the numbers behind the sensitivity analysis (METHOD.md section 7): the two-sample
// Kolmogorov-Smirnov test as scipy computes it, quantiles and histograms of confidences, the
// low-confidence windows, and the report writers (analysis.json, console table, analysis.svg).
// Plain C++ on std::vector; it neither runs a model nor reads score files (the caller does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuset/core/config.h"

namespace cuset {

// ---------------------------------------------------------------- Kolmogorov-Smirnov

// Tail of the one-sample two-sided Kolmogorov-Smirnov distribution, P(D_n >= x) (scipy.stats.kstwo).
struct KsTail {
    double sf = 1.0;      // the probability; 0 when it is below the double range
    double log_sf = 0.0;  // natural log of it; finite for 0 <= x < 1, -inf at x >= 1
    const char* algorithm = "";  // which evaluation was used (see kstwo_tail)
};

// P(D_n >= x) for sample size n >= 1, with scipy's choice of algorithm per region
// (scipy.stats._ksstats._kolmogn, Simard & L'Ecuyer 2011): Ruben-Gambino near the ends,
// 2 * Smirnov's one-sided tail (Birnbaum-Tingey sum) in the upper tail, the Durbin matrix
// (Marsaglia-Tsang-Wang) and the Pelz-Good expansion in the body. The upper tail is summed in log
// space, so log_sf stays exact where scipy returns 0 (n x^2 >= 370) and far below 1e-300.
KsTail kstwo_tail(int64_t n, double x);

struct KsResult {
    double statistic = 0.0;     // D = max |F_a - F_b| over the pooled sorted values
    double pvalue = 1.0;        // two-sided; 0 only when it is below the double range
    double log10_pvalue = 0.0;  // always finite: use it when pvalue underflows
    int64_t n1 = 0, n2 = 0;
    int64_t n_eff = 0;          // round(n1 n2 / (n1 + n2)), half to even as numpy
    std::string method = "asymp";  // scipy.stats.ks_2samp(a, b, method='asymp')
    std::string algorithm;         // the kstwo_tail region used, e.g. "smirnov"
};

// Two-sided two-sample KS test matching scipy.stats.ks_2samp(a, b, method='asymp'):
// p = kstwo.sf(D, round(n1 n2 / (n1 + n2))). Where scipy's double arithmetic gives p = 0, p and
// log10 p come from the same formula in log space. Two differences from scipy, both where scipy
// has no usable answer: D = 1 (the samples do not overlap; scipy says p = 0) gives the exact
// two-sample P(D = 1) = 2 / C(n1 + n2, n1), and n_eff < 1 (n1 = n2 = 1; scipy says NaN) is taken
// as 1. Throws UsageError on an empty sample or a NaN.
KsResult ks_2samp(std::vector<double> a, std::vector<double> b);

// "p = 4.6e-39"; below 1e-300: "p < 1e-300 (log10 p = -2171.3)". Never "0" or "nan".
std::string ks_format_p(double pvalue, double log10_pvalue);
std::string ks_format_p(const KsResult& ks);

// ---------------------------------------------------------------- descriptive statistics

// Mean (extended-precision sum); NaN for an empty vector.
double mean(const std::vector<double>& values);

// numpy.quantile(values, q) with method='linear' on values already sorted ascending; q in [0, 1].
double quantile_sorted(const std::vector<double>& sorted, double q);

// numpy.quantile(values, qs) (method='linear'); sorts a copy. Throws UsageError when empty.
std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& qs);

struct Histogram {
    std::vector<double> edges;    // [bins + 1], numpy.linspace(0, 1, bins + 1)
    std::vector<int64_t> counts;  // [bins]
    std::vector<double> density;  // [bins], counts / (n_inside * width): integrates to 1
    int64_t n_inside = 0;         // values within [0, 1]
    int64_t n_outside = 0;        // values outside [0, 1] or NaN, not counted (as numpy)
};

// numpy.histogram(values, bins=bins, range=(0, 1)): equal bins, the last one closed on the right.
Histogram histogram01(const std::vector<double>& values, int64_t bins);

// Empirical CDF of `sorted` (ascending) at each x of `xs`: share of values <= x.   [xs.size()]
std::vector<double> ecdf_at(const std::vector<double>& sorted, const std::vector<double>& xs);

// ---------------------------------------------------------------- low-confidence windows

// Windows of one sample (METHOD.md section 7): `window` consecutive valid tokens, stride 1; a
// sample shorter than `window` has one window over all its tokens (as in training); none when
// empty. Low: mean confidence < low_threshold. Sensitive: more than `overlap` of its tokens
// sensitive. O(n) with prefix sums.
struct SampleWindows {
    int64_t n_windows = 0;
    int64_t n_low = 0;
    int64_t n_low_sensitive = 0;
};
SampleWindows sample_windows(const float* confidence,      // [n] p(target token)
                             const uint8_t* sensitive,     // [n] 0 or 1
                             int64_t n, int64_t window, double low_threshold, double overlap);

// Aggregate over samples. Samples without valid tokens are not counted.
struct WindowStats {
    int64_t n_samples = 0;           // samples with at least one valid token
    int64_t n_samples_with_low = 0;  // ... with at least one low-confidence window
    int64_t n_windows = 0;
    int64_t n_low_windows = 0;
    int64_t n_low_sensitive = 0;     // low windows on sensitive structure
    // The two published shares; 0 when the denominator is 0 (the JSON writes null, the table n/a).
    double share_samples_with_low() const;  // n_samples_with_low / n_samples
    double share_low_sensitive() const;     // n_low_sensitive / n_low_windows
    void add(const SampleWindows& s);
};

// ---------------------------------------------------------------- the analysis report

// Tagger category bits (cuset_tagger), in report order.
struct CategoryName {
    uint32_t bit;
    const char* name;
};
const std::vector<CategoryName>& category_names();  // kernel=1 ... bounds_check=64

// One sample's valid (loss-bearing response) tokens, in order.
struct ScoredSample {
    int64_t id = 0;
    std::vector<float> confidence;     // [n] p(target token) under the model
    std::vector<uint8_t> sensitive;    // [n] 0 or 1 (METHOD.md sensitivity)
    std::vector<uint32_t> categories;  // [n] tagger category bits; may be empty (= all 0)
};

// The published measurement (a 7B model on its data), shown next to ours.
constexpr double kPublishedKsPvalue = 4.6e-39;
constexpr double kPublishedShareSamplesWithLow = 0.7447;
constexpr double kPublishedShareLowSensitive = 0.9118;

// Quantiles reported for every set of confidences.
const std::vector<double>& summary_quantile_levels();  // 0.05 0.25 0.5 0.75 0.95

struct ConfidenceSummary {
    std::string name;
    int64_t count = 0;
    double mean = 0.0;              // NaN when count == 0
    std::vector<double> quantiles;  // at summary_quantile_levels(); empty when count == 0
    double share_low = 0.0;         // share with confidence < low_threshold
};

struct AnalysisReport {
    AnalysisKeys options;
    std::string model;  // labels for the title and the JSON (paths or names)
    std::string data;
    int64_t n_samples = 0;
    ConfidenceSummary all, sensitive, non_sensitive;
    std::vector<ConfidenceSummary> categories;  // categories with at least one token
    Histogram hist_sensitive, hist_non_sensitive;
    std::vector<double> cdf_x;                  // [k] grid on [0, 1] for the CDF curves
    std::vector<double> cdf_sensitive, cdf_non_sensitive;  // [k]
    bool has_ks = false;  // false when one of the two sets is empty
    KsResult ks;
    WindowStats windows;
};

// The whole section-7 analysis over scored samples. Throws UsageError on inconsistent lengths.
AnalysisReport analyze_confidences(const std::vector<ScoredSample>& samples,
                                   const AnalysisKeys& options, const std::string& model,
                                   const std::string& data);

std::string analysis_json(const AnalysisReport& r);   // analysis.json (pretty-printed)
std::string analysis_table(const AnalysisReport& r);  // console table, plain aligned text
std::string analysis_svg(const AnalysisReport& r);    // analysis.svg, self-contained

// Writes `dir`/analysis.json and `dir`/analysis.svg (creating `dir`); RuntimeFailure on I/O errors.
void analysis_write(const AnalysisReport& r, const std::string& dir);

}  // namespace cuset
