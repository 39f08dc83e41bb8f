// The run folder at start-up and the checkpoint a run continues from (train/run_folder.h).
#include "cuset/train/run_folder.h"

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The first few names of `names`, for a message.
std::string first_names(const std::vector<std::string>& names) {
    std::string l;
    for (size_t i = 0; i < names.size() && i < 3; ++i) l += (i ? ", " : "") + names[i];
    return l + (names.size() > 3 ? ", ..." : "");
}

// The checkpoint of `opts.resume` in a run folder whose complete checkpoints and unusable
// "checkpoint-..." folders are as found; "" for a fresh run.
std::string resume_checkpoint(const TrainOptions& opts, const std::vector<std::string>& unusable) {
    const std::string& run_dir = opts.run.dir;
    if (opts.resume == "auto") {
        const std::string from = checkpoint_latest(run_dir);
        if (from.empty() && !unusable.empty())
            throw InputError("--resume auto: run folder '" + run_dir + "' holds " + first_names(unusable) +
                             " but no complete checkpoint (no trainer_state.json); resume from a complete "
                             "one with --resume PATH, or move it away, or start a new run with --run-name NAME");
        if (from.empty()) log_info("--resume auto: no complete checkpoint in %s, starting a new run", run_dir.c_str());
        for (const std::string& u : unusable)
            if (u > from)
                log_warn("--resume auto: skipping %s, newer than %s but not a complete checkpoint (no trainer_state.json)",
                         u.c_str(), from.c_str());
        return from;
    }
    if (!opts.resume.empty()) {
        if (!fs::exists(fs::path(opts.resume) / "trainer_state.json"))
            throw InputError("--resume: '" + opts.resume +
                             "' is not a complete checkpoint (no trainer_state.json); use a "
                             "checkpoint-<step> folder or --resume auto");
        return opts.resume;
    }
    if (!checkpoint_list(run_dir).empty() || !unusable.empty())
        throw UsageError("run folder '" + run_dir +
                         "' already holds checkpoints: continue it with --resume auto, or start "
                         "a new run with --run-name NAME");
    return "";
}

// Rank 0: the folder with train.log and config.yaml, none of the run's files being an input (a
// data file kept in the run folder as metrics.jsonl would be appended to, one named config.yaml
// replaced).
void run_folder_create(const TrainOptions& opts) {
    const std::string& run_dir = opts.run.dir;
    const std::vector<std::string> inputs = {opts.data.train, opts.data.eval, opts.model.confidence_cache,
                                             opts.model.rho1_reference_scores, opts.model.tasks};
    for (const char* f : {"config.yaml", "train.log", "metrics.jsonl", "summary.json", "report.html", "rewards.jsonl"})
        refuse_output_equal_to_input((fs::path(run_dir) / f).string(), inputs, "train");
    std::error_code ec;
    fs::create_directories(run_dir, ec);
    if (ec) throw RuntimeFailure("cannot create run folder '" + run_dir + "': " + ec.message());
    log_add_file((fs::path(run_dir) / "train.log").string());
    file_write_atomic((fs::path(run_dir) / "config.yaml").string(), opts.run.config_yaml);
}

// Whether checkpoint `ckpt`'s configuration differs from this run's only in the schedule length.
bool only_schedule_differs(const std::string& ckpt, const TrainOptions& opts) {
    try {
        return opts.run.schedule_hash_of((fs::path(ckpt) / "config.yaml").string()) == opts.run.schedule_hash;
    } catch (const Error&) {
        return false;
    }
}

// The checkpoint's state, read, with what must match this run checked; *extended: the run goes on
// under --extend with a longer schedule.
TrainerState checked_state(const std::string& ckpt, const TrainOptions& opts, const TrainerState& planned,
                           bool* extended) {
    const std::string state_file = (fs::path(ckpt) / "trainer_state.json").string();
    if (fs::is_directory(state_file)) throw InputError(state_file + " is a folder, not a file");
    if (!fs::exists(state_file)) throw InputError(state_file + ": cannot read (not a complete checkpoint)");
    TrainerState s = trainer_state_from_json(json_read_file(state_file, "trainer state"), state_file);
    *extended = false;
    if (s.config_hash != planned.config_hash) {
        const bool schedule_only = only_schedule_differs(ckpt, opts);
        if (!(opts.extend && schedule_only))
            throw InputError("checkpoint " + ckpt + " was written by a run with a different configuration (config hash " +
                             s.config_hash + ", this run " + planned.config_hash +
                             "): resume with the configuration in " + (fs::path(ckpt) / "config.yaml").string() +
                             ", or start a new run from its weights with --set model.path=" + ckpt + " --run-name NAME" +
                             (schedule_only ? "; only the schedule length (train.max_steps / train.epochs) differs: "
                                              "continue under the new length with --extend"
                                            : ""));
        *extended = true;
    }
    if (s.data_hash != planned.data_hash)
        throw InputError("checkpoint " + ckpt + " was trained on different data (data hash " + s.data_hash +
                         ", now " + planned.data_hash + "): resume with the same data.train file and tokenizer");
    if (s.global_batch != planned.global_batch)
        throw InputError(strprintf("checkpoint %s used %lld rows per step, this run %lld (micro_batch_size x grad_accum x ranks): "
                                   "keep the global batch when resuming on another number of ranks",
                                   ckpt.c_str(), (long long)s.global_batch, (long long)planned.global_batch));
    return s;
}

}  // namespace

std::string run_folder_open(const TrainOptions& opts, const Comm& comm) {
    // First undo interrupted writes (a complete checkpoint moved aside comes back), so that the
    // checkpoints below are what is really there.
    if (comm.is_main()) checkpoint_remove_partial(opts.run.dir);
    comm.barrier();
    const std::string from = resume_checkpoint(opts, checkpoint_unusable(opts.run.dir));
    if (comm.is_main()) run_folder_create(opts);
    comm.barrier();
    return from;
}

TrainerState resumed_state(const std::string& ckpt, const TrainOptions& opts, const TrainerState& planned) {
    bool extended = false;
    TrainerState s = checked_state(ckpt, opts, planned, &extended);
    const TrainerState saved = s;
    s.world_size = planned.world_size;
    if (extended) {
        if (planned.total_steps <= saved.step)
            throw InputError(strprintf("--extend: checkpoint %s is at step %lld, the new schedule has %lld steps: "
                                       "give a longer train.max_steps or more train.epochs",
                                       ckpt.c_str(), (long long)saved.step, (long long)planned.total_steps));
        s.total_steps = planned.total_steps;
        s.config_hash = planned.config_hash;  // later checkpoints belong to the new configuration
        s.history.push_back({{"step", saved.step},
                             {"when", "schedule extended"},
                             {"total_steps_before", saved.total_steps},
                             {"total_steps", planned.total_steps}});
        log_info("schedule extended at step %lld: %lld -> %lld steps (the learning-rate schedule is recomputed for the "
                 "new length; weights, optimizer state, data position and generators continue from the checkpoint)",
                 (long long)saved.step, (long long)saved.total_steps, (long long)planned.total_steps);
    } else if (opts.extend) {
        log_info("--extend: the checkpoint's schedule already has %lld steps; resuming as usual", (long long)saved.total_steps);
    }
    return s;
}

}  // namespace cuset
