// report.html (analysis/run_report.h): the min/max downsampling keeps the first, last, lowest and
// highest points; the page is self-contained (no script, nothing fetched), draws a one-step run as
// dots and a 10,000-step run with a bounded number of points, overlays runs with a legend, shows
// pass@1 / compile rate only when a summary has them; a repeated step keeps its later line; and
// `cuset-train report` through the real binary.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "cuset/analysis/run_report.h"
#include "cuset/core/error.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::count_of;
using cuset::test::read_file;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

// A run folder with `n` step lines (a spike at n/3), evals at 0 and n, and optionally a summary.
std::string make_run(const std::string& name, int n, json summary = nullptr) {
    std::string dir = scratch_dir("run-report-" + name);
    std::string text = json{{"step", 0}, {"eval_loss", 2.5}, {"eval_ce", 2.6}}.dump() + "\n";
    for (int s = 1; s <= n; ++s) {
        double loss = 2.0 * std::exp(-3.0 * s / n) + 0.3 + (s == n / 3 ? 5.0 : 0.0);
        text += json{{"step", s}, {"loss", loss}, {"ce", loss + 0.1}, {"lr", 1e-5}, {"grad_norm", 1.0},
                     {"kept_fraction", 0.6}, {"sensitive_fraction", 0.2}, {"kept_only_sensitive_fraction", 0.05},
                     {"w_min", 0.5}, {"w_mean", 1.0}, {"w_max", 1.5}, {"tokens_per_s", 9000.0}, {"skipped", false}}
                    .dump() +
                "\n";
    }
    text += json{{"step", n}, {"eval_loss", 1.0}, {"eval_ce", 1.1}}.dump() + "\n";
    write_file(dir + "/metrics.jsonl", text);
    if (!summary.is_null()) write_file(dir + "/summary.json", summary.dump(2));
    return dir;
}

// Numbers of the path of one chart's curve: "M x y L x y ..." pairs.
size_t max_path_points(const std::string& html) {
    size_t best = 0;
    std::regex path("<path d=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), path); it != std::sregex_iterator(); ++it) {
        std::string d = (*it)[1];
        best = std::max<size_t>(best, count_of(d, "L") + count_of(d, "M"));
    }
    return best;
}

}  // namespace

TEST(RunReport, DownsampleKeepsExtremes) {
    std::vector<cuset::CurvePoint> pts;
    for (int i = 0; i < 10000; ++i) pts.push_back({double(i), std::sin(i * 0.01) + (i == 4321 ? 10.0 : 0.0)});
    pts[7000].y = -20.0;
    pts[100].y = std::nan("");
    auto out = cuset::downsample_minmax(pts, 500);
    EXPECT_LE(out.size(), 2u * 500 + 3);
    EXPECT_EQ(out.front().x, 0.0);
    EXPECT_EQ(out.back().x, 9999.0);
    bool spike = false, dip = false, gap = false;
    for (size_t i = 0; i < out.size(); ++i) {
        spike = spike || out[i].x == 4321.0;
        dip = dip || out[i].x == 7000.0;
        gap = gap || std::isnan(out[i].y);
        if (i) {
            EXPECT_LT(out[i - 1].x, out[i].x);
        }
    }
    EXPECT_TRUE(spike);
    EXPECT_TRUE(dip);
    EXPECT_TRUE(gap);
    // Short curves come back as they are.
    std::vector<cuset::CurvePoint> few(pts.begin(), pts.begin() + 900);
    EXPECT_EQ(cuset::downsample_minmax(few, 500).size(), 900u);
}

TEST(RunReport, OneStepAndLongRun) {
    auto one = cuset::run_data_load(make_run("one", 1));
    ASSERT_EQ(one.steps.size(), 1u);
    ASSERT_EQ(one.evals.size(), 2u);
    std::string html = cuset::run_report_html({one});
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("href="), std::string::npos);
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_NE(html.find("Learning rate"), std::string::npos);
    EXPECT_NE(html.find(">step</text>"), std::string::npos);
    EXPECT_NE(html.find("no values in this run"), std::string::npos);  // peak memory on a CPU run
    EXPECT_GE(count_of(html, "<circle"), 8);  // a dot per one-step series, and the eval points
    auto long_run = cuset::run_data_load(make_run("long", 10000));
    std::string big = cuset::run_report_html({long_run});
    EXPECT_LE(max_path_points(big), 2u * 600);  // downsampled to about two points per pixel column
    EXPECT_LT(big.size(), 600000u);
}

