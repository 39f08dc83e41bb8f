// `cuset-train train` (also the root command): fine-tuning, --dry-run and --print-config; joins
// the torchrun / Slurm process group first when there is one.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "cuset/app/options.h"
#include "cuset/analysis/run_report.h"
#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/eval_run.h"
#include "cuset/model/device.h"
#include "cuset/train/distributed.h"
#include "cuset/train/trainer.h"

namespace cuset::cli {

namespace {

// report.html in the run folder once the job is over (rank 0): a failure to write it is a warning.
void write_run_report(const Config& cfg) {
    const std::string dir = run_dir_of(cfg);
    const std::string out = (std::filesystem::path(dir) / "report.html").string();
    try {
        run_report_write({dir}, out);
        log_info("report written to %s", out.c_str());
    } catch (const std::exception& e) {
        log_warn("could not write %s: %s", out.c_str(), e.what());
    }
}

// This process's command line for the model cards, shell-quoted, without the run-folder options
// (--run-name, --output-dir, --resume, --extend, --log-level): what made the weights, not where
// they were put, so that runs reaching the same state write the same card.
std::string command_line_for_card() {
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> args;
    for (std::string a; std::getline(f, a, '\0');) args.push_back(a);
    if (args.empty()) return "";
    args[0] = "cuset-train";
    std::string out;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        bool skip = false;
        for (const char* opt : {"--run-name", "--output-dir", "--resume", "--log-level"}) {
            const std::string o = opt;
            if (a == o) {
                skip = true;
                ++i;  // and its value
            } else if (a.rfind(o + "=", 0) == 0) {
                skip = true;
            }
        }
        if (skip || a == "--extend") continue;
        bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos;
        std::string q = a;
        if (!plain) {
            q = "'";
            for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
            q += "'";
        }
        out += (out.empty() ? "" : " ") + q;
    }
    return out;
}

// eval.after_training: the request for the final checkpoint `model`, into RUN_DIR/cudabench-level<L>/.
eval::EvalRequest after_training_request(const Config& cfg, const std::string& model) {
    eval::EvalRequest req;
    req.tasks = cfg.eval.tasks;
    req.model = model;
    req.level = static_cast<int>(cfg.eval.level);
    req.samples = cfg.eval.samples;
    req.limit = cfg.eval.limit;
    req.judge = cfg.eval.judge;
    req.out = (std::filesystem::path(run_dir_of(cfg)) / ("cudabench-level" + std::to_string(req.level))).string();
    return req;
}

// Before training: the tasks file and the judge are usable, so a long run does not end in a
// usage error.
void check_after_training(const Config& cfg) {
    if (!cfg.eval.after_training) return;
    eval::load_tasks(cfg.eval.tasks);
    std::string how;
    eval::resolve_judge(cfg.eval.judge, &how);
}

// After training (rank 0): CUDABench on the final checkpoint, generated with the training's
// runtime, and its overall figures in summary.json under "cudabench", so that the runs of a sweep
// compare on the benchmark.
void eval_after_training(const Config& cfg, const Runtime& runtime) {
    const std::string summary_file = (std::filesystem::path(run_dir_of(cfg)) / "summary.json").string();
    nlohmann::json summary = json_read_file(summary_file, "run summary");
    if (!summary.is_object()) throw InputError(summary_file + ": expected a JSON object");
    const std::string ckpt = summary.value("checkpoint", "");
    if (ckpt.empty()) throw RuntimeFailure("eval.after_training: " + summary_file + " names no final checkpoint");
    log_info("eval.after_training: CUDABench level %lld, %lld sample(s) per task, on %s", (long long)cfg.eval.level,
             (long long)cfg.eval.samples, ckpt.c_str());
    eval::EvalOutcome res = eval::eval_run(eval_request_from(cfg, after_training_request(cfg, ckpt)), text_options_from(cfg, ckpt),
                                             &runtime);
    std::fputs(eval::report_table(res.report).c_str(), stdout);
    std::fflush(stdout);
    const nlohmann::json report = json_parse(json_text(eval::report_json(res.report)), "the evaluation report", ExitCode::kRuntime);
    const nlohmann::json& overall = report["overall"];
    nlohmann::json c = {{"tasks_file", cfg.eval.tasks}, {"level", cfg.eval.level}, {"samples", cfg.eval.samples},
                        {"out_dir", res.out_dir}, {"judge", report.value("judge", "")}};
    for (const char* key : {"tasks", "compile_rate", "run_rate", "pass@1", "pass@K", "unjudged", "pass@1_judged", "pass@K_judged",
                            "mean_generated_tokens"})
        if (overall.contains(key)) c[key] = overall[key];
    summary["cudabench"] = c;
    atomic_write(summary_file, summary.dump(2) + "\n", "run summary");
    log_info("eval.after_training: figures added to %s (eval.json and eval.html in %s)", summary_file.c_str(),
             res.out_dir.c_str());
}

// Runs the job, then writes the report (also when a signal stopped it after saving), then the
// benchmark of eval.after_training.
int train_and_report(const Config& cfg, const TrainOptions& to, bool main_rank, const Comm& comm) {
    int rc = 0;
    try {
        rc = train_run(to, comm);
    } catch (const StoppedBySignal&) {
        if (main_rank) write_run_report(cfg);
        throw;
    }
    if (main_rank) write_run_report(cfg);
    if (rc == 0 && main_rank && cfg.eval.after_training) eval_after_training(cfg, to.runtime);
    return rc;
}

}  // namespace

