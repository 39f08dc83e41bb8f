// Private to cuset-train: the subcommands, one file each (cmd_*.cpp). Each add_*_command()
// declares one subcommand's options on the root app and returns what runs when it was given.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cuset/app/config_schema.h"

namespace cuset::cli {

// A subcommand: its CLI11 app and what runs when it was given (options held by the closure).
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

// ---------------------------------------------------------------- shared options (options.cpp)

// The check of an integer flag that takes 0 and up ("--jobs: expects an integer >= 0, got '-1'";
// CLI11's NonNegativeNumber prints its upper bound, DBL_MAX, as a 309-digit number).
CLI::Validator non_negative_integer();

// Options shared by every command that runs from a configuration.
struct ConfigCli {
    std::string config;
    std::vector<std::string> sets;
    std::string run_name;
    std::string output_dir;
    std::string log_level;
};

// --config, --set, --run-name, --output-dir, --log-level.
void add_config_options(CLI::App* app, ConfigCli& o);

// The configuration with the overrides of `o` applied; initialises logging at its log.level.
Config load_config(const ConfigCli& o);

// ---------------------------------------------------------------- train (cmd_train.cpp)

struct TrainCli {
    ConfigCli cfg;
    std::string resume;
    bool extend = false;
    bool dry_run = false;
    bool print_config = false;
};

// The train options, on `train` and on the root app (`cuset-train --config X` trains).
void add_train_options(CLI::App* app, TrainCli& o);
int run_train(const TrainCli& o);

// ---------------------------------------------------------------- the subcommands

Command add_train_command(CLI::App& root);       // cmd_train.cpp
Command add_score_command(CLI::App& root);       // cmd_score.cpp
Command add_analyze_command(CLI::App& root);     // cmd_score.cpp
Command add_export_command(CLI::App& root);      // cmd_export.cpp
Command add_data_command(CLI::App& root);        // cmd_data.cpp
Command add_tokenize_command(CLI::App& root);    // cmd_tokenize.cpp
Command add_tag_command(CLI::App& root);         // cmd_tag.cpp
Command add_model_info_command(CLI::App& root);  // cmd_model_info.cpp
Command add_generate_command(CLI::App& root);    // cmd_generate.cpp
Command add_report_command(CLI::App& root);      // cmd_report.cpp
Command add_eval_command(CLI::App& root);        // cmd_eval.cpp

}  // namespace cuset::cli