TEST(RunReport, OverlayLegendAndFinalFigures) {
    json with = {{"method", "cuset"}, {"steps", 20}, {"eval_after", {{"eval_loss", 1.0}, {"eval_ce", 1.1}}},
                 {"eval_pass_at_1", 0.375}, {"eval_compile_rate", 0.8125}};
    json without = {{"method", "sft"}, {"steps", 20}, {"eval_after", {{"eval_loss", 1.2}, {"eval_ce", 1.3}}}};
    auto a = cuset::run_data_load(make_run("sweep-a", 20, with));
    auto b = cuset::run_data_load(make_run("sweep-b", 20, without));
    std::string html = cuset::run_report_html({a, b});
    EXPECT_NE(html.find("run-report-sweep-a · train"), std::string::npos);
    EXPECT_NE(html.find("run-report-sweep-b · eval"), std::string::npos);
    EXPECT_NE(html.find("<th>pass@1</th>"), std::string::npos);
    EXPECT_NE(html.find("<td>0.375</td>"), std::string::npos);
    EXPECT_NE(html.find("<td>0.8125</td>"), std::string::npos);
    EXPECT_NE(html.find("eval_pass_at_1"), std::string::npos);  // in the summary table too
    std::string plain = cuset::run_report_html({b});
    EXPECT_EQ(plain.find("pass@1"), std::string::npos);
    EXPECT_EQ(plain.find("compile rate"), std::string::npos);
}

TEST(RunReport, RepeatedStepKeepsTheLaterLine) {
    std::string dir = scratch_dir("run-report-repeat");
    write_file(dir + "/metrics.jsonl", "{\"step\":1,\"loss\":5.0}\n{\"step\":2,\"loss\":4.0}\nnot json\n"
                                       "{\"step\":2,\"loss\":3.0}\n{\"step\":3,\"loss\":2.0}\n");
    auto r = cuset::run_data_load(dir);
    ASSERT_EQ(r.steps.size(), 3u);
    EXPECT_EQ(r.steps[1]["loss"].get<double>(), 3.0);
    EXPECT_TRUE(r.summary.is_null());
    EXPECT_THROW(cuset::run_data_load(scratch_dir("run-report-empty")), cuset::InputError);
}

TEST(RunReport, Command) {
    std::string a = make_run("cli-a", 5), b = make_run("cli-b", 7);
    auto r = run_cuset("report " + a);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(a + "/report.html"));
    std::string out = scratch_dir("run-report-cli-out") + "/cmp.html";
    r = run_cuset("report " + a + " " + b + " --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(read_file(out).find("run-report-cli-b"), std::string::npos);
    r = run_cuset("report " + scratch_dir("run-report-cli-empty"));
    EXPECT_EQ(r.exit_code, 3) << r.err;
}

// A GRPO run's metrics (objective.method grpo): its charts (reward, the judge's verdicts, clipping,
// length, the step's time) are drawn and the SFT objective's (kept tokens, sample weights) are
// left out; a status a step did not see counts 0 in the verdicts chart, so its curve is a line
// through every step.
TEST(RunReport, GrpoRunDrawsItsOwnCurves) {
    std::string dir = scratch_dir("run-report-grpo");
    std::string text;
    for (int s = 1; s <= 5; ++s) {
        json status = {{"compiled", s}, {"compile-error", 8 - s}};
        if (s == 3) status = {{"compiled", 3}, {"compile-error", 4}, {"no-code", 1}};
        text += json{{"step", s},           {"loss", 0.01},         {"lr", 1e-5},          {"grad_norm", 0.5},
                     {"reward", 0.1 + 0.025 * s}, {"reward_std", 0.1}, {"status", status},
                     {"completion_length", 14.0}, {"clip_ratio_low", 0.0}, {"clip_ratio_high", 0.0},
                     {"clip_ratio_region", 0.0}, {"generate_s", 0.3}, {"judge_s", 1.0}, {"update_s", 0.8},
                     {"tokens_per_s", 100.0}, {"skipped", false}}
                    .dump() +
                "\n";
    }
    write_file(dir + "/metrics.jsonl", text);
    const std::string html = cuset::run_report_html({cuset::run_data_load(dir)});
    for (const char* title : {"Reward (mean over the step", "Judge verdicts per step", "Clipped importance ratios",
                              "Completion length", "Step time"})
        EXPECT_NE(html.find(title), std::string::npos) << title;
    for (const char* title : {"Response tokens", "Sample weights", "Cross-entropy", "KL to the reference"})
        EXPECT_EQ(html.find(title), std::string::npos) << title << ": no values in a GRPO run without beta";
    // The verdicts chart: "no program" appears at step 3 only, and is drawn over all 5 steps.
    EXPECT_NE(html.find("no program"), std::string::npos);
    EXPECT_EQ(html.find("mismatch"), std::string::npos) << "a status no step saw has no curve";
}
