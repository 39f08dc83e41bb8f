// The statistics of the sensitivity analysis: KS test and the kstwo distribution against scipy
// (golden values from tests/golden/stats.py), histograms/quantiles against numpy, window
// statistics on hand-worked examples, and the report writers (JSON, table, well-formed SVG).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "cuset/analysis/ks.h"
#include "cuset/analysis/report.h"
#include "cuset/analysis/stats.h"
#include "cuset/analysis/svg.h"
#include "cuset/core/error.h"
#include "test_util.h"

using nlohmann::json;

namespace {

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/stats/";

json golden() {
    std::ifstream f(kGolden + "stats.json");
    EXPECT_TRUE(f.good()) << "golden file missing: run ctest (fixture golden_stats)";
    json j;
    f >> j;
    return j;
}

std::vector<double> read_f64(const std::string& path) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    EXPECT_TRUE(f.good()) << path;
    const std::streamsize bytes = f.tellg();
    std::vector<double> v(static_cast<size_t>(bytes) / sizeof(double));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(v.data()), bytes);
    return v;
}

// p-values: scipy evaluates the same exact distribution (kstwo) in double; 1e-6 relative leaves
// room for the different summation orders and for scipy's double-double vs our long double,
// while any wrong region, effective n or formula is off by far more.
constexpr double kPRelTol = 1e-6;
// Where p is below the double range the comparison is on log10 p: 1e-6 there is 2.3e-6 relative
// in p (the references are 60-digit mpmath or a float64 log-space sum good to ~1e-8).
constexpr double kLog10AbsTol = 1e-6;

}  // namespace

// ---------------------------------------------------------------- KS against scipy

TEST(KsTest, TwoSampleMatchesScipyAsymp) {
    const json g = golden();
    ASSERT_GE(g["ks"].size(), 10u);
    for (const json& c : g["ks"]) {
        const std::string name = c["name"];
        SCOPED_TRACE(name);
        const std::vector<double> a = read_f64(kGolden + "ks_" + name + "_a.f64");
        const std::vector<double> b = read_f64(kGolden + "ks_" + name + "_b.f64");
        ASSERT_EQ(static_cast<int64_t>(a.size()), c["n1"].get<int64_t>());
        ASSERT_EQ(static_cast<int64_t>(b.size()), c["n2"].get<int64_t>());
        const cuset::KsResult r = cuset::ks_2samp(a, b);
        // D is i/n1 - j/n2 in double, computed exactly as scipy does: bit-identical.
        EXPECT_EQ(r.statistic, c["statistic"].get<double>());
        EXPECT_EQ(r.n_eff, c["n_eff"].get<int64_t>());
        EXPECT_EQ(r.method, "asymp");
        ASSERT_TRUE(std::isfinite(r.log10_pvalue)) << r.algorithm;
        ASSERT_FALSE(std::isnan(r.pvalue));
        const double p_ref = c["pvalue"];
        const double log10_ref = c["log10_pvalue"];
        if (p_ref >= 1e-300) {
            CUSET_EXPECT_NEAR(r.pvalue, p_ref, kPRelTol * p_ref) << r.algorithm;
        } else if (log10_ref < -300) {
            // scipy says 0 here; the reference is log10 p from mpmath (see stats.py).
            EXPECT_LT(r.pvalue, 1e-300);
            EXPECT_NE(cuset::ks_format_p(r).find("p < 1e-300"), std::string::npos) << cuset::ks_format_p(r);
        } else {
            // D = 1 (scipy says 0): the exact two-sample P(D = 1), representable here.
            const double p_exact = std::pow(10.0, log10_ref);
            CUSET_EXPECT_NEAR(r.pvalue, p_exact, kPRelTol * p_exact) << r.algorithm;
        }
        CUSET_EXPECT_NEAR(r.log10_pvalue, log10_ref, kLog10AbsTol) << r.algorithm << " " << c["log10_reference"];
    }
}

