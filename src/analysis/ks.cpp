// ks: the two-sample KS test as scipy computes it, including its far tail (in log space): the
// kstwo regions (Ruben-Gambino, Smirnov, Durbin matrix, Pelz-Good) and ks_2samp over them.
#include "cuset/analysis/ks.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset {

namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;
constexpr double kLn2 = 0.693147180559945309417232121458176568;
constexpr double kLog10e = 0.434294481903251827651128918916605082;
constexpr double kInf = std::numeric_limits<double>::infinity();

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

}  // namespace cuset
