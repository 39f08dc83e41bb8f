// stats: numpy-compatible mean, quantiles, histograms and empirical CDFs, and the
// low-confidence windows (prefix sums). No model, no tensors: the caller hands in confidences.
#include "cuset/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

// ---------------------------------------------------------------- descriptive statistics

double mean(const std::vector<double>& values) {
    if (values.empty()) return kNaN;
    long double sum = 0;
    for (double v : values) sum += v;
    return static_cast<double>(sum / static_cast<long double>(values.size()));
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) throw UsageError("quantile of an empty set");
    if (!(q >= 0.0 && q <= 1.0)) throw UsageError(strprintf("quantile level %g is outside [0, 1]", q));
    const size_t n = sorted.size();
    const double index = static_cast<double>(n - 1) * q;  // numpy 'linear': (n - 1) q
    if (index >= static_cast<double>(n - 1)) return sorted[n - 1];
    const double lo_index = std::floor(index);
    const size_t lo = static_cast<size_t>(lo_index);
    const double gamma = index - lo_index;
    const double a = sorted[lo], b = sorted[lo + 1];
    const double diff = b - a;  // numpy's _lerp, with its switch at gamma = 0.5
    return gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
}

std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& qs) {
    std::sort(values.begin(), values.end());
    std::vector<double> out;
    out.reserve(qs.size());
    for (double q : qs) out.push_back(quantile_sorted(values, q));
    return out;
}

Histogram histogram01(const std::vector<double>& values, int64_t bins) {
    if (bins < 1) throw UsageError(strprintf("histogram: bins = %lld must be >= 1", static_cast<long long>(bins)));
    Histogram h;
    const double step = 1.0 / static_cast<double>(bins);  // numpy.linspace(0, 1, bins + 1)
    h.edges.resize(bins + 1);
    for (int64_t i = 0; i < bins; ++i) h.edges[i] = static_cast<double>(i) * step;
    h.edges[bins] = 1.0;
    h.counts.assign(bins, 0);
    for (double v : values) {
        if (!(v >= 0.0 && v <= 1.0)) {
            ++h.n_outside;
            continue;
        }
        int64_t idx = std::min<int64_t>(static_cast<int64_t>(v * static_cast<double>(bins)), bins - 1);
        if (v < h.edges[idx]) --idx;  // the edges decide, as in numpy
        else if (idx != bins - 1 && v >= h.edges[idx + 1]) ++idx;
        ++h.counts[idx];
        ++h.n_inside;
    }
    h.density.assign(bins, 0.0);
    if (h.n_inside > 0)
        for (int64_t i = 0; i < bins; ++i)
            h.density[i] = static_cast<double>(h.counts[i]) / (h.edges[i + 1] - h.edges[i]) /
                           static_cast<double>(h.n_inside);
    return h;
}

std::vector<double> ecdf_at(const std::vector<double>& sorted, const std::vector<double>& xs) {
    std::vector<double> out;
    out.reserve(xs.size());
    const double n = static_cast<double>(sorted.size());
    for (double x : xs) {
        const auto it = std::upper_bound(sorted.begin(), sorted.end(), x);
        out.push_back(sorted.empty() ? 0.0 : static_cast<double>(it - sorted.begin()) / n);
    }
    return out;
}

// ---------------------------------------------------------------- low-confidence windows

SampleWindows sample_windows(const float* confidence, const uint8_t* sensitive, int64_t n, int64_t window,
                             double low_threshold, double overlap) {
    if (window < 1) throw UsageError(strprintf("analysis.window = %lld must be >= 1", static_cast<long long>(window)));
    SampleWindows s;
    if (n <= 0) return s;
    const int64_t len = std::min(window, n);
    std::vector<double> conf_sum(n + 1, 0.0);  // [n + 1] prefix sums of confidence
    std::vector<int64_t> sens_sum(n + 1, 0);   // [n + 1] prefix counts of sensitive tokens
    for (int64_t i = 0; i < n; ++i) {
        conf_sum[i + 1] = conf_sum[i] + static_cast<double>(confidence[i]);
        sens_sum[i + 1] = sens_sum[i] + (sensitive[i] ? 1 : 0);
    }
    const double low_sum = low_threshold * static_cast<double>(len);
    const double sens_min = overlap * static_cast<double>(len);
    for (int64_t start = 0; start + len <= n; ++start) {
        ++s.n_windows;
        if (!(conf_sum[start + len] - conf_sum[start] < low_sum)) continue;
        ++s.n_low;
        if (static_cast<double>(sens_sum[start + len] - sens_sum[start]) > sens_min) ++s.n_low_sensitive;
    }
    return s;
}

double WindowStats::share_samples_with_low() const {
    return n_samples > 0 ? static_cast<double>(n_samples_with_low) / static_cast<double>(n_samples) : 0.0;
}

double WindowStats::share_low_sensitive() const {
    return n_low_windows > 0 ? static_cast<double>(n_low_sensitive) / static_cast<double>(n_low_windows) : 0.0;
}

void WindowStats::add(const SampleWindows& s) {
    if (s.n_windows == 0) return;
    ++n_samples;
    if (s.n_low > 0) ++n_samples_with_low;
    n_windows += s.n_windows;
    n_low_windows += s.n_low;
    n_low_sensitive += s.n_low_sensitive;
}

}  // namespace cuset
