// The application layer: the libraries' typed options, built from the run configuration. A
// library takes its own options (TaggerOptions, ChatFormatOptions, ObjectiveOptions, ...) and
// never reads another library's section of the configuration; cuset-train's commands build those
// options here and hand them over.
#pragma once

#include <string>

#include "cuset/analysis/analyze.h"
#include "cuset/analysis/score.h"
#include "cuset/app/config_schema.h"
#include "cuset/data/data.h"
#include "cuset/data/data_check.h"
#include "cuset/data/data_show.h"
#include "cuset/data/dataset.h"
#include "cuset/eval/eval_run.h"
#include "cuset/generate/generate_run.h"
#include "cuset/model/device.h"
#include "cuset/model/lora.h"
#include "cuset/rl/grpo_steps.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/chat_format.h"
#include "cuset/train/distributed.h"
#include "cuset/train/objective.h"
#include "cuset/train/trainer.h"

namespace cuset {

// tagger.* of a configuration.
TaggerOptions tagger_options_from(const Config& cfg);

// data.chat_format, data.system_prompt and data.template.* of a configuration.
ChatFormatOptions chat_format_options_from(const Config& cfg);

// data.skip_invalid and data.invalid_utf8 of a configuration, for data_load_jsonl().
DataLoadOptions data_load_options_from(const Config& cfg);

// The text pipeline of a configuration: the tokenizer of tokenizer_path_of(cfg) (model.tokenizer,
// or model.path; `model`, when not empty, stands for model.path: the model a command runs instead,
// its --model), the chat format, the tagger and the data loading above.
TextOptions text_options_from(const Config& cfg, const std::string& model = "");

// The objective.* keys of a configuration. Throws UsageError on a value it does not know.
ObjectiveOptions objective_options_from(const Config& cfg);

// model.lora.* of a configuration (target_modules split at commas).
LoraOptions lora_options_from(const Config& cfg);

// The runtime of a configuration's run (train.device, model.dtype, train.threads) for one rank of
// `world` (device_for_rank). UsageError when train.device asks for CUDA that is not there.
Runtime runtime_from(const Config& cfg, int64_t world = 1, int64_t local_rank = 0);

// The runtime the dry run plans with: runtime_from's rule, but a CUDA device that is not there is
// taken as named (the plan of a GPU run checked on another machine).
Runtime runtime_planned_from(const Config& cfg);

// objective.grpo.* (with train.seed, train.micro_batch_size, objective.chunk_size, eval.level,
// eval.gpu_name and the judge's eval.* tools and limits) of a configuration: the GRPO steps of
// objective.method grpo. UsageError on a judge that cannot work here (no nvcc, --judge gpu
// without a GPU).
rl::GrpoStepsOptions grpo_steps_options_from(const Config& cfg);

// The trainer's typed options of a configuration: the run record (run folder, config.yaml text,
// hashes), train.*, data.* of batching, checkpoint.*, log.*, distributed.*, model.*, the text
// pipeline, objective, lora and `runtime`; for objective.method grpo, `steps` (rl/grpo_steps.h).
// The session's own fields (resume, extend, command_line) are left at their defaults.
TrainOptions train_options_from(const Config& cfg, const Runtime& runtime);

// config_hash() with the schedule length (train.max_steps, train.epochs) neutralised: what must
// still match for `--resume --extend`.
std::string schedule_neutral_hash(Config cfg);

// distributed.backend, timeout_s and bucket_mb.
ProcessGroupOptions process_group_options_from(const Config& cfg);

// data.cache_dir and log.progress.
TokenizeOptions tokenize_options_from(const Config& cfg);

// `command` (the command line's choices) with data.train, data.eval, data.max_seq_len and
// data.truncation.
DataShowOptions data_show_options_from(const Config& cfg, DataShowOptions command);

// `command` with data.max_seq_len and data.truncation (its programs' containment, eval.sandbox.*,
// is judge_settings_from's).
DataCheckOptions data_check_options_from(const Config& cfg, DataCheckOptions command);

// model.*, data.*, run.*, objective.chunk_size, train.micro_batch_size, data.cache_dir and
// log.progress for a scoring pass.
ScoreSetup score_setup_from(const Config& cfg);

// analysis.*
AnalysisOptions analysis_options_from(const Config& cfg);

// `command` (model given on the command line or "", prompts, out) with the model (model.path when
// the command named none), model.lora.path, model.tokenizer, generate.* and log.progress.
GenerateRequest generate_request_from(const Config& cfg, GenerateRequest command);

// eval.*'s judge: nvcc, Python, timeouts, containment, jobs.
eval::JudgeSettings judge_settings_from(const Config& cfg);

// The judge of eval.* in `mode` with `work_dir` as its scratch folder (eval::judge_options_for).
eval::JudgeOptions judge_options_from(const Config& cfg, eval::JudgeMode mode, const std::string& work_dir,
                                      bool keep_work);

// `command` with the run folder, eval.gpu_name, log.progress, the generation (generate_request_from)
// and the judge's settings.
eval::EvalRequest eval_request_from(const Config& cfg, eval::EvalRequest command);

}  // namespace cuset
