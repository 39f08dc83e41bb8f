// svg: analysis.svg, self-contained: histograms (log density axis), CDFs with the KS distance
// drawn, the published measurements next to ours, and the per-set and per-category summary.
#include "cuset/analysis/svg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "cuset/core/log.h"
#include "cuset/core/markup.h"
#include "report_rows.h"

namespace cuset {

// ---------------------------------------------------------------- analysis.svg

namespace {

using detail::percent;

constexpr double kInf = std::numeric_limits<double>::infinity();

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
    const std::vector<detail::MeasurementRow> rows = detail::measurement_rows(r);
    for (size_t i = 0; i < rows.size(); ++i) {
        const std::string attrs = i == 0 ? "font-weight=\"bold\"" : "";
        s += text(c0, y, rows[i].what, attrs);
        s += text(c1, y, rows[i].ours, attrs);
        s += text(c2, y, rows[i].published, attrs);
        if (i == 0) s += line(c0, y + 7, 970, y + 7, "stroke=\"#999999\"");
        y += i == 0 ? 26 : 22;
    }
    y -= 2;
    s += text(c0, y, "Published: a 7B model on its own data (docs/method.md sec. 7). KS p-value: scipy.stats.ks_2samp, "
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

}  // namespace cuset
