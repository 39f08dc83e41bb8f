// stats: the two-sample KS test as scipy computes it (including its far tail, in log space),
// numpy-compatible quantiles and histograms, low-confidence windows, and the analysis report
// writers. No model, no tensors: the caller hands in per-token confidences.
#include "cuset/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;
constexpr double kLn2 = 0.693147180559945309417232121458176568;
constexpr double kLog10e = 0.434294481903251827651128918916605082;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// exp() underflows below this (cephes MINLOG); scipy's smirnov() returns 0 past -2 n x^2 < it.
constexpr double kMinLog = -708.3964185322641;

// ---------------------------------------------------------------- Smirnov's one-sided tail

// log P(D+_n >= x), the one-sided KS tail, by the Birnbaum-Tingey sum
//   P = x * sum_{j=0}^{J} C(n, j) (x + j/n)^(j-1) (1 - x - j/n)^(n-j),   J = last j with 1-x-j/n > 0,
// summed in log space (extended precision) so it is exact far below the double range. All terms
// are positive; the sum stops once the rest cannot matter (see below).
double log_smirnov_sf(int64_t n, double x) {
    if (x >= 1.0) return -kInf;
    if (x <= 0.0) return 0.0;
    if (n == 1) return std::log1p(-x);
    using ld = long double;
    // n*x = nx_hi + nx_lo exactly; the bases 1-x-j/n lose nothing to cancellation near J.
    const double nd = static_cast<double>(n);
    const double nx_hi = nd * x;
    const double nx_lo = std::fma(nd, x, -nx_hi);
    double nx_floor = std::floor(nx_hi);
    if (nx_floor == nx_hi && nx_lo < 0) nx_floor -= 1.0;
    const int64_t last = n - static_cast<int64_t>(nx_floor) - 1;  // J
    const ld log_n = std::log(static_cast<ld>(n));
    const ld lg_n1 = std::lgamma(static_cast<ld>(n) + 1);
    auto log_term = [&](int64_t j) -> ld {
        const ld up = (static_cast<ld>(n - j) - nx_hi) - nx_lo;  // n (1 - x - j/n) > 0
        const ld lo = (static_cast<ld>(j) + nx_hi) + nx_lo;      // n (x + j/n)
        return lg_n1 - std::lgamma(static_cast<ld>(j) + 1) - std::lgamma(static_cast<ld>(n - j) + 1) +
               static_cast<ld>(n - j) * (std::log(up) - log_n) +
               static_cast<ld>(j - 1) * (std::log(lo) - log_n);
    };
    if (last <= 0) return static_cast<double>(static_cast<ld>(n) * std::log1p(static_cast<ld>(-x)));
    // The terms rise to a mode and fall, or fall and then rise again towards J (x just above
    // 1/n). So once they fall, every later term is at most max(current, term J): stop when
    // (J - j) times that is below 1e-22 of the sum.
    const ld log_last = log_term(last);
    ld max_log = log_term(0), sum = 1.0L, prev = max_log;
    for (int64_t j = 1; j <= last; ++j) {
        const ld lt = (j == last) ? log_last : log_term(j);
        if (lt > max_log) {
            sum = sum * std::exp(max_log - lt) + 1.0L;
            max_log = lt;
        } else {
            sum += std::exp(lt - max_log);
        }
        if (lt < prev && j < last) {
            const ld bound = std::log(static_cast<ld>(last - j)) + std::max(lt, log_last);
            if (bound < max_log + std::log(sum) - 50.0L) {
                sum += std::exp(log_last - max_log);  // the last term is known, keep it
                break;
            }
        }
        prev = lt;
    }
    return static_cast<double>(std::log(static_cast<ld>(x)) + max_log + std::log(sum));
}

// scipy's smirnov(n, x) replaces the sum by exp(-(6nx+1)^2 / 18n) for n > 1e6
// (SMIRNOV_MAX_COMPUTE_N in xsf/cephes/kolmogorov.h). Followed where scipy's value is nonzero so
// that p matches it; past that (scipy returns 0) the exact sum is used.
constexpr int64_t kSmirnovMaxComputeN = 1000000;

