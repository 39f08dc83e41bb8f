// report: the sensitivity analysis of docs/method.md sec. 7 over scored samples (confidence of
// sensitive vs other tokens, KS test, low-confidence windows) and its analysis.json, console
// table and files. It neither runs a model nor reads score files (the caller does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cuset/analysis/ks.h"
#include "cuset/analysis/stats.h"

namespace cuset {

// The analysis's settings (analysis.* of a run's configuration).
struct AnalysisOptions {
    int64_t window = 64;          // tokens per low-confidence window
    double low_threshold = 0.5;   // a token below this confidence is low
    double overlap = 0.5;         // windows overlap by this share
    int64_t bins = 20;            // histogram bins on [0, 1]
};

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
    std::vector<uint8_t> sensitive;    // [n] 0 or 1 (sensitivity, docs/method.md)
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
    AnalysisOptions options;
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
                                   const AnalysisOptions& options, const std::string& model,
                                   const std::string& data);

std::string analysis_json(const AnalysisReport& r);   // analysis.json (pretty-printed)
std::string analysis_table(const AnalysisReport& r);  // console table, plain aligned text

// Writes `dir`/analysis.json and `dir`/analysis.svg (creating `dir`); RuntimeFailure on I/O errors.
void analysis_write(const AnalysisReport& r, const std::string& dir);

}  // namespace cuset