TEST(KsTest, KstwoDistributionMatchesScipyInEveryRegion) {
    const json g = golden();
    std::map<std::string, double> worst;  // largest relative error in p per algorithm, printed
    int n_far = 0;
    for (const json& c : g["kstwo"]) {
        const int64_t n = c["n"];
        const double x = c["x"];
        SCOPED_TRACE("n = " + std::to_string(n) + ", x = " + std::to_string(x));
        const cuset::KsTail t = cuset::kstwo_tail(n, x);
        const double sf = c["sf"];
        double& w = worst[t.algorithm];
        if (sf >= 1e-300) {
            CUSET_EXPECT_NEAR(t.sf, sf, kPRelTol * sf) << t.algorithm;
            w = std::max(w, std::abs(t.sf - sf) / sf);
        }
        if (c.contains("log10_sf")) {
            ++n_far;
            ASSERT_TRUE(std::isfinite(t.log_sf)) << t.algorithm;
            const double err = std::abs(t.log_sf / std::log(10.0) - c["log10_sf"].get<double>());
            CUSET_EXPECT_WITHIN(err, kLog10AbsTol) << t.algorithm;
            worst["far tail, |log10 error|"] = std::max(worst["far tail, |log10 error|"], err);
        }
    }
    EXPECT_GE(n_far, 8);
    for (const char* a : {"ruben-gambino", "durbin-matrix", "pelz-good", "smirnov"})
        EXPECT_TRUE(worst.count(a)) << "grid does not reach " << a;
    for (const auto& [name, err] : worst) std::printf("  kstwo vs scipy, %-26s worst %.2e\n", name.c_str(), err);
}

TEST(KsTest, SymmetricAndNeverNaN) {
    const std::vector<double> a = {0.1, 0.4, 0.4, 0.9, 0.95};
    const std::vector<double> b = {0.2, 0.4, 0.5, 0.6};
    const cuset::KsResult ab = cuset::ks_2samp(a, b), ba = cuset::ks_2samp(b, a);
    EXPECT_EQ(ab.statistic, ba.statistic);
    EXPECT_EQ(ab.pvalue, ba.pvalue);
    // n1 = n2 = 1: scipy's n_eff rounds to 0 and gives NaN; we use n_eff = 1 (D = 1, P(D = 1) = 1).
    const cuset::KsResult one = cuset::ks_2samp({0.3}, {0.7});
    EXPECT_EQ(one.statistic, 1.0);
    EXPECT_EQ(one.pvalue, 1.0);
    EXPECT_EQ(one.n_eff, 1);
    // Identical samples: D = 0, p = 1.
    const cuset::KsResult same = cuset::ks_2samp(a, a);
    EXPECT_EQ(same.statistic, 0.0);
    EXPECT_EQ(same.pvalue, 1.0);
    EXPECT_EQ(same.log10_pvalue, 0.0);
}

TEST(KsTest, RejectsEmptyAndNaN) {
    EXPECT_THROW(cuset::ks_2samp({}, {0.5}), cuset::UsageError);
    EXPECT_THROW(cuset::ks_2samp({0.5, std::nan("")}, {0.5}), cuset::UsageError);
    EXPECT_THROW(cuset::kstwo_tail(0, 0.5), cuset::UsageError);
}

TEST(KsTest, FormatsTinyPValues) {
    EXPECT_EQ(cuset::ks_format_p(4.6e-39, std::log10(4.6e-39)), "p = 4.6e-39");
    EXPECT_EQ(cuset::ks_format_p(0.5, std::log10(0.5)), "p = 0.5");
    EXPECT_EQ(cuset::ks_format_p(0.0, -2171.34), "p < 1e-300 (log10 p = -2171.3)");
    EXPECT_EQ(cuset::ks_format_p(1e-310, -310.0), "p < 1e-300 (log10 p = -310.0)");
}

// ---------------------------------------------------------------- numpy statistics

TEST(Describe, HistogramMatchesNumpy) {
    const json d = golden()["describe"];
    const std::vector<double> values = d["values"];
    const cuset::Histogram h = cuset::histogram01(values, d["bins"].get<int64_t>());
    // Edges: the same linspace arithmetic; counts: integers. Both exact.
    EXPECT_EQ(h.edges, d["hist_edges"].get<std::vector<double>>());
    EXPECT_EQ(h.counts, d["hist_counts"].get<std::vector<int64_t>>());
    EXPECT_EQ(h.n_outside, d["hist_outside"].get<int64_t>());  // e.g. -0.25, 1.5: ignored as numpy does
    EXPECT_EQ(h.n_inside + h.n_outside, static_cast<int64_t>(values.size()));
    const std::vector<double> density = d["hist_density"];
    ASSERT_EQ(h.density.size(), density.size());
    for (size_t i = 0; i < density.size(); ++i)  // a division or two in another order: 1e-12
        CUSET_EXPECT_NEAR(h.density[i], density[i], 1e-12 * density[i]) << "bin " << i;
    EXPECT_EQ(cuset::histogram01(values, 7).counts, d["hist7_counts"].get<std::vector<int64_t>>());
}