double log_smirnov_sf_as_scipy(int64_t n, double x) {
    const double nd = static_cast<double>(n);
    const bool near_one = std::floor(nd * x) >= nd - 1;  // scipy: exact (1-x)^n there
    if (n > kSmirnovMaxComputeN && !near_one && -2.0 * nd * x * x >= kMinLog) {
        const double a = 6.0 * nd * x + 1.0;
        return -a * a / 18.0 / nd;
    }
    return log_smirnov_sf(n, x);
}

// ---------------------------------------------------------------- the body of the distribution

// P(D_n < d) by Durbin's matrix (Marsaglia, Tsang & Wang 2003): with k = ceil(nd), h = k - nd,
// m = 2k - 1, P = n!/n^n * (H^n)[k-1][k-1]. The power carries a binary exponent so nothing
// overflows; the n!/n^n factor is applied in log space.
double durbin_cdf(int64_t n, double d) {
    const double nd = static_cast<double>(n) * d;
    const int64_t k = static_cast<int64_t>(std::ceil(nd));
    const double h = static_cast<double>(k) - nd;
    const int64_t m = 2 * k - 1;
    std::vector<double> inv_fact(m + 1);  // [m + 1] 1/i!; underflows to 0 harmlessly
    inv_fact[0] = 1.0;
    for (int64_t i = 1; i <= m; ++i) inv_fact[i] = inv_fact[i - 1] / static_cast<double>(i);
    using Matrix = std::vector<double>;  // [m, m] row-major fp64
    Matrix H(m * m, 0.0);
    for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 1; c < m; ++c)
            if (r - c + 1 >= 0) H[r * m + c] = inv_fact[r - c + 1];
    for (int64_t r = 0; r < m; ++r) H[r * m] = (1.0 - std::pow(h, static_cast<double>(r + 1))) * inv_fact[r + 1];
    for (int64_t c = 0; c < m; ++c)
        H[(m - 1) * m + c] = (1.0 - std::pow(h, static_cast<double>(m - c))) * inv_fact[m - c];
    H[(m - 1) * m] = (1.0 - 2.0 * std::pow(h, static_cast<double>(m)) +
                      std::pow(std::max(0.0, 2.0 * h - 1.0), static_cast<double>(m))) *
                     inv_fact[m];

    auto multiply = [m](const Matrix& a, const Matrix& b) {
        Matrix out(m * m, 0.0);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t l = 0; l < m; ++l) {
                const double ail = a[i * m + l];
                if (ail == 0.0) continue;
                for (int64_t j = 0; j < m; ++j) out[i * m + j] += ail * b[l * m + j];
            }
        return out;
    };
    // Scales `a` by a power of two so its largest entry is in [0.5, 1); adds that power to `expo`.
    auto normalise = [](Matrix& a, int64_t& expo) {
        double big = 0.0;
        for (double v : a) big = std::max(big, std::abs(v));
        if (big == 0.0) return;
        int e = 0;
        std::frexp(big, &e);
        for (double& v : a) v = std::ldexp(v, -e);
        expo += e;
    };
    Matrix power(m * m, 0.0);
    for (int64_t i = 0; i < m; ++i) power[i * m + i] = 1.0;
    int64_t power_expo = 0, base_expo = 0;
    for (int64_t e = n; e > 0; e >>= 1) {
        if (e & 1) {
            power = multiply(power, H);
            power_expo += base_expo;
            normalise(power, power_expo);
        }
        if (e > 1) {
            H = multiply(H, H);
            base_expo *= 2;
            normalise(H, base_expo);
        }
    }
    const double entry = power[(k - 1) * m + (k - 1)];
    if (!(entry > 0.0)) return 0.0;
    using ld = long double;
    const ld log_p = std::log(static_cast<ld>(entry)) + static_cast<ld>(power_expo) * kLn2 +
                     std::lgamma(static_cast<ld>(n) + 1) - static_cast<ld>(n) * std::log(static_cast<ld>(n));
    return std::min(1.0, static_cast<double>(std::exp(log_p)));
}

