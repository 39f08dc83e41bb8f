// run_report: one self-contained HTML page (inline SVG, inline CSS, no script, nothing fetched)
// showing one or more run folders: the curves of metrics.jsonl (loss and plain cross-entropy,
// train and eval; learning rate; gradient norm; kept / sensitive / kept-only-because-sensitive
// fractions; sample-weight min / mean / max; tokens/s; peak memory) with several runs overlaid
// on the same axes, a table of their final figures and their summary.json side by side.
// `cuset-train report` writes it; the trainer's command writes report.html into every run folder.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuset {

// What a report shows of one run folder.
struct RunData {
    std::string dir;                    // the run folder as given
    std::string name;                   // its last path component (the legend label)
    std::vector<nlohmann::json> steps;  // metrics lines with a "loss", by step (a repeated step: the later line)
    std::vector<nlohmann::json> evals;  // metrics lines with "eval_loss" / "eval_ce", by step
    nlohmann::json summary;             // summary.json, or null when the run has none (yet)
};

// Reads RUN_DIR/metrics.jsonl (required: InputError when missing; malformed lines are skipped
// with a warning) and RUN_DIR/summary.json (optional).
RunData run_data_load(const std::string& run_dir);

// A point of a curve (NaN y = a gap).
struct CurvePoint {
    double x, y;
};

// At most about 2 * buckets points drawing the same picture at `buckets` horizontal pixels: the
// first and the last point, and per bucket of x its lowest and highest point in x order, so
// spikes survive. Curves of no more than 2 * buckets points come back unchanged. NaN points are
// kept as gaps (one per bucket at most).
std::vector<CurvePoint> downsample_minmax(const std::vector<CurvePoint>& pts, size_t buckets);

// The page.
std::string run_report_html(const std::vector<RunData>& runs);

// Loads `run_dirs` and writes the page to `out_file` atomically.
void run_report_write(const std::vector<std::string>& run_dirs, const std::string& out_file);

}  // namespace cuset
