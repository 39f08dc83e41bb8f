// `cuset-train generate --config FILE [--model DIR] --prompts FILE.jsonl --out FILE.jsonl [--n N]
// [--temperature T] [--top-p P] [--max-new-tokens N] [--seed S]`: samples from a model for every
// prompt of a JSONL file (the work is in generate/generate_run.cpp). The sampling flags are
// generate.* overrides, checked by the configuration schema like --set.
#include <memory>

#include "commands.h"
#include "cuset/app/options.h"
#include "cuset/core/error.h"
#include "cuset/generate/generate_run.h"

namespace cuset::cli {

Command add_generate_command(CLI::App& root) {
    struct Opts {
        ConfigCli cfg;
        GenerateRequest req;
        std::string n, temperature, top_p, max_new_tokens, seed;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* sub = root.add_subcommand(
        "generate", "sample responses for the prompts of a JSONL file with the KV cache (greedy or "
                    "temperature / top-k / top-p / min-p, transformers' semantics): one JSON line per sample");
    add_config_options(sub, o->cfg);
    sub->add_option("--model", o->req.model, "model folder (default: model.path)");
    sub->add_option("--prompts", o->req.prompts, "JSONL prompts: prompt[/system][/response] or messages ending "
                                                 "with a user turn (a final assistant turn is the reference)")
        ->required();
    sub->add_option("--out", o->req.out, "output JSONL, one line per sample (written atomically)")->required();
    sub->add_option("--n", o->n, "samples per prompt (generate.n)");
    sub->add_option("--temperature", o->temperature, "0 = greedy (generate.temperature)");
    sub->add_option("--top-p", o->top_p, "nucleus sampling mass (generate.top_p)");
    sub->add_option("--max-new-tokens", o->max_new_tokens, "tokens per sample at most (generate.max_new_tokens)");
    sub->add_option("--seed", o->seed, "sampling seed (generate.seed)");
    return {sub, [o] {
                if (o->cfg.config.empty()) throw UsageError("generate: no configuration given: use --config FILE");
                ConfigCli c = o->cfg;
                for (auto [key, value] : {std::pair<const char*, const std::string*>{"generate.n", &o->n},
                                          {"generate.temperature", &o->temperature},
                                          {"generate.top_p", &o->top_p},
                                          {"generate.max_new_tokens", &o->max_new_tokens},
                                          {"generate.seed", &o->seed}})
                    if (!value->empty()) c.sets.push_back(std::string(key) + "=" + *value);
                const Config cfg = load_config(c);
                generate_run(generate_request_from(cfg, o->req), text_options_from(cfg, o->req.model), runtime_from(cfg));
                return 0;
            }};
}

}  // namespace cuset::cli