// P(D_n <= x) by the Pelz-Good expansion in 1/sqrt(n) (Pelz & Good 1976; Simard & L'Ecuyer
// 2011 eq. 2.4-2.7), with K0..K3 written with theta-function sums for small z = x sqrt(n), truncated
// at k = ceil(16 z / pi) as scipy does.
double pelz_good_cdf(int64_t n, double x) {
    const double nd = static_cast<double>(n);
    const double z = std::sqrt(nd) * x;
    const double z2 = z * z, z3 = z2 * z, z4 = z2 * z2, z6 = z4 * z2, z8 = z4 * z4;
    const double log_q = -kPi * kPi / 8.0 / z2;
    if (log_q < -708.0) return 0.0;
    const double pi2 = kPi * kPi, pi4 = pi2 * pi2, pi6 = pi4 * pi2;
    const double sqrt2pi = std::sqrt(2.0 * kPi);
    const int64_t max_k = static_cast<int64_t>(std::ceil(16.0 * z / kPi));
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, t2 = 0, t3 = 0;
    for (int64_t k = max_k; k >= 1; --k) {  // small terms first
        const double mm = static_cast<double>(2 * k - 1);
        const double m2 = mm * mm, m4 = m2 * m2, m6 = m4 * m2;
        const double w = std::exp(m2 * log_q);  // exp(-pi^2 (2k-1)^2 / (8 z^2))
        s0 += w;
        s1 += (pi2 * m2 / 4.0 - z2) * w;
        s2 += ((6.0 * z6 + 2.0 * z4) + (2.0 * z4 - 5.0 * z2) * pi2 * m2 / 4.0 +
               pi4 * (1.0 - 2.0 * z2) * m4 / 16.0) * w;
        s3 += (pi6 * (5.0 - 30.0 * z2) * m6 / 64.0 + pi4 * (-60.0 * z2 + 212.0 * z4) * m4 / 16.0 +
               pi2 * (135.0 * z4 - 96.0 * z6) * m2 / 4.0 - 30.0 * z6 - 90.0 * z8) * w;
        const double kk = static_cast<double>(k) * static_cast<double>(k);
        const double v = std::exp(-pi2 * kk / 2.0 / z2);
        t2 += kk * v;
        t3 += (3.0 * z2 - pi2 * kk) * kk * v;
    }
    const double k0 = sqrt2pi / z * s0;
    const double k1 = sqrt2pi / (6.0 * z4) * s1;
    const double k2 = sqrt2pi / (72.0 * std::pow(z, 7)) * s2 - pi2 * sqrt2pi / (36.0 * z3) * t2;
    const double k3 = sqrt2pi / (6480.0 * std::pow(z, 10)) * s3 + pi2 * sqrt2pi / (216.0 * z6) * t3;
    return k0 + k1 / std::sqrt(nd) + k2 / nd + k3 / (nd * std::sqrt(nd));
}

KsTail tail_from_cdf(double cdf, const char* algorithm) {
    const double sf = 1.0 - std::clamp(cdf, 0.0, 1.0);
    return {sf, sf > 0 ? std::log(sf) : -kInf, algorithm};
}

KsTail tail_from_log(double log_sf, const char* algorithm) {
    log_sf = std::min(log_sf, 0.0);
    return {std::exp(log_sf), log_sf, algorithm};
}

KsTail twice_smirnov(int64_t n, double x) {
    return tail_from_log(kLn2 + log_smirnov_sf_as_scipy(n, x), "smirnov");
}

}  // namespace

// ---------------------------------------------------------------- Kolmogorov-Smirnov

