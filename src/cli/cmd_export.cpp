// `cuset-train export`: a model or checkpoint written as a Hugging Face folder in another dtype.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "cuset/model/model_config.h"

#include <ATen/CPUGeneratorImpl.h>

namespace cuset::cli {

namespace {

// --out may be a new name, an empty folder, or a model folder (config.json and *.safetensors, as
// cuset writes them), which is replaced; it may not be, or hold, one of the inputs. Anything else
// (a file, a folder of other files) is a usage error: export never deletes what it did not write.
void check_export_out(const std::string& out, const std::vector<std::string>& inputs) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const std::string& in : inputs) {
        if (in.empty()) continue;
        refuse_output_equal_to_input(out, {in}, "export");
        for (fs::path p = fs::absolute(in, ec).lexically_normal(); !p.empty() && p != p.root_path(); p = p.parent_path())
            if (same_file_identity(out, p.string()))
                throw UsageError("export: --out '" + out + "' holds the input '" + in +
                                 "' and would be replaced; write to another folder");
    }
    if (!fs::exists(fs::symlink_status(out, ec))) return;
    if (!fs::is_directory(out, ec))
        throw UsageError("export: --out '" + out + "' is a file, not a folder; give a new or empty folder");
    bool any = false, config = false, weights = false;
    for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
        any = true;
        const std::string name = it->path().filename().string();
        config = config || name == "config.json";
        weights = weights || (name.size() > 12 && name.compare(name.size() - 12, 12, ".safetensors") == 0);
    }
    if (any && !(config && weights))
        throw UsageError("export: --out '" + out + "' exists and is not a model folder (config.json and "
                         "*.safetensors); export replaces only a model folder or an empty one: give a new name");
}

}  // namespace

Command add_export_command(CLI::App& root) {
    struct Opts {
        std::string model, out, dtype = "bfloat16";
        int64_t max_shard_mb = 4096;
        bool merge = false;
        std::string base;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* sub = root.add_subcommand(
        "export", "write a model or checkpoint as a Hugging Face folder in another dtype (weights and tokenizer only)");
    sub->add_option("--model", o->model, "model or checkpoint folder")->required();
    sub->add_option("--out", o->out, "output folder (replaced when it exists)")->required();
    sub->add_option("--dtype", o->dtype, "float32, bfloat16 or float16")
        ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
    sub->add_option("--max-shard-mb", o->max_shard_mb, "safetensors shard size limit in MiB");
    sub->add_flag("--merge", o->merge,
                  "--model is a LoRA adapter (a LoRA run's checkpoint or a PEFT folder): write its base with "
                  "W + scale * B @ A folded in (computed in fp32, rounded once)");
    sub->add_option("--base", o->base, "--merge: the base model folder (default: the adapter's base_model_name_or_path)");
    return {sub, [o] {
                log_init("info");
                check_export_out(o->out, {o->model, o->merge ? o->base : std::string()});
                c10::ScalarType dtype = dtype_from_name(o->dtype);
                if (o->merge) {
                    LoraOptions lo = lora_read_config(o->model);
                    std::string base = o->base.empty() ? lora_base_model(o->model) : o->base;
                    if (base.empty())
                        throw UsageError("--merge: " + o->model + "/adapter_config.json names no base model; pass --base DIR");
                    check_export_out(o->out, {base});
                    // fp32 when the base or the output is: the merged weight is rounded once.
                    const bool fp32 = dtype == at::kFloat || model_config_load(base).torch_dtype == "float32";
                    Decoder model = model_load(base, fp32 ? at::kFloat : dtype, c10::Device(c10::kCPU));
                    lora_attach(model, lo, at::detail::getDefaultCPUGenerator());  // values replaced next
                    lora_load_weights(model, o->model);
                    lora_merge(model);
                    log_info("merged LoRA adapter %s (r %lld, scale %g, %zu projection kinds) into %s", o->model.c_str(),
                             (long long)lo.r, lo.scale(), lo.target_modules.size(), base.c_str());
                    model_save(model, o->out, base, dtype, o->max_shard_mb << 20);
                    return 0;
                }
                if (!o->base.empty()) throw UsageError("--base needs --merge");
                Decoder model = model_load(o->model, dtype, c10::Device(c10::kCPU));
                model_save(model, o->out, o->model, dtype, o->max_shard_mb << 20);
                return 0;
            }};
}

}  // namespace cuset::cli
