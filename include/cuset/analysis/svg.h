// svg: the analysis report drawn as analysis.svg (histograms, CDFs with the KS distance, the
// published measurements next to ours, the per-set and per-category summary).
#pragma once

#include <string>

#include "cuset/analysis/report.h"

namespace cuset {

std::string analysis_svg(const AnalysisReport& r);  // analysis.svg, self-contained

}  // namespace cuset
