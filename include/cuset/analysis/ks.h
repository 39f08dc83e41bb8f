// ks: the two-sample Kolmogorov-Smirnov test as scipy computes it (scipy.stats.ks_2samp,
// method='asymp', and the kstwo tail behind it), with its far tail kept in log space.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cuset {

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

}  // namespace cuset
