// The options shared by the commands that run from a configuration (--config, --set, ...) and
// the configuration they load.
#include "commands.h"

#include "cuset/core/error.h"
#include "cuset/core/log.h"

namespace cuset::cli {

CLI::Validator non_negative_integer() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            size_t pos = 0;
            long long v = -1;
            try {
                v = std::stoll(s, &pos, 10);
            } catch (const std::exception&) {
                pos = 0;
            }
            if (!s.empty() && pos == s.size() && v >= 0) return "";
            return "expects an integer >= 0, got '" + quote_bounded(s) + "'";
        },
        "INT>=0");
}

void add_config_options(CLI::App* app, ConfigCli& o) {
    app->add_option("--config,-c", o.config, "YAML configuration file (configs/*.yaml)");
    app->add_option("--set", o.sets, "override one key: --set objective.region.alpha=0.5 (repeatable)")
        ->type_name("KEY=VALUE");
    app->add_option("--run-name", o.run_name, "run folder name (same as --set run.name=...)");
    app->add_option("--output-dir", o.output_dir, "folder of run folders (same as --set run.output_dir=...)");
    app->add_option("--log-level", o.log_level, "trace, debug, info, warn or error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
}

Config load_config(const ConfigCli& o) {
    std::vector<Override> overrides;
    for (const std::string& s : o.sets) overrides.push_back(override_parse(s));
    if (!o.run_name.empty()) overrides.push_back({"run.name", o.run_name});
    if (!o.output_dir.empty()) overrides.push_back({"run.output_dir", o.output_dir});
    if (!o.log_level.empty()) overrides.push_back({"log.level", o.log_level});
    Config cfg = config_load(o.config, overrides);
    log_init(cfg.log.level);
    return cfg;
}

}  // namespace cuset::cli
