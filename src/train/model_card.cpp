// The model card of a checkpoint (train/model_card.h).
#include "cuset/train/model_card.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cuset/core/log.h"
#include "cuset/core/version.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The top-level sections `names` of a configuration's YAML text, as they are printed.
std::string yaml_sections(const std::string& yaml, const std::vector<std::string>& names) {
    std::istringstream in(yaml);
    std::string out, line;
    bool on = false;
    while (std::getline(in, line)) {
        if (!line.empty() && line[0] != ' ') {
            std::string key = line.substr(0, line.find(':'));
            on = std::find(names.begin(), names.end(), key) != names.end();
        }
        if (on) out += line + "\n";
    }
    return out;
}

std::string card_number(const json& v) {
    return v.is_number() ? strprintf("%.4f", v.get<double>()) : std::string("n/a");
}

}  // namespace

std::string model_card(const TrainOptions& opts, const TrainerState& st, int64_t world, const std::string& data_hash,
                       const std::vector<std::pair<std::string, std::string>>& file_hashes,
                       const std::string& command_line) {
    const std::string base = fs::path(opts.model.path).filename().string().empty()
                                 ? fs::path(opts.model.path).parent_path().filename().string()
                                 : fs::path(opts.model.path).filename().string();
    std::string s = "---\n";
    s += "base_model: " + json(opts.model.path).dump() + "\n";
    s += "library_name: cuset\npipeline_tag: text-generation\ntags:\n- cuset\n- code\n- cuda\n- fine-tuned\n";
    if (opts.model.method != "cuset") s += "- " + opts.model.method + "\n";
    s += "---\n\n";
    s += "# " + base + ", fine-tuned with cuset (" + opts.model.method + ")\n\n";
    s += strprintf("A checkpoint of a cuset run at step %lld of %lld: a Hugging Face model folder (config.json, "
                   "safetensors weights, the tokenizer) that `AutoModelForCausalLM.from_pretrained` loads; "
                   "`optimizer.safetensors` and `trainer_state.json` let `cuset-train --resume` continue it.\n\n",
                   (long long)st.step, (long long)st.total_steps);
    s += "## Training\n\n";
    s += "- base model: `" + opts.model.path + "` (" + opts.model.dtype + ")\n";
    s += "- objective: `" + opts.model.method + "` (settings below)\n";
    s += strprintf("- steps: %lld of %lld (epoch %lld), %lld target tokens trained, %lld steps skipped\n",
                   (long long)st.step, (long long)st.total_steps, (long long)st.epoch, (long long)st.targets_trained,
                   (long long)st.skipped_steps);
    s += strprintf("- global batch: %lld rows per step (micro-batch %lld x accumulation %lld x %lld rank(s))\n",
                   (long long)st.global_batch, (long long)opts.train.micro_batch_size, (long long)opts.train.grad_accum,
                   (long long)world);
    s += strprintf("- learning rate: peak %g, %s schedule\n", opts.train.lr, opts.train.schedule.c_str());
    for (const json& h : st.history)
        if (h.value("when", "") == "schedule extended")
            s += strprintf("- schedule extended at step %lld (from %lld to %lld steps)\n", (long long)h.value("step", 0LL),
                           (long long)h.value("total_steps_before", 0LL), (long long)h.value("total_steps", 0LL));
    s += "- cuset " CUSET_VERSION ", configuration hash `" + st.config_hash + "`\n\n";
    s += "## Data\n\n| split | file | file hash | tokenised data hash |\n|---|---|---|---|\n";
    for (const auto& [split, file] : std::vector<std::pair<std::string, std::string>>{{"train", opts.data.train}, {"eval", opts.data.eval}}) {
        if (file.empty()) continue;
        std::string fh;
        for (const auto& [f, h] : file_hashes)
            if (f == file) fh = h;
        s += "| " + split + " | `" + file + "` | `" + fh + "` | " + (split == "train" ? "`" + data_hash + "`" : std::string()) + " |\n";
    }
    s += strprintf("\nChat format `%s`, data.max_seq_len %lld, packing %s.\n\n", opts.model.chat_format.c_str(),
                   (long long)opts.data.max_seq_len, opts.data.packing ? "on" : "off");
    s += "## Evaluation\n\n";
    std::string rows;
    for (const json& h : st.history)
        if (h.contains("eval_loss"))
            rows += strprintf("| %lld | %s | %s | %s |\n", (long long)h.value("step", 0LL), h.value("when", "").c_str(),
                              card_number(h["eval_loss"]).c_str(), card_number(h.value("eval_ce", json(nullptr))).c_str());
    if (rows.empty()) s += "No evaluation (no data.eval).\n\n";
    else s += "On `" + opts.data.eval + "`:\n\n| step | when | loss (the objective's) | cross-entropy |\n|---|---|---|---|\n" + rows + "\n";
    s += "## Settings\n\n```yaml\n" + yaml_sections(opts.run.config_yaml, {"objective", "tagger", "train"}) + "```\n\n";
    s += "## Command line\n\n";
    if (command_line.empty()) s += "Not recorded.\n";
    else s += "```\n" + command_line + "\n```\n\n(The run-folder options --run-name, --output-dir, --resume, --extend and --log-level are left out.)\n";
    return s;
}

}  // namespace cuset
