// Private to the report writers (report.cpp, svg.cpp): the three published measurements with
// ours next to them, shared by the console table and analysis.svg.
#pragma once

#include <string>
#include <vector>

#include "cuset/analysis/report.h"

namespace cuset::detail {

std::string percent(double share);  // "27.50%"

// One measurement the paper reports, ours next to theirs.
struct MeasurementRow {
    std::string what, ours, published;
};

// The header row, then KS test, samples with a low-confidence window, low windows on sensitive structure.
std::vector<MeasurementRow> measurement_rows(const AnalysisReport& r);

}  // namespace cuset::detail