TEST(Describe, QuantilesAndMeanMatchNumpy) {
    const json d = golden()["describe"];
    const std::vector<double> levels = d["levels"];
    const std::vector<double> ours = cuset::quantiles(d["quantile_values"].get<std::vector<double>>(), levels);
    const std::vector<double> ref = d["quantiles"];
    ASSERT_EQ(ours.size(), ref.size());
    // numpy's lerp, the same operations: equal (seen: bit for bit); a compiler that contracts its
    // multiply-add into an FMA, or another order, moves a result by an ulp or two. 16 ulps
    // (16 x 2^-52 relative; 2e-16 relative was less than one ulp for values just above a power
    // of 2) still catch a wrong index or weight (>= 1e-3).
    for (size_t i = 0; i < ref.size(); ++i)
        CUSET_EXPECT_NEAR(ours[i], ref[i], 16 * std::ldexp(1.0, -52) * std::abs(ref[i])) << "q = " << levels[i];
    const std::vector<double> small = cuset::quantiles({0.25, 0.5, 1.0, 0.75}, levels);
    const std::vector<double> small_ref = d["small_quantiles"];
    for (size_t i = 0; i < small_ref.size(); ++i) EXPECT_DOUBLE_EQ(small[i], small_ref[i]);
    // numpy sums pairwise in double, we in long double: both within ~1e-15 of the exact mean
    // (log2(n) u of the mean at worst for numpy's pairwise sum of these positive O(1) values); 1e-13.
    CUSET_EXPECT_NEAR(cuset::mean(d["quantile_values"].get<std::vector<double>>()), d["mean"].get<double>(), 1e-13);
    EXPECT_TRUE(std::isnan(cuset::mean({})));
    EXPECT_THROW(cuset::quantiles({}, {0.5}), cuset::UsageError);
}

TEST(Describe, EcdfCountsValuesAtOrBelow) {
    const std::vector<double> sorted = {0.1, 0.2, 0.2, 0.9};
    EXPECT_EQ(cuset::ecdf_at(sorted, {0.0, 0.1, 0.2, 0.5, 1.0}), (std::vector<double>{0.0, 0.25, 0.75, 0.75, 1.0}));
}

// ---------------------------------------------------------------- low-confidence windows

namespace {

cuset::SampleWindows windows_of(const std::vector<float>& conf, const std::vector<uint8_t>& sens,
                                int64_t window = 4) {
    return cuset::sample_windows(conf.data(), sens.data(), static_cast<int64_t>(conf.size()), window,
                                 /*low_threshold=*/0.5, /*overlap=*/0.5);
}

}  // namespace

// window 4, low threshold 0.5, overlap 0.5; dyadic confidences so every sum is exact.
TEST(Windows, HandWorkedExamples) {
    // A: 6 tokens -> windows at 0, 1, 2.
    //   w0 = .75 .75 .25 .25  mean 0.5   -> not low (the test is mean < 0.5)
    //   w1 = .75 .25 .25 .25  mean 0.375 -> low; sensitive 0 1 1 1 = 3 of 4 > 2 -> on sensitive structure
    //   w2 = .25 .25 .25 .75  mean 0.375 -> low; sensitive 1 1 1 0 = 3 of 4 -> on sensitive structure
    const auto a = windows_of({0.75f, 0.75f, 0.25f, 0.25f, 0.25f, 0.75f}, {0, 0, 1, 1, 1, 0});
    EXPECT_EQ(a.n_windows, 3);
    EXPECT_EQ(a.n_low, 2);
    EXPECT_EQ(a.n_low_sensitive, 2);
    // B: 3 tokens < window: one window over all 3, mean 1.25/3 < 0.5 -> low; 1 of 3 sensitive,
    //    not more than half -> not on sensitive structure.
    const auto b = windows_of({0.25f, 0.25f, 0.75f}, {1, 0, 0});
    EXPECT_EQ(b.n_windows, 1);
    EXPECT_EQ(b.n_low, 1);
    EXPECT_EQ(b.n_low_sensitive, 0);
    // C: exactly half sensitive (2 of 4) is not "more than half".
    const auto c = windows_of({0.125f, 0.125f, 0.125f, 0.125f}, {1, 1, 0, 0});
    EXPECT_EQ(c.n_windows, 1);
    EXPECT_EQ(c.n_low, 1);
    EXPECT_EQ(c.n_low_sensitive, 0);
    // D: 5 confident tokens -> 2 windows, none low.
    const auto d = windows_of({1, 1, 1, 1, 1}, {1, 1, 1, 1, 1});
    EXPECT_EQ(d.n_windows, 2);
    EXPECT_EQ(d.n_low, 0);
    // E: no valid tokens -> no window, and the sample is not counted.
    const auto e = windows_of({}, {});
    EXPECT_EQ(e.n_windows, 0);

    cuset::WindowStats w;
    for (const auto& s : {a, b, c, d, e}) w.add(s);
    EXPECT_EQ(w.n_samples, 4);           // A B C D
    EXPECT_EQ(w.n_samples_with_low, 3);  // A B C
    EXPECT_EQ(w.n_windows, 7);           // 3 + 1 + 1 + 2
    EXPECT_EQ(w.n_low_windows, 4);       // 2 + 1 + 1
    EXPECT_EQ(w.n_low_sensitive, 2);     // A's two
    EXPECT_DOUBLE_EQ(w.share_samples_with_low(), 0.75);
    EXPECT_DOUBLE_EQ(w.share_low_sensitive(), 0.5);
}

