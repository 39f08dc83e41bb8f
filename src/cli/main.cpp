// cuset-train: parses the command line and hands over to the modules. The only place that
// catches cuset::Error and turns it into one line on stderr and an exit code.
#include <cstdio>
#include <functional>
#include <memory>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cuset/text/chat_format.h"
#include "cuset/core/config.h"
#include "cuset/data/data_check.h"
#include "cuset/data/data_show.h"
#include "cuset/model/device.h"
#include "cuset/train/distributed.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/model/model.h"
#include "cuset/tagger/tagger_view.h"
#include "cuset/analysis/analyze.h"
#include "cuset/train/trainer.h"
#include "cuset/model/model_config.h"

namespace {

using cuset::ExitCode;

// Options shared by every command that runs from a configuration.
struct ConfigCli {
    std::string config;
    std::vector<std::string> sets;
    std::string run_name;
    std::string output_dir;
    std::string log_level;
};

void add_config_options(CLI::App* app, ConfigCli& o) {
    app->add_option("--config,-c", o.config, "YAML configuration file (configs/*.yaml)");
    app->add_option("--set", o.sets, "override one key: --set objective.region.alpha=0.5 (repeatable)")
        ->type_name("KEY=VALUE");
    app->add_option("--run-name", o.run_name, "run folder name (same as --set run.name=...)");
    app->add_option("--output-dir", o.output_dir, "folder of run folders (same as --set run.output_dir=...)");
    app->add_option("--log-level", o.log_level, "trace, debug, info, warn or error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
}

cuset::Config load_config(const ConfigCli& o) {
    std::vector<cuset::Override> overrides;
    for (const std::string& s : o.sets) overrides.push_back(cuset::override_parse(s));
    if (!o.run_name.empty()) overrides.push_back({"run.name", o.run_name});
    if (!o.output_dir.empty()) overrides.push_back({"run.output_dir", o.output_dir});
    if (!o.log_level.empty()) overrides.push_back({"log.level", o.log_level});
    cuset::Config cfg = cuset::config_load(o.config, overrides);
    cuset::log_init(cfg.log.level);
    return cfg;
}

struct TrainCli {
    ConfigCli cfg;
    std::string resume;
    bool dry_run = false;
    bool print_config = false;
};

void add_train_options(CLI::App* app, TrainCli& o) {
    add_config_options(app, o.cfg);
    app->add_option("--resume", o.resume, "auto (newest complete checkpoint of the run) or a checkpoint folder");
    app->add_flag("--dry-run", o.dry_run, "validate the configuration and inputs, then stop");
    app->add_flag("--print-config", o.print_config, "print the resolved configuration and exit");
}

int run_train(const TrainCli& o) {
    cuset::Config cfg = load_config(o.cfg);
    if (o.print_config) {
        std::cout << cuset::config_to_yaml(cfg);
        return 0;
    }
    if (o.dry_run) {
        cuset::log_info("configuration %s is valid", cfg.source_file.empty() ? "<defaults>" : cfg.source_file.c_str());
        cuset::train_dry_run(cfg);
        return 0;
    }
    cuset::TrainOptions to;
    to.resume = o.resume;
    // torchrun / Slurm: join the process group first; the trainer shards the data by rank.
    cuset::DistEnv env = cuset::dist_env_from_environment();
    if (env.world > 1) {
        if (env.rank != 0) cuset::log_init("warn");  // rank 0 reports; the others only warn
        c10::Device device = cuset::device_resolve(cfg.train.device);
        if (device.is_cuda()) device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
        auto dist = cuset::distributed_init(env, cfg, device);
        return cuset::train_run(cfg, to, dist->comm());
    }
    return cuset::train_run(cfg, to);
}

// A subcommand: its CLI11 app and what runs when it was given. Each add_*_command() below
// declares one subcommand's options (held by the closure) and returns its handler.
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

Command add_train_command(CLI::App& root) {
    auto o = std::make_shared<TrainCli>();
    CLI::App* sub = root.add_subcommand("train", "fine-tune a model (the default command)");
    add_train_options(sub, *o);
    return {sub, [o] { return run_train(*o); }};
}

Command add_model_info_command(CLI::App& root) {
    auto path = std::make_shared<std::string>();
    CLI::App* sub = root.add_subcommand(
        "model-info", "check a Hugging Face model folder (config.json, safetensors headers, tensor names and shapes) and print a summary");
    sub->add_option("path", *path, "model folder")->required();
    return {sub, [path] {
                std::cout << cuset::model_inspect(*path);
                return 0;
            }};
}

struct TagCli {
    std::string input;
    std::string format = "auto";
    std::string out;
    ConfigCli cfg;
};

Command add_tag_command(CLI::App& root) {
    auto o = std::make_shared<TagCli>();
    CLI::App* sub = root.add_subcommand(
        "tag", "show the CUDA-sensitive regions the tagger finds in a Markdown response or a CUDA file");
    sub->add_option("input", o->input, "Markdown response or CUDA source file; - reads stdin")->required();
    sub->add_option("--format", o->format, "auto (ansi on a terminal, else plain [[brackets]]), plain, ansi, json or html")
        ->check(CLI::IsMember({"auto", "plain", "ansi", "json", "html"}));
    sub->add_option("--out,-o", o->out, "write to this file instead of stdout (e.g. tag.html)");
    sub->add_option("--config,-c", o->cfg.config, "configuration file (read for tagger.device_functions)");
    sub->add_option("--set", o->cfg.sets, "override one key: --set tagger.device_functions=false")
        ->type_name("KEY=VALUE");
    return {sub, [o] {
                cuset::Config cfg = load_config(o->cfg);
                cuset::TaggerOptions opts;
                opts.device_functions = cfg.tagger.device_functions;
                cuset::tag_file(o->input, o->format, o->out, opts);
                return 0;
            }};
}

// `tokenize --tokenizer PATH [--chat-format F] [--format json] FILE|-`: the work is in chat_format.cpp.
Command add_tokenize_command(CLI::App& root) {
    auto o = std::make_shared<cuset::TokenizeRequest>();
    CLI::App* sub = root.add_subcommand(
        "tokenize", "print the ids, pieces and byte offsets of a text (or, with --chat-format, of JSONL "
                    "conversations with roles and trainable flags) to check tokenization against other tools");
    sub->add_option("input", o->input, "text file, or JSONL with --chat-format; - reads stdin")->required();
    sub->add_option("--tokenizer", o->tokenizer, "tokenizer folder or file (tokenizer.json / tokenizer.model)")->required();
    sub->add_option("--chat-format", o->chat_format,
                    "format the input lines as conversations: auto, chatml, qwen3, deepseek-coder, seed-coder, plain");
    sub->add_option("--system-prompt", o->system_prompt, "system prompt for conversations without one");
    sub->add_option("--format", o->output, "text or json")->check(CLI::IsMember({"text", "json"}));
    sub->add_flag("--add-special-tokens", o->add_special_tokens, "apply the post-processor (e.g. BOS) to raw text");
    return {sub, [o] {
                cuset::log_init("warn");
                return cuset::tokenize_command(*o, std::cout);
            }};
}

// `data check FILE ...` and `data show ...`: the work is in data_check.cpp / data_show.cpp.
Command add_data_command(CLI::App& root) {
    CLI::App* data = root.add_subcommand("data", "check a JSONL data file, or show a sample as the trainer sees it");
    data->require_subcommand(1);

    auto c = std::make_shared<cuset::DataCheckOptions>();
    auto check_level = std::make_shared<std::string>("info");
    CLI::App* check = data->add_subcommand(
        "check", "validate FILE sample by sample (schema, UTF-8, empty fields, duplicates, token lengths, "
                 "tagger coverage; --compile/--run the CUDA programs); exit 3 when a sample is rejected");
    check->add_option("FILE", c->input, "JSONL data file (never modified)")->required();
    check->add_flag("--compile", c->compile, "compile each sample's ```cuda program with nvcc");
    check->add_flag("--run", c->run, "build and run each program on the GPU (exit code 0 = pass); implies --compile");
    check->add_option("--jobs,-j", c->jobs, "parallel nvcc/program processes (default: number of cores)")
        ->check(CLI::NonNegativeNumber);
    check->add_option("--timeout", c->timeout_s, "seconds per compile and per run before the process group is killed")
        ->capture_default_str();
    check->add_option("--out", c->out, "write the kept samples (byte for byte) to this JSONL file");
    check->add_option("--report", c->report, "write the per-sample JSON report to this file");
    check->add_option("--config,-c", c->config, "configuration for the tokenizer, chat format and data.* keys");
    check->add_option("--tokenizer", c->tokenizer, "tokenizer folder or file (overrides the configuration's)");
    check->add_option("--nvcc", c->nvcc, "nvcc to use (default: PATH, then /usr/local/cuda/bin/nvcc)");
    check->add_option("--nvcc-flags", c->nvcc_flags, "flags for nvcc")->capture_default_str();
    check->add_option("--progress", c->progress, "progress bar: auto, always or never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    check->add_option("--log-level", *check_level, "trace, debug, info, warn or error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

    auto s = std::make_shared<cuset::DataShowOptions>();
    auto sets = std::make_shared<std::vector<std::string>>();
    CLI::App* show = data->add_subcommand(
        "show", "print one sample as the trainer sees it: tokens by role, trainable and sensitive marks, counts");
    show->add_option("--config,-c", s->config, "YAML configuration (data.train/eval, tokenizer, chat format)")->required();
    show->add_option("--set", *sets, "override one key: --set data.chat_format=chatml (repeatable)")
        ->type_name("KEY=VALUE");
    show->add_option("--index,-i", s->index, "sample index in the file (0-based)")->capture_default_str();
    show->add_option("--split", s->split, "train or eval")->check(CLI::IsMember({"train", "eval"}))
        ->capture_default_str();
    show->add_option("--color", s->color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
    show->add_flag("--tokens", s->tokens, "also list every token: index, id, role, trainable, sensitive, piece");

    return {data, [=] {
                if (check->parsed()) {
                    cuset::log_init(*check_level);
                    return cuset::data_check(*c).rejected > 0 ? static_cast<int>(ExitCode::kBadInput) : 0;
                }
                cuset::log_init("info");
                for (const std::string& a : *sets) s->overrides.push_back(cuset::override_parse(a));
                cuset::data_show(*s, std::cout);
                return 0;
            }};
}

Command add_export_command(CLI::App& root) {
    struct Opts {
        std::string model, out, dtype = "bfloat16";
        int64_t max_shard_mb = 4096;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* sub = root.add_subcommand(
        "export", "write a model or checkpoint as a Hugging Face folder in another dtype (weights and tokenizer only)");
    sub->add_option("--model", o->model, "model or checkpoint folder")->required();
    sub->add_option("--out", o->out, "output folder (replaced when it exists)")->required();
    sub->add_option("--dtype", o->dtype, "float32, bfloat16 or float16")
        ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
    sub->add_option("--max-shard-mb", o->max_shard_mb, "safetensors shard size limit in MiB");
    return {sub, [o] {
                cuset::log_init("info");
                c10::ScalarType dtype = cuset::dtype_from_name(o->dtype);
                cuset::Decoder model = cuset::model_load(o->model, dtype, c10::Device(c10::kCPU));
                cuset::model_save(model, o->out, o->model, dtype, o->max_shard_mb << 20);
                return 0;
            }};
}

// --model / --data / --split: what `score` (and `analyze`, which scores first) runs over.
void add_score_source_options(CLI::App* sub, cuset::ScoreRequest& req) {
    sub->add_option("--model", req.model, "model folder (default: model.path)");
    sub->add_option("--data", req.data, "JSONL file (default: data.train, or data.eval with --split eval)");
    sub->add_option("--split", req.split, "train or eval")->check(CLI::IsMember({"train", "eval"}));
}

Command add_score_command(CLI::App& root) {
    struct Opts {
        ConfigCli cfg;
        cuset::ScoreRequest req;
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
                cuset::Config cfg = load_config(o->cfg);
                cuset::score_run(cfg, o->req);
                return 0;
            }};
}

Command add_analyze_command(CLI::App& root) {
    struct Opts {
        ConfigCli cfg;
        cuset::AnalyzeRequest req;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* sub = root.add_subcommand(
        "analyze", "sensitivity analysis (METHOD.md sec. 7): confidence of sensitive vs other tokens, "
                   "KS test, low-confidence windows; analysis.json, analysis.svg and a table");
    add_config_options(sub, o->cfg);
    sub->add_option("--scores", o->req.scores, "an existing score file (default: score the data first)");
    add_score_source_options(sub, o->req.score);
    sub->add_option("--out", o->req.out, "output folder (default: the run folder)");
    return {sub, [o] {
                cuset::Config cfg = load_config(o->cfg);
                return cuset::analyze_run(cfg, o->req);
            }};
}

int run(int argc, char** argv) {
    CLI::App app{"cuset-train: CUDA-Sensitive Instruction Tuning of code LLMs", "cuset-train"};
    app.footer(
        "Runs training when no subcommand is given. Exit codes: 0 done, 2 usage/config error, "
        "3 bad input, 4 runtime failure, 75 stopped by a signal after saving a checkpoint.");
    bool version = false;
    app.add_flag("--version", version, "print versions (cuset, LibTorch, CUDA) and exit");
    app.require_subcommand(0, 1);

    TrainCli train_root;  // `cuset-train --config X` trains without naming the subcommand
    add_train_options(&app, train_root);

    std::vector<Command> commands;
    commands.push_back(add_train_command(app));
    commands.push_back(add_score_command(app));
    commands.push_back(add_export_command(app));
    commands.push_back(add_analyze_command(app));
    commands.push_back(add_data_command(app));
    commands.push_back(add_tokenize_command(app));
    commands.push_back(add_tag_command(app));
    commands.push_back(add_model_info_command(app));

    // An unknown word in the subcommand position gets its own message.
    if (argc > 1 && argv[1][0] != '-') {
        std::string first = argv[1];
        std::string list;
        bool known = false;
        for (const Command& c : commands) {
            known = known || c.app->get_name() == first;
            list += (list.empty() ? "" : ", ") + c.app->get_name();
        }
        if (!known)
            throw cuset::UsageError("unknown subcommand '" + first + "' (expected one of: " + list +
                                    "; see cuset-train --help)");
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        throw cuset::UsageError(std::string(e.what()) + " (see cuset-train --help)");
    }

    if (version) {
        std::cout << cuset::version_report();
        return 0;
    }
    for (const Command& c : commands)
        if (c.app->parsed()) return c.run();
    if (train_root.cfg.config.empty() && !train_root.print_config)
        throw cuset::UsageError("no configuration given: use --config FILE (see cuset-train --help)");
    return run_train(train_root);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const cuset::Error& e) {
        std::fflush(stdout);
        std::cerr << "cuset-train: " << e.what() << "\n";
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::fflush(stdout);
        std::cerr << "cuset-train: internal error: " << e.what() << "\n";
        return static_cast<int>(ExitCode::kRuntime);
    }
}
