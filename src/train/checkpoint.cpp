// Trainer-state JSON, checkpoint folders (written through core/atomic_file), pruning, and the
// trainer's stop signals (core/signals with its messages).
#include "cuset/train/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <ATen/ATen.h>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/model/safetensors.h"
#include "cuset/model/safetensors_torch.h"

namespace cuset {

namespace fs = std::filesystem;

std::string optimizer_shard_name(int64_t rank, int64_t world) {
    return strprintf("optimizer-%lld-of-%lld.safetensors", (long long)rank, (long long)world);
}

std::map<std::string, std::string> optimizer_file_identity(const TrainerState& state) {
    return {{"step", std::to_string(state.step)}, {"save_id", state.save_id}};
}

OptimizerFiles optimizer_files_open(const std::string& ckpt_dir, const TrainerState& state) {
    OptimizerFiles f;
    const fs::path whole = fs::path(ckpt_dir) / "optimizer.safetensors";
    if (fs::exists(whole)) {
        f.files.push_back(std::make_shared<SafetensorsFile>(whole.string()));
    } else {
        // The world size from any shard's name, then every rank's shard of it.
        int64_t world = 0;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(ckpt_dir, ec)) {
            long long r = 0, w = 0;
            const std::string n = e.path().filename().string();
            if (std::sscanf(n.c_str(), "optimizer-%lld-of-%lld.safetensors", &r, &w) == 2 && w > 0 &&
                n == optimizer_shard_name(r, w)) {
                world = w;
                break;
            }
        }
        if (world == 0)
            throw InputError("checkpoint " + ckpt_dir + " has no optimizer state (optimizer.safetensors or "
                             "optimizer-<rank>-of-<world>.safetensors): resume from a complete checkpoint");
        for (int64_t r = 0; r < world; ++r) {
            const fs::path p = fs::path(ckpt_dir) / optimizer_shard_name(r, world);
            if (!fs::exists(p))
                throw InputError(strprintf("checkpoint %s: %s is missing (a ZeRO checkpoint of %lld ranks needs every "
                                           "rank's shard)", ckpt_dir.c_str(), p.filename().c_str(), (long long)world));
            f.files.push_back(std::make_shared<SafetensorsFile>(p.string()));
        }
        f.world = world;
    }
    for (const auto& file : f.files) {
        // A shard carries its checkpoint's step and identity: one copied in from another
        // checkpoint (another step, or another run at the same step) would resume silently wrong.
        const auto& meta = file->metadata();
        auto step = meta.find("step");
        if (step != meta.end() && step->second != std::to_string(state.step))
            throw InputError("optimizer state " + file->path() + " was written at step " + quote_bounded(step->second, 40) +
                             ", the checkpoint is at step " + std::to_string(state.step) +
                             " (a file copied in from another checkpoint?): resume from a checkpoint as it was saved");
        auto id = meta.find("save_id");
        if (!state.save_id.empty() && (id == meta.end() || id->second != state.save_id))
            throw InputError("optimizer state " + file->path() + " belongs to another checkpoint than its trainer_state.json "
                             "(save_id " + (id == meta.end() ? std::string("missing") : quote_bounded(id->second, 80)) +
                             ", expected " + state.save_id + "): resume from a checkpoint as it was saved");
        for (const TensorView& v : file->tensors()) {
            if (v.name.rfind("rng.", 0) == 0) continue;
            if (v.dtype != StDtype::kF32)
                throw InputError("optimizer state " + file->path() + ": tensor '" + v.name + "' is not F32");
            // Borrowed from the mapping, which `f.files` keeps alive.
            f.tensors.emplace_back(v.name, at::from_blob(const_cast<uint8_t*>(v.data), v.shape, at::kFloat));
        }
    }
    return f;
}

at::Tensor OptimizerFiles::find(const std::string& name, int64_t rank, bool own) const {
    const size_t r = own && rank >= 0 && static_cast<size_t>(rank) < files.size() ? static_cast<size_t>(rank) : 0;
    if (files.empty()) return {};
    const TensorView* v = files[r]->find(name);
    return v ? tensor_from_view(*v, c10::Device(c10::kCPU)) : at::Tensor();
}

nlohmann::json trainer_state_to_json(const TrainerState& s) {
    return {{"format", TrainerState::kFormat},
            {"version", TrainerState::kVersion},
            {"step", s.step},
            {"epoch", s.epoch},
            {"step_in_epoch", s.step_in_epoch},
            {"total_steps", s.total_steps},
            {"targets_trained", s.targets_trained},
            {"skipped_steps", s.skipped_steps},
            {"bad_in_row", s.bad_in_row},
            {"global_batch", s.global_batch},
            {"world_size", s.world_size},
            {"config_hash", s.config_hash},
            {"data_hash", s.data_hash},
            {"history", s.history},
            {"save_id", s.save_id}};
}

