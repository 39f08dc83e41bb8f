// Writing a run's checkpoints (train/checkpoint_writer.h).
#include "cuset/train/checkpoint_writer.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/train/model_card.h"
#include "cuset/train/zero.h"

namespace cuset {

namespace fs = std::filesystem;

namespace {

// Rank 0's string on every rank (a checkpoint's temporary folder name), through a broadcast of
// its bytes.
std::string broadcast_string(const Comm& comm, const std::string& s) {
    constexpr int64_t kMax = 4096;
    if (s.size() >= static_cast<size_t>(kMax)) throw RuntimeFailure("broadcast_string: path longer than 4095 bytes");
    at::Tensor buf = at::zeros({kMax}, at::kByte);  // [kMax] uint8, NUL-terminated
    if (comm.is_main()) std::memcpy(buf.data_ptr<uint8_t>(), s.data(), s.size());
    comm.broadcast(buf, 0);
    return std::string(reinterpret_cast<const char*>(buf.data_ptr<uint8_t>()));
}

}  // namespace

CheckpointWriter::CheckpointWriter(const TrainOptions& opts, const Comm& comm, std::string run_dir)
    : opts_(opts), comm_(comm), run_dir_(std::move(run_dir)) {}

void CheckpointWriter::save(TrainerState& state, const CheckpointContent& c) {
    const std::string final_dir = (fs::path(run_dir_) / checkpoint_name(state.step)).string();
    if (last_saved_step_ == state.step) {
        // Saved already (checkpoint.every hit the last step): its model card gains the final
        // evaluation, replaced atomically in the complete folder.
        if (comm_.is_main() && !file_hashes_.empty() && fs::exists(fs::path(final_dir) / "README.md"))
            write_model_card((fs::path(final_dir) / "README.md").string(), state, c);
        return;
    }
    comm_.barrier();
    auto t0 = std::chrono::steady_clock::now();
    auto* zero = dynamic_cast<ZeroAdamW*>(c.optim);
    // One temporary folder (with cuset's marker, see checkpoint_remove_partial), renamed onto
    // final_dir when complete; removed when anything below fails. With ZeRO every rank writes its
    // shard of the optimizer state into it (its name comes from rank 0).
    std::unique_ptr<AtomicDir> dir;
    if (comm_.is_main()) dir = std::make_unique<AtomicDir>(final_dir);
    const std::string tmp = temporary_folder_name(dir ? dir->path() : std::string(), zero || c.steps);
    // The temporary folder's name is unique to this save (a random part) and known to every rank:
    // the checkpoint's identity, in trainer_state.json and every optimizer file.
    state.save_id = fs::path(tmp).filename().string();
    if (zero) {
        std::map<std::string, std::string> meta = optimizer_file_identity(state);
        meta.insert({{"format", "cuset-zero-shard"}, {"zero_stage", std::to_string(zero->stage())}});
        safetensors_save((fs::path(tmp) / optimizer_shard_name(comm_.rank, comm_.world)).string(),
                         optimizer_state_with_rng(*c.optim, opts_.runtime.device), meta);
        zero->gather_all();  // stage 3: the whole weights, for the model folder
    }
    if (c.steps) c.steps->save_state(tmp, state.step, comm_);
    comm_.barrier();  // every shard is in place
    if (comm_.is_main()) {
        write_main_files(tmp, state, c, zero != nullptr);
        dir->commit();
        checkpoint_prune(run_dir_, opts_.checkpoint.keep_last);
        log_info("saved %s (%.1fs)", final_dir.c_str(), seconds_since(t0));
    }
    if (zero) zero->release_all();
    comm_.barrier();
    last_saved_step_ = state.step;
}

// The temporary folder on every rank that writes into it (rank 0's name, broadcast), else rank 0's.
std::string CheckpointWriter::temporary_folder_name(const std::string& tmp_on_main, bool all_ranks_write) const {
    if (all_ranks_write && comm_.world > 1) return broadcast_string(comm_, tmp_on_main);
    return tmp_on_main;
}

// Rank 0's files: the model (or its adapter), the whole optimizer state unless `sharded`, the
// configuration, the model card and, last, trainer_state.json.
void CheckpointWriter::write_main_files(const std::string& tmp, const TrainerState& state, const CheckpointContent& c,
                                        bool sharded) {
    if (c.lora) {  // the adapter in PEFT's layout; the frozen base stays model.path
        lora_save(*c.model, *c.lora, tmp, fs::absolute(opts_.model.path).string());
    } else {
        model_save_files(*c.model, tmp, c.tokenizer_dir, opts_.runtime.dtype, opts_.checkpoint.max_shard_mb << 20);
    }
    if (!sharded)
        safetensors_save((fs::path(tmp) / "optimizer.safetensors").string(),
                         optimizer_state_with_rng(*c.optim, opts_.runtime.device), optimizer_file_identity(state));
    atomic_write((fs::path(tmp) / "config.yaml").string(), opts_.run.config_yaml);
    if (file_hashes_.empty())
        for (const std::string& f : {opts_.data.train, opts_.data.eval, c.steps ? opts_.model.tasks : std::string()})
            if (!f.empty()) file_hashes_.emplace_back(f, hash_file(f));
    write_model_card((fs::path(tmp) / "README.md").string(), state, c);
    atomic_write((fs::path(tmp) / "trainer_state.json").string(), trainer_state_to_json(state).dump(2));
}

void CheckpointWriter::write_model_card(const std::string& file, const TrainerState& state, const CheckpointContent& c) {
    atomic_write(file, model_card(opts_, state, comm_.world, c.data_hash, file_hashes_, opts_.command_line));
}

NamedTensors optimizer_state_with_rng(const Optimizer& optim, c10::Device device) {
    NamedTensors st = optim.state_tensors();
    st.emplace_back("rng.cpu", at::detail::getDefaultCPUGenerator().get_state());
    if (device.is_cuda()) st.emplace_back("rng.cuda", at::globalContext().defaultGenerator(device).get_state());
    return st;
}

void generators_restore(const OptimizerFiles& files, const Comm& comm, c10::Device device) {
    auto rng = files.find("rng.cpu", comm.rank, files.world == comm.world);
    if (rng.defined()) {
        at::Generator gen = at::detail::getDefaultCPUGenerator();
        gen.set_state(rng.to(at::kByte).clone());
    }
    auto rng_cuda = files.find("rng.cuda", comm.rank, files.world == comm.world);
    if (rng_cuda.defined() && device.is_cuda()) {
        at::Generator gen = at::globalContext().defaultGenerator(device);  // a handle on the device's generator
        gen.set_state(rng_cuda.clone());
    }
}

}  // namespace cuset
