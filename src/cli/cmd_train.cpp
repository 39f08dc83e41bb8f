// `cuset-train train` (also the root command): fine-tuning, --dry-run and --print-config; joins
// the torchrun / Slurm process group first when there is one.
#include <iostream>
#include <memory>

#include "commands.h"
#include "cuset/core/log.h"
#include "cuset/model/device.h"
#include "cuset/train/distributed.h"
#include "cuset/train/trainer.h"

namespace cuset::cli {

void add_train_options(CLI::App* app, TrainCli& o) {
    add_config_options(app, o.cfg);
    app->add_option("--resume", o.resume, "auto (newest complete checkpoint of the run) or a checkpoint folder");
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
        train_dry_run(cfg);
        return 0;
    }
    TrainOptions to;
    to.resume = o.resume;
    // torchrun / Slurm: join the process group first; the trainer shards the data by rank.
    DistEnv env = dist_env_from_environment();
    if (env.world > 1) {
        if (env.rank != 0) log_init("warn");  // rank 0 reports; the others only warn
        c10::Device device = device_resolve(cfg.train.device);
        if (device.is_cuda()) device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
        auto dist = distributed_init(env, cfg, device);
        return train_run(cfg, to, dist->comm());
    }
    return train_run(cfg, to);
}

Command add_train_command(CLI::App& root) {
    auto o = std::make_shared<TrainCli>();
    CLI::App* sub = root.add_subcommand("train", "fine-tune a model (the default command)");
    add_train_options(sub, *o);
    return {sub, [o] { return run_train(*o); }};
}

}  // namespace cuset::cli