TrainerState trainer_state_from_json(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object() || j.value("format", "") != TrainerState::kFormat)
        throw InputError(where + ": not a cuset trainer state (missing \"format\": \"" +
                         std::string(TrainerState::kFormat) + "\")");
    int version = j.value("version", -1);
    if (version != TrainerState::kVersion)
        throw InputError(where + ": trainer state version " + std::to_string(version) +
                         " is not supported by this build (it reads version " +
                         std::to_string(TrainerState::kVersion) +
                         "); resume with the cuset version that wrote it, or start a new run "
                         "from its model weights (--set model.path=<checkpoint>)");
    TrainerState s;
    try {
        s.step = j.at("step");
        s.epoch = j.at("epoch");
        s.step_in_epoch = j.at("step_in_epoch");
        s.total_steps = j.at("total_steps");
        // version 1 files written by earlier builds name it "tokens"
        s.targets_trained = j.contains("targets_trained") ? j.at("targets_trained") : j.at("tokens");
        s.skipped_steps = j.at("skipped_steps");
        s.bad_in_row = j.at("bad_in_row");
        s.global_batch = j.at("global_batch");
        s.world_size = j.at("world_size");
        s.config_hash = j.at("config_hash");
        s.data_hash = j.at("data_hash");
        s.history = j.at("history");
        s.save_id = j.value("save_id", "");
    } catch (const nlohmann::json::exception& e) {
        throw InputError(where + ": malformed trainer state: " + quote_bounded(e.what()));
    }
    // Values no run can have written (a hand-edited or corrupted file) are refused here, before
    // they index the data or the schedule.
    auto check = [&](bool ok, const std::string& what) {
        if (!ok) throw InputError(where + ": malformed trainer state: " + what);
    };
    check(s.step >= 0 && s.epoch >= 0 && s.step_in_epoch >= 0 && s.total_steps >= 0 && s.targets_trained >= 0 &&
              s.skipped_steps >= 0 && s.bad_in_row >= 0 && s.global_batch >= 0,
          "a count is negative");
    check(s.world_size >= 1, "world_size must be at least 1");
    check(s.step <= s.total_steps, strprintf("step %lld is past total_steps %lld", (long long)s.step, (long long)s.total_steps));
    check(s.step_in_epoch <= s.step && s.epoch <= s.step,
          strprintf("step_in_epoch %lld / epoch %lld do not fit step %lld", (long long)s.step_in_epoch, (long long)s.epoch,
                    (long long)s.step));
    check(s.skipped_steps <= s.step && s.bad_in_row <= s.skipped_steps, "more skipped steps than steps");
    check(s.history.is_array(), "history must be a list");
    return s;
}

std::string checkpoint_name(int64_t step) { return strprintf("checkpoint-%07lld", (long long)step); }

int64_t checkpoint_step_of(const std::string& name) {
    const std::string prefix = "checkpoint-";
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return -1;
    std::string digits = name.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoll(digits);
}

std::vector<std::string> checkpoint_list(const std::string& run_dir) {
    std::vector<std::pair<int64_t, std::string>> found;
    std::error_code ec;
    if (!fs::is_directory(run_dir, ec)) return {};
    for (const auto& e : fs::directory_iterator(run_dir, ec)) {
        if (!e.is_directory()) continue;
        int64_t step = checkpoint_step_of(e.path().filename().string());
        if (step < 0 || !fs::exists(e.path() / "trainer_state.json")) continue;
        found.emplace_back(step, e.path().string());
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto& f : found) out.push_back(f.second);
    return out;
}

std::string checkpoint_latest(const std::string& run_dir) {
    auto all = checkpoint_list(run_dir);
    return all.empty() ? "" : all.back();
}

void checkpoint_prune(const std::string& run_dir, int64_t keep_last) {
    if (keep_last <= 0) return;
    auto all = checkpoint_list(run_dir);
    for (size_t i = 0; i + keep_last < all.size(); ++i) {
        std::error_code ec;
        fs::remove_all(all[i], ec);
        if (ec) log_warn("could not delete old checkpoint %s: %s", all[i].c_str(), ec.message().c_str());
        else log_debug("deleted old checkpoint %s", all[i].c_str());
    }
}

void checkpoint_remove_partial(const std::string& run_dir) {
    // Only what cuset itself left (atomic_recover: its temporary names with its marker inside);
    // a complete copy moved aside by an interrupted replacement is put back, never deleted.
    for (const std::string& line : atomic_recover(run_dir)) log_warn("%s", line.c_str());
}

std::vector<std::string> checkpoint_unusable(const std::string& run_dir) {
    std::vector<std::string> out;
    std::error_code ec;
    if (!fs::is_directory(run_dir, ec)) return out;
    for (const auto& e : fs::directory_iterator(run_dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("checkpoint-", 0) != 0 || !e.is_directory()) continue;
        if (checkpoint_step_of(name) >= 0 && fs::exists(e.path() / "trainer_state.json")) continue;
        if (fs::exists(e.path() / kAtomicPartialMarker)) continue;  // a write of a live process
        out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string checkpoint_temp_name(const std::string& final_dir) { return atomic_temp_name(final_dir); }

void checkpoint_commit(const std::string& tmp_dir, const std::string& final_dir) {
    atomic_dir_commit(tmp_dir, final_dir);
}

void signals_install() {
    // Second signal: leave now. Complete checkpoints are only ever renamed into place, so
    // whatever was being written stays a ".tmp-" folder that the next start removes.
    StopSignalOptions o;
    o.first_message =
        "\ncuset-train: stop requested; finishing the current step and saving a checkpoint (signal again "
        "to exit at once)\n";
    o.second_message = "\ncuset-train: second signal, exiting without saving\n";
    o.second_exits = true;
    signals_install(o);
}

}  // namespace cuset
