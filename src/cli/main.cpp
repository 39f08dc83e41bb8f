// cuset-train: parses the command line and hands over to the subcommands (cmd_*.cpp). The only
// place that catches cuset::Error and turns it into one line on stderr and an exit code.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "cuset/core/error.h"
#include "cuset/model/device.h"

namespace {

using cuset::ExitCode;
using cuset::cli::Command;

int run(int argc, char** argv) {
    CLI::App app{"cuset-train: CUDA-Sensitive Instruction Tuning of code LLMs", "cuset-train"};
    app.footer(
        "Runs training when no subcommand is given. Exit codes: 0 done, 2 usage/config error, "
        "3 bad input, 4 runtime failure, 75 stopped by a signal after saving a checkpoint.");
    bool version = false;
    app.add_flag("--version", version, "print versions (cuset, LibTorch, CUDA) and exit");
    app.require_subcommand(0, 1);

    cuset::cli::TrainCli train_root;  // `cuset-train --config X` trains without naming the subcommand
    cuset::cli::add_train_options(&app, train_root);

    std::vector<Command> commands;
    commands.push_back(cuset::cli::add_train_command(app));
    commands.push_back(cuset::cli::add_score_command(app));
    commands.push_back(cuset::cli::add_export_command(app));
    commands.push_back(cuset::cli::add_analyze_command(app));
    commands.push_back(cuset::cli::add_data_command(app));
    commands.push_back(cuset::cli::add_tokenize_command(app));
    commands.push_back(cuset::cli::add_tag_command(app));
    commands.push_back(cuset::cli::add_model_info_command(app));
    commands.push_back(cuset::cli::add_generate_command(app));
    commands.push_back(cuset::cli::add_report_command(app));
    commands.push_back(cuset::cli::add_eval_command(app));

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
        throw cuset::UsageError(cuset::quote_bounded(e.what()) + " (see cuset-train --help)");
    }

    if (version) {
        std::cout << cuset::version_report();
        return 0;
    }
    for (const Command& c : commands)
        if (c.app->parsed()) return c.run();
    if (train_root.cfg.config.empty() && !train_root.print_config)
        throw cuset::UsageError("no configuration given: use --config FILE (see cuset-train --help)");
    return cuset::cli::run_train(train_root);
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