TEST(Windows, PrefixSumsEqualDirectCount) {
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (int64_t n : {0, 1, 63, 64, 65, 700}) {
        std::vector<float> conf(n);
        std::vector<uint8_t> sens(n);
        for (int64_t i = 0; i < n; ++i) {
            // Runs of low confidence inside sensitive stretches, as in real data.
            const bool in_run = (i / 40) % 3 == 1;
            conf[i] = in_run ? 0.6f * u(gen) : u(gen);
            sens[i] = (in_run ? u(gen) < 0.8f : u(gen) < 0.2f) ? 1 : 0;
        }
        const int64_t window = 64, len = std::min<int64_t>(window, n);
        cuset::SampleWindows direct;
        for (int64_t s = 0; n > 0 && s + len <= n; ++s) {
            double sum = 0;
            int64_t k = 0;
            for (int64_t i = s; i < s + len; ++i) sum += conf[i], k += sens[i];
            ++direct.n_windows;
            if (sum / static_cast<double>(len) < 0.5) {
                ++direct.n_low;
                if (static_cast<double>(k) / static_cast<double>(len) > 0.5) ++direct.n_low_sensitive;
            }
        }
        const auto fast = cuset::sample_windows(conf.data(), sens.data(), n, window, 0.5, 0.5);
        EXPECT_EQ(fast.n_windows, direct.n_windows) << n;
        EXPECT_EQ(fast.n_low, direct.n_low) << n;
        EXPECT_EQ(fast.n_low_sensitive, direct.n_low_sensitive) << n;
        if (n == 700) {
            EXPECT_GT(direct.n_low_sensitive, 0);  // the example exercises the count
        }
    }
}

// ---------------------------------------------------------------- the report

namespace {

std::vector<cuset::ScoredSample> synthetic_samples() {
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::vector<cuset::ScoredSample> samples;
    for (int s = 0; s < 40; ++s) {
        cuset::ScoredSample x;
        x.id = s;
        const int n = 30 + 7 * s;
        for (int i = 0; i < n; ++i) {
            const bool sens = (i / 25) % 2 == 1;
            const bool hard = sens && s % 3 == 0;
            x.confidence.push_back(hard ? 0.5f * u(gen) : std::pow(u(gen), sens ? 0.3f : 0.12f));
            x.sensitive.push_back(sens ? 1 : 0);
            x.categories.push_back(sens ? (1u | (i % 2 ? 4u : 16u)) : 0u);
        }
        samples.push_back(std::move(x));
    }
    return samples;
}

}  // namespace

