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

// The top-level sections `names` of config_to_yaml(cfg), as they are printed.
std::string yaml_sections(const Config& cfg, const std::vector<std::string>& names) {
    std::istringstream in(config_to_yaml(cfg));
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

std::string model_card(const Config& cfg, const TrainerState& st, int64_t world, const std::string& data_hash,
                       const std::vector<std::pair<std::string, std::string>>& file_hashes,
                       const std::string& command_line) {
    const std::string base = fs::path(cfg.model.path).filename().string().empty()
                                 ? fs::path(cfg.model.path).parent_path().filename().string()
                                 : fs::path(cfg.model.path).filename().string();
    std::string s = "---\n";
    s += "base_model: " + json(cfg.model.path).dump() + "\n";
    s += "library_name: cuset\npipeline_tag: text-generation\ntags:\n- cuset\n- code\n- cuda\n- fine-tuned\n";
    if (cfg.objective.method != "cuset") s += "- " + cfg.objective.method + "\n";
    s += "---\n\n";
    s += "# " + base + ", fine-tuned with cuset (" + cfg.objective.method + ")\n\n";
    s += strprintf("A checkpoint of a cuset run at step %lld of %lld: a Hugging Face model folder (config.json, "
                   "safetensors weights, the tokenizer) that `AutoModelForCausalLM.from_pretrained` loads; "
                   "`optimizer.safetensors` and `trainer_state.json` let `cuset-train --resume` continue it.\n\n",
                   (long long)st.step, (long long)st.total_steps);
    s += "## Training\n\n";
    s += "- base model: `" + cfg.model.path + "` (" + cfg.model.dtype + ")\n";
    s += "- objective: `" + cfg.objective.method + "` (settings below)\n";
    s += strprintf("- steps: %lld of %lld (epoch %lld), %lld target tokens trained, %lld steps skipped\n",
                   (long long)st.step, (long long)st.total_steps, (long long)st.epoch, (long long)st.tokens,
                   (long long)st.skipped_steps);
    s += strprintf("- global batch: %lld rows per step (micro-batch %lld x accumulation %lld x %lld rank(s))\n",
                   (long long)st.global_batch, (long long)cfg.train.micro_batch_size, (long long)cfg.train.grad_accum,
                   (long long)world);
    s += strprintf("- learning rate: peak %g, %s schedule\n", cfg.train.lr, cfg.train.schedule.c_str());
    for (const json& h : st.history)
        if (h.value("when", "") == "schedule extended")
            s += strprintf("- schedule extended at step %lld (from %lld to %lld steps)\n", (long long)h.value("step", 0LL),
                           (long long)h.value("total_steps_before", 0LL), (long long)h.value("total_steps", 0LL));
    s += "- cuset " CUSET_VERSION ", configuration hash `" + st.config_hash + "`\n\n";
    s += "## Data\n\n| split | file | file hash | tokenised data hash |\n|---|---|---|---|\n";
    for (const auto& [split, file] : std::vector<std::pair<std::string, std::string>>{{"train", cfg.data.train}, {"eval", cfg.data.eval}}) {
        if (file.empty()) continue;
        std::string fh;
        for (const auto& [f, h] : file_hashes)
            if (f == file) fh = h;
        s += "| " + split + " | `" + file + "` | `" + fh + "` | " + (split == "train" ? "`" + data_hash + "`" : std::string()) + " |\n";
    }
    s += strprintf("\nChat format `%s`, data.max_seq_len %lld, packing %s.\n\n", cfg.data.chat_format.c_str(),
                   (long long)cfg.data.max_seq_len, cfg.data.packing ? "on" : "off");
    s += "## Evaluation\n\n";
    std::string rows;
    for (const json& h : st.history)
        if (h.contains("eval_loss"))
            rows += strprintf("| %lld | %s | %s | %s |\n", (long long)h.value("step", 0LL), h.value("when", "").c_str(),
                              card_number(h["eval_loss"]).c_str(), card_number(h.value("eval_ce", json(nullptr))).c_str());
    if (rows.empty()) s += "No evaluation (no data.eval).\n\n";
    else s += "On `" + cfg.data.eval + "`:\n\n| step | when | loss (the objective's) | cross-entropy |\n|---|---|---|---|\n" + rows + "\n";
    s += "## Settings\n\n```yaml\n" + yaml_sections(cfg, {"objective", "tagger", "train"}) + "```\n\n";
    s += "## Command line\n\n";
    if (command_line.empty()) s += "Not recorded.\n";
    else s += "```\n" + command_line + "\n```\n\n(The run-folder options --run-name, --output-dir, --resume, --extend and --log-level are left out.)\n";
    return s;
}

}  // namespace cuset
