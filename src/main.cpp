// cuset-train: parses the command line and hands over to the modules. The only place that
// catches cuset::Error and turns it into one line on stderr and an exit code.
#include <cstdio>
#include <functional>
#include <memory>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cuset/config.h"
#include "cuset/device.h"
#include "cuset/error.h"
#include "cuset/log.h"

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
        cuset::log_info("configuration %s is valid (hash %s)",
                        cfg.source_file.empty() ? "<defaults>" : cfg.source_file.c_str(),
                        cuset::config_hash(cfg).c_str());
        cuset::log_info("model %s | data %s | method %s | device %s", cfg.model.path.c_str(),
                        cfg.data.train.c_str(), cfg.objective.method.c_str(), cfg.train.device.c_str());
        return 0;
    }
    throw cuset::UsageError("training is not in this build yet; run with --dry-run");
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