TEST(Report, JsonTableAndSvg) {
    const cuset::AnalysisOptions options;  // window 64, threshold 0.5, overlap 0.5, 20 bins
    const auto samples = synthetic_samples();
    const cuset::AnalysisReport r = cuset::analyze_confidences(samples, options, "models/<tiny> & co", "data.jsonl");
    int64_t n_tokens = 0, n_sens = 0;
    for (const auto& s : samples) {
        n_tokens += static_cast<int64_t>(s.confidence.size());
        for (uint8_t v : s.sensitive) n_sens += v;
    }
    EXPECT_EQ(r.all.count, n_tokens);
    EXPECT_EQ(r.sensitive.count, n_sens);
    EXPECT_EQ(r.non_sensitive.count, n_tokens - n_sens);
    ASSERT_TRUE(r.has_ks);
    EXPECT_EQ(r.ks.n1, n_sens);
    EXPECT_LT(r.ks.pvalue, 1e-10);  // the sets differ by construction
    EXPECT_EQ(r.categories.size(), 3u);  // kernel, indexing, sync
    EXPECT_EQ(r.categories[0].name, "kernel");
    EXPECT_EQ(r.categories[0].count, n_sens);
    EXPECT_GT(r.windows.n_low_sensitive, 0);
    EXPECT_EQ(r.windows.n_samples, 40);

    const json j = json::parse(cuset::analysis_json(r));
    EXPECT_EQ(j["format"], "cuset-analysis");
    EXPECT_EQ(j["n_tokens"], n_tokens);
    EXPECT_EQ(j["ks"]["statistic"].get<double>(), r.ks.statistic);
    EXPECT_EQ(j["histogram"]["sensitive"]["counts"].size(), 20u);
    EXPECT_EQ(j["windows"]["n_low_windows"], r.windows.n_low_windows);
    EXPECT_EQ(j["published"]["ks_pvalue"].get<double>(), 4.6e-39);
    EXPECT_TRUE(j["categories"].contains("indexing"));

    const std::string table = cuset::analysis_table(r);
    for (const char* s : {"sensitive", "non-sensitive", "  kernel", "KS test", "74.47%", "91.18%", "p = 4.6e-39"})
        EXPECT_NE(table.find(s), std::string::npos) << s << "\n" << table;

    const std::string dir = cuset::test::scratch_dir("stats_report");
    cuset::analysis_write(r, dir);
    EXPECT_EQ(cuset::test::read_file(dir + "/analysis.json"), cuset::analysis_json(r));
    // Well-formed XML (python's parser) and the labels a reader needs.
    const auto parsed = cuset::test::run_command(
        std::string("'") + CUSET_PYTHON +
        "' -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
        "print(r.tag); print(\"|\".join(t.text or \"\" for t in r.iter()))' '" + dir + "/analysis.svg'");
    ASSERT_EQ(parsed.exit_code, 0) << parsed.err;
    EXPECT_EQ(parsed.out.substr(0, parsed.out.find('\n')), "{http://www.w3.org/2000/svg}svg");
    for (const char* s : {"Histogram, 20 bins", "Cumulative distribution", "density (log scale)",
                          "confidence p(target token)", "sensitive (n = ", "non-sensitive (n = ", "KS test",
                          "published (7B model)", "p = 4.6e-39", "74.47%", "91.18%", "models/<tiny> & co",
                          "category: indexing"})
        EXPECT_NE(parsed.out.find(s), std::string::npos) << s;
}

TEST(Report, EmptySetsStillWriteAReport) {
    std::vector<cuset::ScoredSample> samples(2);
    samples[0].confidence = {0.9f, 0.2f, 0.3f};
    samples[0].sensitive = {0, 0, 0};
    const cuset::AnalysisReport r = cuset::analyze_confidences(samples, cuset::AnalysisOptions{}, "m", "d");
    EXPECT_FALSE(r.has_ks);
    EXPECT_EQ(r.windows.n_samples, 1);  // the empty sample is not counted
    const json j = json::parse(cuset::analysis_json(r));
    EXPECT_TRUE(j["ks"].is_null());
    EXPECT_TRUE(j["confidence"]["sensitive"]["mean"].is_null());
    // 0.9 0.2 0.3: mean 0.467 < 0.5, one low window, not sensitive -> share 0 of 1, not n/a.
    EXPECT_EQ(j["windows"]["share_low_sensitive"].get<double>(), 0.0);
    samples[0].confidence = {0.9f, 0.9f, 0.3f};  // no low window: the share has no denominator
    const cuset::AnalysisReport none = cuset::analyze_confidences(samples, cuset::AnalysisOptions{}, "m", "d");
    EXPECT_TRUE(json::parse(cuset::analysis_json(none))["windows"]["share_low_sensitive"].is_null());
    EXPECT_NE(cuset::analysis_table(none).find("n/a (no low-confidence windows)"), std::string::npos);
    EXPECT_NE(cuset::analysis_table(r).find("not computed"), std::string::npos);
    EXPECT_NE(cuset::analysis_svg(r).find("not computed"), std::string::npos);

    samples[1].confidence = {0.5f};  // no sensitivity flag for it
    EXPECT_THROW(cuset::analyze_confidences(samples, cuset::AnalysisOptions{}, "m", "d"), cuset::UsageError);
}
