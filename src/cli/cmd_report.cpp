// `cuset-train report RUN_DIR [RUN_DIR...] [--out FILE.html]`: the curves and summaries of one or
// more run folders as one self-contained HTML page (analysis/run_report.h).
#include <filesystem>
#include <memory>

#include "commands.h"
#include "cuset/analysis/run_report.h"
#include "cuset/core/log.h"

namespace cuset::cli {

Command add_report_command(CLI::App& root) {
    struct Opts {
        std::vector<std::string> runs;
        std::string out;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* sub = root.add_subcommand(
        "report", "training curves and summaries of run folders as one self-contained HTML page "
                  "(several runs overlay on the same axes)");
    sub->add_option("runs", o->runs, "run folders (each with metrics.jsonl)")->required()->check(CLI::ExistingDirectory);
    sub->add_option("--out", o->out, "HTML file (default: RUN_DIR/report.html for one run, report.html for several)");
    return {sub, [o] {
                std::string out = o->out;
                if (out.empty())
                    out = o->runs.size() == 1 ? (std::filesystem::path(o->runs[0]) / "report.html").string() : "report.html";
                run_report_write(o->runs, out);
                log_info("report of %zu run(s) written to %s", o->runs.size(), out.c_str());
                return 0;
            }};
}

}  // namespace cuset::cli
