// `cuset-train eval`: CUDABench. Generates K samples per task with a model and judges them, or
// judges a results file (--results) or the tasks' own solutions (--reference); writes
// results.jsonl (CUDABench's format), eval.json and eval.html, and prints the table
// (the work is in eval/eval_run.cpp).
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "cuset/app/options.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/databuild/candidates.h"
#include "cuset/eval/eval_run.h"

namespace cuset::cli {

Command add_eval_command(CLI::App& root) {
    struct Opts {
        ConfigCli cfg;
        eval::EvalRequest req;
        std::string gpu_name;
        bool gpu_name_given = false;
        std::string python;
        int64_t turns = 1;
        std::string candidates;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* sub = root.add_subcommand(
        "eval", "CUDABench: K samples per task from a model (or a results file, or the tasks' reference "
                "solutions), compiled with nvcc, run and compared on a GPU (or emulated), pass@k and the report");
    add_config_options(sub, o->cfg);
    sub->add_option("--tasks", o->req.tasks, "CUDABench tasks file (CUDABench-Set.jsonl)")->required();
    sub->add_option("--results", o->req.results, "judge this results file (CUDABench's format) instead of generating");
    sub->add_flag("--reference", o->req.reference, "judge each task's own solution (bench.cu) as its only sample");
    sub->add_option("--candidates", o->candidates,
                    "answers from a file instead of a model, as data build --candidates takes them ({\"id\", \"sample\", "
                    "\"round\", \"response\"}: round t answers turn t)");
    sub->add_option("--model", o->req.model, "model folder (default: model.path)");
    sub->add_option("--level", o->req.level, "CUDABench description level 1, 2 or 3 (default 3)")->check(CLI::Range(1, 3));
    sub->add_option("--samples", o->req.samples, "samples per task, K (default 3)")->check(CLI::Range(1, 65536));
    sub->add_option("--turns", o->turns,
                    "attempts per sample: a failed program's verdict goes back as the next user turn, up to T turns "
                    "(eval.turns; default 1)")
        ->check(CLI::Range(1, 64));
    sub->add_option("--out", o->req.out, "output folder (default: RESULTS.eval/ next to --results, else "
                                         "RUN_DIR/cudabench-level<L>/)");
    sub->add_option("--gpu-name", o->gpu_name, "GPU named in the prompts (eval.gpu_name; \"\" = each task's)");
    sub->add_option("--limit", o->req.limit, "the first N selected tasks only")->check(non_negative_integer());
    sub->add_option("--task-ids", o->req.task_ids, "only these task ids")->delimiter(',');
    sub->add_option("--judge", o->req.judge, "gpu | emulate | compile (default: gpu where one is present, else compile)")
        ->check(CLI::IsMember({"auto", "gpu", "emulate", "compile"}));
    sub->add_option("--python", o->python, "Python for gen.py and compare.py (eval.python)");
    sub->add_flag("--keep-work", o->req.keep_work, "keep every sample's work folder under OUT/work");
    return {sub, [o, sub] {
                if (static_cast<int>(!o->req.results.empty()) + static_cast<int>(o->req.reference) +
                        static_cast<int>(!o->candidates.empty()) > 1)
                    throw UsageError("eval: --results, --reference and --candidates exclude each other");
                if (!o->candidates.empty()) {  // sample k's answer at turn t: the file's (id, k, round t)
                    auto file = std::make_shared<databuild::FileCandidates>(o->candidates, eval::load_tasks(o->req.tasks));
                    o->req.answers = [file](const std::string& task, int64_t sample, int64_t turn) {
                        databuild::Request q;
                        q.key = {task, sample, turn};
                        return file->answer({q}).at(0).response;
                    };
                    o->req.answers_file = o->candidates;
                }
                bool generating = o->req.results.empty() && !o->req.reference && o->candidates.empty();
                if (generating && o->cfg.config.empty())
                    throw UsageError("eval: generating needs --config FILE (or judge a file with --results, or --reference)");
                ConfigCli c = o->cfg;
                if (sub->count("--gpu-name")) c.sets.push_back("eval.gpu_name=" + o->gpu_name);
                if (!o->python.empty()) c.sets.push_back("eval.python=" + o->python);
                if (sub->count("--turns")) {
                    std::string set = "eval.turns=";
                    set += std::to_string(o->turns);
                    c.sets.push_back(set);
                }
                Config cfg = load_config(c);
                // The runtime only when generating (judging a file needs no device).
                std::optional<Runtime> runtime;
                if (generating) runtime = runtime_from(cfg);
                eval::EvalOutcome res = eval::eval_run(eval_request_from(cfg, o->req), text_options_from(cfg, o->req.model),
                                                       runtime ? &*runtime : nullptr);
                std::fputs(eval::report_table(res.report).c_str(), stdout);
                std::fflush(stdout);
                log_info("eval: eval.json and eval.html written to %s", res.out_dir.c_str());
                return 0;
            }};
}

}  // namespace cuset::cli