KsTail kstwo_tail(int64_t n, double x) {
    if (n < 1) throw UsageError(strprintf("kstwo: sample size n = %lld must be >= 1", static_cast<long long>(n)));
    if (std::isnan(x)) throw UsageError("kstwo: statistic is NaN");
    if (x >= 1.0) return {0.0, -kInf, "x >= 1"};
    if (x <= 0.0) return {1.0, 0.0, "x <= 0"};
    const double nd = static_cast<double>(n);
    const double t = nd * x;
    if (t <= 1.0) {  // Ruben & Gambino: P(D_n <= x) = n!/n^n (2t - 1)^n for 1/2n <= x <= 1/n
        if (t <= 0.5) return {1.0, 0.0, "ruben-gambino"};
        using ld = long double;
        const ld log_cdf = std::lgamma(static_cast<ld>(n) + 1) - static_cast<ld>(n) * std::log(static_cast<ld>(n)) +
                           static_cast<ld>(n) * std::log(static_cast<ld>(2.0 * t - 1.0));
        const double cdf = static_cast<double>(std::exp(log_cdf));
        const double sf = -std::expm1(static_cast<double>(log_cdf));
        return {sf, std::log1p(-cdf), "ruben-gambino"};
    }
    if (t >= nd - 1.0)  // Ruben & Gambino: P(D_n >= x) = 2 (1 - x)^n for x >= 1 - 1/n
        return tail_from_log(kLn2 + nd * std::log1p(-x), "ruben-gambino");
    if (x >= 0.5) return twice_smirnov(n, x);  // exact: the two one-sided tails are disjoint
    const double nx2 = t * x;
    // Where scipy uses Pomeranz's recursion (n <= 140, 0.754693 < n x^2 <= 4) the Durbin matrix
    // computes the same exact distribution.
    if (n <= 140) {
        if (nx2 <= 4.0) {
            KsTail r = tail_from_cdf(durbin_cdf(n, x), "durbin-matrix");
            return r.sf > 0 ? r : twice_smirnov(n, x);
        }
        return twice_smirnov(n, x);
    }
    if (nx2 >= 2.2) return twice_smirnov(n, x);  // scipy: 0 from n x^2 >= 370; we keep the log
    if (n <= 100000 && nd * std::pow(x, 1.5) <= 1.4) return tail_from_cdf(durbin_cdf(n, x), "durbin-matrix");
    return tail_from_cdf(pelz_good_cdf(n, x), "pelz-good");
}

KsResult ks_2samp(std::vector<double> a, std::vector<double> b) {
    KsResult r;
    r.n1 = static_cast<int64_t>(a.size());
    r.n2 = static_cast<int64_t>(b.size());
    if (a.empty() || b.empty())
        throw UsageError(strprintf("ks_2samp: empty sample (n1 = %lld, n2 = %lld)",
                                   static_cast<long long>(r.n1), static_cast<long long>(r.n2)));
    for (const std::vector<double>* v : {&a, &b})
        for (size_t i = 0; i < v->size(); ++i)
            if (std::isnan((*v)[i]))
                throw UsageError(strprintf("ks_2samp: NaN in sample %s at index %zu", v == &a ? "a" : "b", i));
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    // D over the pooled values, each difference computed as scipy does: i/n1 - j/n2 in double.
    const double n1 = static_cast<double>(r.n1), n2 = static_cast<double>(r.n2);
    double max_diff = -kInf, min_diff = kInf;
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        const double v = (j >= b.size() || (i < a.size() && a[i] <= b[j])) ? a[i] : b[j];
        while (i < a.size() && a[i] <= v) ++i;
        while (j < b.size() && b[j] <= v) ++j;
        const double diff = static_cast<double>(i) / n1 - static_cast<double>(j) / n2;
        max_diff = std::max(max_diff, diff);
        min_diff = std::min(min_diff, diff);
    }
    const double min_s = std::clamp(-min_diff, 0.0, 1.0);
    r.statistic = (min_s > max_diff) ? min_s : max_diff;

    const double big = std::max(n1, n2), small = std::min(n1, n2);
    r.n_eff = std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(big * small / (big + small))));
    if (r.statistic >= 1.0) {
        // The samples do not overlap. kstwo gives 0 here; the exact two-sample probability of
        // this ordering (either way round) is 2 / C(n1 + n2, n1).
        using ld = long double;
        const ld log_p = static_cast<ld>(kLn2) - std::lgamma(static_cast<ld>(n1 + n2) + 1) +
                         std::lgamma(static_cast<ld>(n1) + 1) + std::lgamma(static_cast<ld>(n2) + 1);
        const double lp = std::min(0.0, static_cast<double>(log_p));
        r.pvalue = std::exp(lp);
        r.log10_pvalue = lp * kLog10e;
        r.algorithm = "exact P(D = 1)";
        return r;
    }
    const KsTail tail = kstwo_tail(r.n_eff, r.statistic);
    r.pvalue = std::clamp(tail.sf, 0.0, 1.0);
    r.log10_pvalue = tail.log_sf * kLog10e;
    r.algorithm = tail.algorithm;
    return r;
}

