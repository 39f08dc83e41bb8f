// `cuset-train score` (per-token probabilities of a data set under a model) and `analyze` (the
// docs/method.md sec. 7 sensitivity analysis over them), which share --model/--data/--split.
#include <memory>
#include <optional>

#include "commands.h"
#include "cuset/app/options.h"
#include "cuset/analysis/analyze.h"
#include "cuset/analysis/score.h"

namespace cuset::cli {

namespace {

// --model / --data / --split: what `score` (and `analyze`, which scores first) runs over.
void add_score_source_options(CLI::App* sub, ScoreRequest& req) {
    sub->add_option("--model", req.model, "model folder (default: model.path)");
    sub->add_option("--data", req.data, "JSONL file (default: data.train, or data.eval with --split eval)");
    sub->add_option("--split", req.split, "train or eval")->check(CLI::IsMember({"train", "eval"}));
}

}  // namespace

Command add_score_command(CLI::App& root) {
    struct Opts {
        ConfigCli cfg;
        ScoreRequest req;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* sub = root.add_subcommand(
        "score", "per-token probabilities of a data set under a model (no training): the input of "
                 "`analyze` and the cache for objective.confidence.source: cached");
    add_config_options(sub, o->cfg);
    add_score_source_options(sub, o->req);
    sub->add_option("--out", o->req.out, "score file (default: <run folder>/scores.bin or .jsonl)");
    sub->add_option("--format", o->req.format, "bin (binary + index) or jsonl (small sets)")
        ->check(CLI::IsMember({"bin", "jsonl"}));
    return {sub, [o] {
                Config cfg = load_config(o->cfg);
                ScoreRequest req = o->req;
                req.setup = score_setup_from(cfg);
                score_run(req, text_options_from(cfg, req.model), runtime_from(cfg));
                return 0;
            }};
}

Command add_analyze_command(CLI::App& root) {
    struct Opts {
        ConfigCli cfg;
        AnalyzeRequest req;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* sub = root.add_subcommand(
        "analyze", "sensitivity analysis (docs/method.md sec. 7): confidence of sensitive vs other tokens, "
                   "KS test, low-confidence windows; analysis.json, analysis.svg and a table");
    add_config_options(sub, o->cfg);
    sub->add_option("--scores", o->req.scores, "an existing score file (default: score the data first)");
    add_score_source_options(sub, o->req.score);
    sub->add_option("--out", o->req.out, "output folder (default: the run folder)");
    return {sub, [o] {
                Config cfg = load_config(o->cfg);
                // The runtime only when analyze scores first (a score file needs no device).
                std::optional<Runtime> runtime;
                if (o->req.scores.empty()) runtime = runtime_from(cfg);
                AnalyzeRequest req = o->req;
                req.score.setup = score_setup_from(cfg);
                req.analysis = analysis_options_from(cfg);
                return analyze_run(req, text_options_from(cfg, req.score.model), runtime ? &*runtime : nullptr);
            }};
}

}  // namespace cuset::cli
