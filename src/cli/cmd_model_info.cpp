// `cuset-train model-info PATH`: checks a Hugging Face model folder and prints a summary.
#include <iostream>
#include <memory>

#include "commands.h"
#include "cuset/model/model_config.h"

namespace cuset::cli {

Command add_model_info_command(CLI::App& root) {
    auto path = std::make_shared<std::string>();
    CLI::App* sub = root.add_subcommand(
        "model-info", "check a Hugging Face model folder (config.json, safetensors headers, tensor names and shapes) and print a summary");
    sub->add_option("path", *path, "model folder")->required();
    return {sub, [path] {
                std::cout << model_inspect(*path);
                return 0;
            }};
}

}  // namespace cuset::cli