std::string ks_format_p(double pvalue, double log10_pvalue) {
    if (pvalue >= 1e-300) return strprintf("p = %.3g", pvalue);
    return strprintf("p < 1e-300 (log10 p = %.1f)", log10_pvalue);
}

std::string ks_format_p(const KsResult& ks) { return ks_format_p(ks.pvalue, ks.log10_pvalue); }

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

AnalysisReport analyze_confidences(const std::vector<ScoredSample>& samples, const AnalysisKeys& options,
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
                      {"note", "7B model on its own data, window 64, low threshold 0.5 (METHOD.md section 7)"}};
    return j.dump(2) + "\n";
}

namespace {

std::string percent(double share) { return strprintf("%.2f%%", 100.0 * share); }

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

// The three measurements the paper reports, ours next to theirs (table and figure).
struct MeasurementRow {
    std::string what, ours, published;
};

// "27.50% (11 of 40)", or "n/a (no samples)" when there is nothing to take a share of.
std::string share_text(int64_t part, int64_t whole, const char* what) {
    if (whole == 0) return strprintf("n/a (no %s)", what);
    return strprintf("%s (%lld of %lld)", percent(static_cast<double>(part) / static_cast<double>(whole)).c_str(),
                     static_cast<long long>(part), static_cast<long long>(whole));
}

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

}  // namespace

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
    const std::vector<MeasurementRow> rows = measurement_rows(r);
    size_t w0 = 0, w1 = 0;
    for (const MeasurementRow& m : rows) {
        w0 = std::max(w0, m.what.size());
        w1 = std::max(w1, m.ours.size());
    }
    for (const MeasurementRow& m : rows)
        out += strprintf("%-*s  %-*s  %s\n", static_cast<int>(w0), m.what.c_str(), static_cast<int>(w1),
                         m.ours.c_str(), m.published.c_str());
    if (r.has_ks)
        out += strprintf("(KS: scipy.stats.ks_2samp method='asymp', kstwo with n_eff = %lld, %s)\n",
                         static_cast<long long>(r.ks.n_eff), r.ks.algorithm.c_str());
    return out;
}

// ---------------------------------------------------------------- analysis.svg

namespace {

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default:
                // Control characters are not allowed in XML 1.0.
                if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
                else out += c;
        }
    }
    return out;
}

// Keeps the end of a long label (the file name is the informative part of a path).
std::string shorten(const std::string& s, size_t max_len) {
    if (s.size() <= max_len) return s;
    return "..." + s.substr(s.size() - (max_len - 3));
}

struct Panel {
    double x0, x1, y0, y1;  // plot area in SVG pixels; y0 is the top
    double px(double v) const { return x0 + v * (x1 - x0); }                   // v in [0, 1]
    double py(double frac) const { return y1 - frac * (y1 - y0); }             // frac in [0, 1]
};

constexpr const char* kColorSensitive = "#d55e00";     // vermillion (colour-blind safe pair)
constexpr const char* kColorNonSensitive = "#0072b2";  // blue

std::string text(double x, double y, const std::string& s, const std::string& attrs = "") {
    return strprintf("<text x=\"%.1f\" y=\"%.1f\"%s%s>%s</text>\n", x, y, attrs.empty() ? "" : " ", attrs.c_str(),
                     xml_escape(s).c_str());
}

