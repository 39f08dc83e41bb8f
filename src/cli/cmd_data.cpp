// `cuset-train data check FILE` and `data show`: validating a JSONL data file and showing one
// sample as the trainer sees it (the work is in data_check.cpp / data_show.cpp).
#include <iostream>
#include <memory>

#include "commands.h"
#include "cuset/app/options.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/data/data_check.h"
#include "cuset/data/data_show.h"

namespace cuset::cli {

Command add_data_command(CLI::App& root) {
    CLI::App* data = root.add_subcommand("data", "check a JSONL data file, or show a sample as the trainer sees it");
    data->require_subcommand(1);

    auto c = std::make_shared<DataCheckOptions>();
    auto check_level = std::make_shared<std::string>("info");
    CLI::App* check = data->add_subcommand(
        "check", "validate FILE sample by sample (schema, UTF-8, empty fields, duplicates, token lengths, "
                 "tagger coverage; --compile/--run the CUDA programs); exit 3 when a sample is rejected");
    check->add_option("FILE", c->input, "JSONL data file (never modified)")->required();
    check->add_flag("--compile", c->compile, "compile each sample's ```cuda program with nvcc");
    check->add_flag("--run", c->run, "build and run each program on the GPU (exit code 0 = pass); implies --compile");
    check->add_option("--jobs,-j", c->jobs, "parallel nvcc/program processes (default: number of cores)")
        ->check(non_negative_integer());
    check->add_option("--timeout", c->timeout_s, "seconds per compile and per run before the process group is killed")
        ->capture_default_str();
    check->add_option("--against", c->against,
                      "benchmark tasks (JSONL, e.g. CUDABench-Set.jsonl): reject samples that share a long n-gram with one");
    check->add_option("--ngram", c->ngram, "tokens per shared span for --against")->check(CLI::Range(8, 100000))
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

    auto s = std::make_shared<DataShowOptions>();
    auto show_config = std::make_shared<std::string>();
    auto sets = std::make_shared<std::vector<std::string>>();
    CLI::App* show = data->add_subcommand(
        "show", "print one sample as the trainer sees it: tokens by role, trainable and sensitive marks, counts");
    show->add_option("--config,-c", *show_config, "YAML configuration (data.train/eval, tokenizer, chat format)")->required();
    show->add_option("--set", *sets, "override one key: --set data.chat_format=chatml (repeatable)")
        ->type_name("KEY=VALUE");
    show->add_option("--index,-i", s->index, "sample index in the file (0-based)")->capture_default_str();
    show->add_option("--split", s->split, "train or eval")->check(CLI::IsMember({"train", "eval"}))
        ->capture_default_str();
    show->add_option("--color", s->color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
    show->add_flag("--tokens", s->tokens, "also list every token: index, id, role, trainable, sensitive, piece");

    return {data, [=] {
                if (check->parsed()) {
                    log_init(*check_level);
                    std::vector<Override> overrides;  // --tokenizer names model.tokenizer
                    if (!c->tokenizer.empty()) overrides.push_back({"model.tokenizer", c->tokenizer});
                    const Config cfg = config_load(c->config, overrides);
                    return data_check(*c, cfg, text_options_from(cfg)).rejected > 0 ? static_cast<int>(ExitCode::kBadInput)
                                                                                     : 0;
                }
                log_init("info");
                std::vector<Override> overrides;
                for (const std::string& a : *sets) overrides.push_back(override_parse(a));
                const Config cfg = config_load(*show_config, overrides);
                data_show(cfg, text_options_from(cfg), *s, std::cout);
                return 0;
            }};
}

}  // namespace cuset::cli
