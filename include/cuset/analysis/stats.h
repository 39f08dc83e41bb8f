// stats: numpy-compatible descriptive statistics of confidences (mean, quantiles, histograms,
// empirical CDFs) and the low-confidence windows of docs/method.md sec. 7. Plain C++ on std::vector.
#pragma once

#include <cstdint>
#include <vector>

namespace cuset {

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

// Windows of one sample (docs/method.md sec. 7): `window` consecutive valid tokens, stride 1; a
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

}  // namespace cuset