void add_train_options(CLI::App* app, TrainCli& o) {
    add_config_options(app, o.cfg);
    app->add_option("--resume", o.resume, "auto (newest complete checkpoint of the run) or a checkpoint folder");
    app->add_flag("--extend", o.extend,
                  "with --resume: continue the checkpoint under a changed schedule length (train.max_steps / "
                  "train.epochs); every other configuration change is still refused");
    app->add_flag("--dry-run", o.dry_run, "validate the configuration and inputs, then stop");
    app->add_flag("--print-config", o.print_config, "print the resolved configuration and exit");
}

int run_train(const TrainCli& o) {
    Config cfg = load_config(o.cfg);
    if (o.print_config) {
        std::cout << config_to_yaml(cfg);
        return 0;
    }
    if (o.dry_run) {
        log_info("configuration %s is valid", cfg.source_file.empty() ? "<defaults>" : cfg.source_file.c_str());
        train_dry_run(train_options_from(cfg, runtime_planned_from(cfg)));
        return 0;
    }
    if (o.extend && o.resume.empty())
        throw UsageError("--extend continues a checkpoint: use it with --resume auto or --resume PATH");
    check_after_training(cfg);
    // torchrun / Slurm: join the process group first; the trainer shards the data by rank.
    DistEnv env = dist_env_from_environment();
    TrainOptions to = train_options_from(cfg, runtime_from(cfg, env.world, env.local_rank));
    to.resume = o.resume;
    to.extend = o.extend;
    to.command_line = command_line_for_card();
    distributed_check(env, cfg.distributed.backend, to.runtime.device);  // also for one process
    if (env.world > 1) {
        if (env.rank != 0) log_init("warn");  // rank 0 reports; the others only warn
        auto dist = distributed_init(env, process_group_options_from(cfg), to.runtime.device);
        return train_and_report(cfg, to, env.rank == 0, dist->comm());
    }
    return train_and_report(cfg, to, true, Comm());
}

Command add_train_command(CLI::App& root) {
    auto o = std::make_shared<TrainCli>();
    CLI::App* sub = root.add_subcommand("train", "fine-tune a model (the default command)");
    add_train_options(sub, *o);
    return {sub, [o] { return run_train(*o); }};
}

}  // namespace cuset::cli