std::string line(double x0, double y0, double x1, double y1, const std::string& attrs) {
    return strprintf("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", x0, y0, x1, y1, attrs.c_str());
}

// Frame, x ticks on [0, 1], the x label.
std::string panel_frame(const Panel& p, const std::string& title, const std::string& xlabel) {
    std::string s;
    s += strprintf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\" stroke=\"#333333\"/>\n",
                   p.x0, p.y0, p.x1 - p.x0, p.y1 - p.y0);
    s += text((p.x0 + p.x1) / 2, p.y0 - 10, title, "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
    for (int i = 0; i <= 5; ++i) {
        const double v = i / 5.0;
        s += line(p.px(v), p.y1, p.px(v), p.y1 + 5, "stroke=\"#333333\"");
        s += text(p.px(v), p.y1 + 18, strprintf("%.1f", v), "text-anchor=\"middle\"");
    }
    s += text((p.x0 + p.x1) / 2, p.y1 + 38, xlabel, "text-anchor=\"middle\"");
    return s;
}

std::string y_label(const Panel& p, const std::string& label) {
    const double x = p.x0 - 52, y = (p.y0 + p.y1) / 2;
    return strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\">%s</text>\n",
                     x, y, x, y, xml_escape(label).c_str());
}

std::string legend(const Panel& p, const AnalysisReport& r) {
    std::string s;
    const double x = p.x0 + 12, y = p.y0 + 14;
    s += strprintf("<rect x=\"%.1f\" y=\"%.1f\" width=\"218\" height=\"44\" fill=\"#ffffff\" fill-opacity=\"0.85\" "
                   "stroke=\"#bbbbbb\"/>\n", x - 6, y - 6);
    s += line(x, y + 6, x + 22, y + 6, strprintf("stroke=\"%s\" stroke-width=\"3\"", kColorSensitive));
    s += text(x + 28, y + 10, strprintf("sensitive (n = %lld)", static_cast<long long>(r.sensitive.count)));
    s += line(x, y + 26, x + 22, y + 26, strprintf("stroke=\"%s\" stroke-width=\"3\"", kColorNonSensitive));
    s += text(x + 28, y + 30, strprintf("non-sensitive (n = %lld)", static_cast<long long>(r.non_sensitive.count)));
    return s;
}

