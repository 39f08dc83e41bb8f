// `cuset-train analyze`: docs/method.md sec. 7 over a score file (made first with `score` when none
// is given): analysis.json, analysis.svg and the console table.
#pragma once

#include <string>

#include "cuset/analysis/score.h"
#include "cuset/analysis/report.h"

namespace cuset {

struct AnalyzeRequest {
    std::string scores;  // an existing score file; "" = score first (with `score`)
    ScoreRequest score;
    std::string out;     // output folder; "" = the run folder (score.setup.run_dir)
    AnalysisOptions analysis;  // analysis.*
};

// docs/method.md sec. 7 over a score file: analysis.json, analysis.svg and the console table.
// Without req.scores it scores first (score_run with `text` on `*runtime`, which must then be
// given; it is not used otherwise).
int analyze_run(const AnalyzeRequest& req, const TextOptions& text, const Runtime* runtime);

}  // namespace cuset
