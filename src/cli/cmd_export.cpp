// `cuset-train export`: a model or checkpoint written as a Hugging Face folder in another dtype.
#include <cstdint>
#include <memory>

#include "commands.h"
#include "cuset/core/log.h"
#include "cuset/model/model.h"

namespace cuset::cli {

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
                log_init("info");
                c10::ScalarType dtype = dtype_from_name(o->dtype);
                Decoder model = model_load(o->model, dtype, c10::Device(c10::kCPU));
                model_save(model, o->out, o->model, dtype, o->max_shard_mb << 20);
                return 0;
            }};
}

}  // namespace cuset::cli