// Densities on a log axis: the mass of confident tokens sits in the last bin, and a linear axis
// would hide every other bin.
std::string histogram_panel(const Panel& p, const AnalysisReport& r) {
    std::string s = panel_frame(p, strprintf("Histogram, %lld bins", static_cast<long long>(r.options.bins)),
                                "confidence p(target token)");
    double lo = kInf, hi = 0.0;
    for (const Histogram* h : {&r.hist_sensitive, &r.hist_non_sensitive})
        for (double d : h->density)
            if (d > 0) {
                lo = std::min(lo, d);
                hi = std::max(hi, d);
            }
    if (!(hi > 0)) lo = 0.1, hi = 10.0;
    const double dec_lo = std::floor(std::log10(lo)), dec_hi = std::max(dec_lo + 1, std::ceil(std::log10(hi)));
    auto fy = [&](double d) { return p.py((std::log10(d) - dec_lo) / (dec_hi - dec_lo)); };
    for (double e = dec_lo; e <= dec_hi; e += 1.0) {
        const double y = p.py((e - dec_lo) / (dec_hi - dec_lo));
        if (e > dec_lo && e < dec_hi) s += line(p.x0, y, p.x1, y, "stroke=\"#e5e5e5\"");
        s += line(p.x0 - 5, y, p.x0, y, "stroke=\"#333333\"");
        s += text(p.x0 - 8, y + 4, strprintf("%g", std::pow(10.0, e)), "text-anchor=\"end\"");
    }
    s += y_label(p, "density (log scale)");
    for (const auto& [h, color] : {std::pair<const Histogram*, const char*>{&r.hist_non_sensitive, kColorNonSensitive},
                                   {&r.hist_sensitive, kColorSensitive}}) {
        std::string path = strprintf("M%.1f %.1f", p.x0, p.y1);
        for (size_t i = 0; i < h->density.size(); ++i) {
            const double y = h->density[i] > 0 ? fy(h->density[i]) : p.y1;
            path += strprintf(" L%.1f %.1f L%.1f %.1f", p.px(h->edges[i]), y, p.px(h->edges[i + 1]), y);
        }
        path += strprintf(" L%.1f %.1f Z", p.x1, p.y1);
        s += strprintf("<path d=\"%s\" fill=\"%s\" fill-opacity=\"0.18\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                       path.c_str(), color, color);
    }
    return s + legend(p, r);
}

std::string cdf_panel(const Panel& p, const AnalysisReport& r) {
    std::string s = panel_frame(p, "Cumulative distribution", "confidence p(target token)");
    for (int i = 0; i <= 4; ++i) {
        const double v = i / 4.0, y = p.py(v);
        if (i > 0 && i < 4) s += line(p.x0, y, p.x1, y, "stroke=\"#e5e5e5\"");
        s += line(p.x0 - 5, y, p.x0, y, "stroke=\"#333333\"");
        s += text(p.x0 - 8, y + 4, strprintf("%.2f", v), "text-anchor=\"end\"");
    }
    s += y_label(p, "share of tokens with confidence <= x");
    const double xt = p.px(std::clamp(r.options.low_threshold, 0.0, 1.0));
    s += line(xt, p.y0, xt, p.y1, "stroke=\"#777777\" stroke-dasharray=\"5,4\"");
    // Below the legend, with a white halo so a curve passing behind it does not hide it.
    s += text(xt + 4, p.y0 + 66, strprintf("low threshold %.2f", r.options.low_threshold),
              "font-size=\"11\" fill=\"#555555\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"");
    // Where the two curves are furthest apart on the plotting grid: the KS distance, drawn.
    if (r.has_ks && r.cdf_sensitive.size() == r.cdf_x.size() && r.cdf_non_sensitive.size() == r.cdf_x.size()) {
        size_t at = 0;
        for (size_t i = 0; i < r.cdf_x.size(); ++i)
            if (std::abs(r.cdf_sensitive[i] - r.cdf_non_sensitive[i]) >
                std::abs(r.cdf_sensitive[at] - r.cdf_non_sensitive[at]))
                at = i;
        const double xd = p.px(r.cdf_x[at]);
        const double ya = p.py(r.cdf_sensitive[at]), yb = p.py(r.cdf_non_sensitive[at]);
        s += line(xd, ya, xd, yb, "stroke=\"#222222\" stroke-width=\"1.5\"");
        s += text(xd - 5, (ya + yb) / 2 + 4, strprintf("D = %.4f", r.ks.statistic),
                  "text-anchor=\"end\" font-size=\"11\" stroke=\"#ffffff\" stroke-width=\"3\" "
                  "paint-order=\"stroke\"");
    }
    for (const auto& [ys, color] : {std::pair<const std::vector<double>*, const char*>{&r.cdf_non_sensitive,
                                                                                        kColorNonSensitive},
                                    {&r.cdf_sensitive, kColorSensitive}}) {
        if (ys->empty() || ys->size() != r.cdf_x.size()) continue;
        std::string pts;
        for (size_t i = 0; i < ys->size(); ++i) pts += strprintf("%.1f,%.1f ", p.px(r.cdf_x[i]), p.py((*ys)[i]));
        s += strprintf("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", pts.c_str(),
                       color);
    }
    return s + legend(p, r);
}

}  // namespace

std::string analysis_svg(const AnalysisReport& r) {
    const double width = 1000;
    const int n_cat_rows = static_cast<int>(r.categories.size()) + 3;  // header + all sets
    const double table_top = 610;
    const double height = table_top + 22.0 * n_cat_rows + 30;
    std::string s;
    s += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    s += strprintf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                   "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" font-size=\"12\" fill=\"#222222\">\n",
                   width, height, width, height);
    s += "<title>cuset sensitivity analysis: confidence of sensitive vs non-sensitive tokens</title>\n";
    s += strprintf("<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, height);
    s += text(width / 2, 30, "Confidence of CUDA-sensitive vs non-sensitive tokens",
              "text-anchor=\"middle\" font-size=\"19\" font-weight=\"bold\"");
    s += text(width / 2, 52,
              strprintf("model: %s  |  data: %s  |  %lld samples, %lld valid tokens", shorten(r.model, 48).c_str(),
                        shorten(r.data, 48).c_str(), static_cast<long long>(r.n_samples),
                        static_cast<long long>(r.all.count)),
              "text-anchor=\"middle\" fill=\"#555555\"");
    s += histogram_panel(Panel{90, 470, 95, 385}, r);
    s += cdf_panel(Panel{590, 970, 95, 385}, r);

    // The three published measurements next to ours.
    const double c0 = 40, c1 = 462, c2 = 800;
    double y = 465;
    const std::vector<MeasurementRow> rows = measurement_rows(r);
    for (size_t i = 0; i < rows.size(); ++i) {
        const std::string attrs = i == 0 ? "font-weight=\"bold\"" : "";
        s += text(c0, y, rows[i].what, attrs);
        s += text(c1, y, rows[i].ours, attrs);
        s += text(c2, y, rows[i].published, attrs);
        if (i == 0) s += line(c0, y + 7, 970, y + 7, "stroke=\"#999999\"");
        y += i == 0 ? 26 : 22;
    }
    y -= 2;
    s += text(c0, y, "Published: a 7B model on its own data (METHOD.md section 7). KS p-value: scipy.stats.ks_2samp, "
                     "method='asymp'.", "font-size=\"11\" fill=\"#666666\"");

    // Per-set and per-category summary.
    y = table_top;
    const double cols[] = {40, 250, 340, 420, 500, 580, 660};
    const char* heads[] = {"tokens", "mean", "p25", "median", "p75"};
    s += text(cols[0], y, "confidence by set and category", "font-weight=\"bold\"");
    for (int i = 0; i < 5; ++i) s += text(cols[i + 1] + 60, y, heads[i], "font-weight=\"bold\" text-anchor=\"end\"");
    s += text(cols[6] + 90, y, strprintf("share < %.2f", r.options.low_threshold),
              "font-weight=\"bold\" text-anchor=\"end\"");
    s += line(cols[0], y + 7, 970, y + 7, "stroke=\"#999999\"");
    std::vector<const ConfidenceSummary*> sets = {&r.all, &r.sensitive, &r.non_sensitive};
    for (const ConfidenceSummary& c : r.categories) sets.push_back(&c);
    for (size_t i = 0; i < sets.size(); ++i) {
        const ConfidenceSummary& c = *sets[i];
        y += 22;
        const bool is_category = i >= 3;
        std::string attrs;
        if (!is_category && i > 0) attrs = strprintf("fill=\"%s\"", i == 1 ? kColorSensitive : kColorNonSensitive);
        s += text(cols[0] + (is_category ? 16 : 0), y, is_category ? "category: " + c.name : c.name, attrs);
        s += text(cols[1] + 60, y, strprintf("%lld", static_cast<long long>(c.count)), "text-anchor=\"end\"");
        if (c.count == 0) continue;
        s += text(cols[2] + 60, y, strprintf("%.3f", c.mean), "text-anchor=\"end\"");
        s += text(cols[3] + 60, y, strprintf("%.3f", c.quantiles[1]), "text-anchor=\"end\"");
        s += text(cols[4] + 60, y, strprintf("%.3f", c.quantiles[2]), "text-anchor=\"end\"");
        s += text(cols[5] + 60, y, strprintf("%.3f", c.quantiles[3]), "text-anchor=\"end\"");
        s += text(cols[6] + 90, y, percent(c.share_low), "text-anchor=\"end\"");
    }
    s += "</svg>\n";
    return s;
}

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
