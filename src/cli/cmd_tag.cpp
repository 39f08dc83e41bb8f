// `cuset-train tag INPUT`: the CUDA-sensitive regions the tagger finds in a Markdown response or
// a CUDA file, as plain text, ANSI colours, JSON or HTML (the work is in tagger_view.cpp).
#include <filesystem>
#include <memory>

#include "commands.h"
#include "cuset/app/options.h"
#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/tagger/tagger_view.h"

namespace cuset::cli {

namespace {

struct TagCli {
    std::string input;
    std::string format = "auto";
    std::string out;
    ConfigCli cfg;
};

}  // namespace

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
                Config cfg = load_config(o->cfg);
                TaggerOptions opts = tagger_options_from(cfg);
                if (o->input != "-") {
                    std::error_code ec;
                    if (std::filesystem::is_directory(o->input, ec))
                        throw InputError("tag: '" + o->input + "' is a folder, not a Markdown or CUDA file");
                    if (!o->out.empty()) refuse_output_equal_to_input(o->out, {o->input}, "tag");
                }
                tag_file(o->input, o->format, o->out, opts);
                return 0;
            }};
}

}  // namespace cuset::cli
