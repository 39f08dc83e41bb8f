// `cuset-train analyze`: the score file's valid tokens into the report of docs/method.md sec. 7.
#include "cuset/analysis/analyze.h"

#include <cmath>
#include <filesystem>
#include <iostream>

#include "cuset/analysis/report.h"
#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/data/score_file.h"

namespace cuset {

namespace fs = std::filesystem;

int analyze_run(const AnalyzeRequest& req, const TextOptions& text, const Runtime* runtime) {
    {  // analysis.json / analysis.svg never over an input (the score file, its index, the data)
        const fs::path out_dir = req.out.empty() ? fs::path(req.score.setup.run_dir) : fs::path(req.out);
        std::vector<std::string> inputs = {req.scores, req.scores.empty() ? "" : req.scores + ".idx", req.score.data};
        for (const char* f : {"analysis.json", "analysis.svg"})
            refuse_output_equal_to_input((out_dir / f).string(), inputs, "analyze");
    }
    ScoreRequest sr = req.score;
    if (sr.out.empty() && !req.out.empty()) {
        fs::create_directories(req.out);
        sr.out = (fs::path(req.out) / "scores.bin").string();
    }
    if (req.scores.empty() && !runtime) throw RuntimeFailure("analyze: scoring first needs the runtime to score on");
    std::string scores = req.scores.empty() ? score_run(sr, text, *runtime) : req.scores;
    ScoreHeader header;
    std::vector<ScoreRecord> records = score_load_all(scores, &header);
    std::vector<ScoredSample> samples;
    samples.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
        const ScoreRecord& r = records[i];
        ScoredSample s;
        s.id = static_cast<int64_t>(i);
        // docs/method.md (Terms): valid tokens are the training targets; token 0 has no prediction.
        for (size_t t = 1; t < r.ids.size(); ++t) {
            if (!r.trainable[t] || !std::isfinite(r.prob[t])) continue;
            s.confidence.push_back(r.prob[t]);
            s.sensitive.push_back(r.tag_bits[t] != 0);
            s.categories.push_back(r.tag_bits[t]);
        }
        samples.push_back(std::move(s));
    }
    AnalysisReport report = analyze_confidences(samples, req.analysis, header.model, header.data);
    std::string dir = req.out.empty() ? req.score.setup.run_dir : req.out;
    fs::create_directories(dir);
    analysis_write(report, dir);
    std::cout << analysis_table(report) << std::flush;
    log_info("wrote %s and %s", (fs::path(dir) / "analysis.json").c_str(), (fs::path(dir) / "analysis.svg").c_str());
    return 0;
}

}  // namespace cuset
