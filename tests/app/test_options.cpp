// The application layer's typed options (app/options.h): every key of a configuration lands in
// the library option it belongs to, and a command's --model stands for model.path in the
// tokenizer's place.
#include <gtest/gtest.h>

#include <cstdlib>

#include <string>
#include <vector>

#include "cuset/app/options.h"
#include "cuset/app/config_schema.h"
#include "cuset/core/error.h"
#include "cuset/model/device.h"
#include "cuset/train/objective.h"

using cuset::Method;
using cuset::Objective;
using cuset::ObjectiveOptions;
using cuset::ThresholdMode;

TEST(AppOptions, ObjectiveOptionsFromConfig) {
    cuset::Config cfg;
    EXPECT_EQ(cuset::objective_options_from(cfg).method, Method::kCuset);
    EXPECT_EQ(cuset::objective_options_from(cfg).window, 256);
    EXPECT_EQ(cuset::objective_options_from(cfg).q, 0.2);
    cfg.objective.method = "focal";
    cfg.objective.loss.cached_confidence = true;
    cfg.objective.loss.mask_confidence = false;
    cfg.objective.loss.mask_sensitivity = false;
    cfg.objective.loss.drop_weight = 0.25;
    cfg.objective.loss.threshold_mode = ThresholdMode::kBatchQuantile;
    cfg.objective.loss.q = 0.3;
    cfg.objective.loss.threshold_value = 0.6;
    cfg.objective.loss.region_enabled = false;
    cfg.objective.loss.window = 64;
    cfg.objective.loss.alpha = 2.0;
    cfg.objective.loss.focal_gamma = 3.0;
    cfg.objective.loss.chunk_size = 0;
    ObjectiveOptions o = cuset::objective_options_from(cfg);
    EXPECT_EQ(o.method, Method::kFocal);
    EXPECT_TRUE(o.cached_confidence);
    EXPECT_FALSE(o.mask_confidence);
    EXPECT_FALSE(o.mask_sensitivity);
    EXPECT_EQ(o.drop_weight, 0.25);
    EXPECT_EQ(o.threshold_mode, ThresholdMode::kBatchQuantile);
    EXPECT_EQ(o.q, 0.3);
    EXPECT_EQ(o.threshold_value, 0.6);
    EXPECT_FALSE(o.region_enabled);
    EXPECT_EQ(o.window, 64);
    EXPECT_EQ(o.alpha, 2.0);
    EXPECT_EQ(o.focal_gamma, 3.0);
    EXPECT_EQ(o.chunk_size, 0);
    cfg.objective.method = "eaft";
    cfg.objective.loss.eaft_alpha = 0.5;
    cfg.objective.loss.eaft_k = 7;
    cfg.objective.loss.asft_alpha = 0.25;
    cfg.objective.loss.rho1_keep_fraction = 0.3;
    o = cuset::objective_options_from(cfg);
    EXPECT_EQ(o.method, Method::kEaft);
    EXPECT_EQ(o.eaft_alpha, 0.5);
    EXPECT_EQ(o.eaft_k, 7);
    EXPECT_EQ(o.asft_alpha, 0.25);
    EXPECT_EQ(o.rho1_keep_fraction, 0.3);
    cfg.objective.method = "asft";
    EXPECT_TRUE(Objective(cuset::objective_options_from(cfg)).needs_reference_model());
    cfg.objective.method = "rho1";
    EXPECT_TRUE(Objective(cuset::objective_options_from(cfg)).needs_two_passes());
    EXPECT_TRUE(Objective(cuset::objective_options_from(cfg)).needs_reference_scores());
    o.eaft_k = 1;  // ln 1 = 0: out of the schema's range
    EXPECT_THROW(Objective{o}, cuset::UsageError);
    cfg.objective.method = "mystery";
    EXPECT_THROW(cuset::objective_options_from(cfg), cuset::UsageError);
}

TEST(AppOptions, TextPipelineOptionsFromConfig) {
    cuset::Config cfg;
    cfg.model.path = "models/base";
    cfg.data.chat_format = "custom";
    cfg.data.system_prompt = "S";
    cfg.data.templ.prefix = "<s>";
    cfg.data.templ.user = "Q: {content}\n";
    cfg.data.templ.end_of_turn = "</s>";
    cfg.tagger.device_functions = false;
    cfg.data.load.skip_invalid = true;
    cfg.data.load.replace_invalid_utf8 = true;
    cuset::TextOptions t = cuset::text_options_from(cfg);
    EXPECT_EQ(t.tokenizer, "models/base");
    EXPECT_EQ(t.chat_format.format, "custom");
    EXPECT_EQ(t.chat_format.system_prompt, "S");
    EXPECT_EQ(t.chat_format.templ.prefix, "<s>");
    EXPECT_EQ(t.chat_format.templ.system, cfg.data.templ.system);
    EXPECT_EQ(t.chat_format.templ.user, "Q: {content}\n");
    EXPECT_EQ(t.chat_format.templ.assistant, cfg.data.templ.assistant);
    EXPECT_EQ(t.chat_format.templ.end_of_turn, "</s>");
    EXPECT_FALSE(t.tagger.device_functions);
    EXPECT_TRUE(t.load.skip_invalid);
    EXPECT_TRUE(t.load.replace_invalid_utf8);
    // --model stands for model.path; model.tokenizer wins over both.
    EXPECT_EQ(cuset::text_options_from(cfg, "runs/x/checkpoint-0000002").tokenizer, "runs/x/checkpoint-0000002");
    cfg.model.tokenizer = "tok/tokenizer.json";
    EXPECT_EQ(cuset::text_options_from(cfg).tokenizer, "tok/tokenizer.json");
    EXPECT_EQ(cuset::text_options_from(cfg, "runs/x/checkpoint-0000002").tokenizer, "tok/tokenizer.json");
    // The defaults of the library options are the schema's.
    cuset::Config d;
    cuset::ChatFormatOptions lib;
    cuset::ChatFormatOptions from = cuset::chat_format_options_from(d);
    EXPECT_EQ(from.templ.system, lib.templ.system);
    EXPECT_EQ(from.templ.user, lib.templ.user);
    EXPECT_EQ(from.templ.assistant, lib.templ.assistant);
    EXPECT_EQ(cuset::tagger_options_from(d).device_functions, cuset::TaggerOptions{}.device_functions);
    EXPECT_FALSE(cuset::data_load_options_from(d).replace_invalid_utf8);
    EXPECT_TRUE(from.chat_template.empty());
    EXPECT_EQ(from.template_kwargs, lib.template_kwargs);
    // The `template` format's keys.
    cfg.data.chat_format = "template";
    cfg.data.chat_template = "t.jinja";
    cfg.data.chat_template_kwargs = "{\"enable_thinking\": false, \"n\": 2}";
    cuset::ChatFormatOptions ct = cuset::chat_format_options_from(cfg);
    EXPECT_EQ(ct.format, "template");
    EXPECT_EQ(ct.chat_template, "t.jinja");
    EXPECT_EQ(ct.template_kwargs.dump(), "{\"enable_thinking\":false,\"n\":2}");
}

TEST(AppOptions, LoraAndTrainerOptionsFromConfig) {
    cuset::Config cfg;
    cfg.model.lora.r = 8;
    cfg.model.lora.alpha = 4;
    cfg.model.lora.dropout = 0.1;
    cfg.model.lora.rslora = true;
    cfg.model.lora.init = "gaussian";
    cfg.model.lora.target_modules = " q_proj, v_proj ,,down_proj";
    cuset::LoraOptions l = cuset::lora_options_from(cfg);
    EXPECT_EQ(l.r, 8);
    EXPECT_EQ(l.alpha, 4);
    EXPECT_EQ(l.dropout, 0.1);
    EXPECT_TRUE(l.rslora);
    EXPECT_EQ(l.init, "gaussian");
    EXPECT_EQ(l.target_modules, (std::vector<std::string>{"q_proj", "v_proj", "down_proj"}));
    cfg.objective.method = "sft";
    cuset::Runtime rt;
    rt.dtype = at::kBFloat16;
    rt.threads = 3;
    cuset::TrainOptions t = cuset::train_options_from(cfg, rt);
    EXPECT_EQ(t.runtime.dtype, at::kBFloat16);
    EXPECT_EQ(t.runtime.threads, 3);
    EXPECT_EQ(t.objective.method, Method::kSft);
    EXPECT_EQ(t.lora.r, 8);
    EXPECT_EQ(t.text.tokenizer, cuset::tokenizer_path_of(cfg));
    EXPECT_TRUE(t.resume.empty());
    EXPECT_FALSE(t.extend);
}

// One rule for the runtime: model.dtype auto is float32 on the CPU, bfloat16 on CUDA; the dry run's
// plan takes a CUDA device as named where there is none, the run refuses it.
TEST(AppOptions, RuntimeFromConfig) {
    cuset::Config cfg;
    cfg.train.device = "cpu";
    cfg.train.threads = 2;
    cuset::Runtime rt = cuset::runtime_from(cfg);
    EXPECT_TRUE(rt.device.is_cpu());
    EXPECT_EQ(rt.dtype, at::kFloat);
    EXPECT_EQ(rt.threads, 2);
    cfg.model.dtype = "float16";
    EXPECT_EQ(cuset::runtime_from(cfg).dtype, at::kHalf);
    cfg.model.dtype = "auto";
    cfg.train.device = "auto";
    const cuset::Runtime run = cuset::runtime_from(cfg), plan = cuset::runtime_planned_from(cfg);
    EXPECT_EQ(plan.device, run.device);
    EXPECT_EQ(plan.dtype, run.dtype);
    EXPECT_EQ(run.dtype, run.device.is_cuda() ? at::kBFloat16 : at::kFloat);
    cfg.train.device = "cuda:1";
    const cuset::Runtime gpu_plan = cuset::runtime_planned_from(cfg);
    EXPECT_TRUE(gpu_plan.device.is_cuda());
    EXPECT_EQ(gpu_plan.device.index(), 1);
    EXPECT_EQ(gpu_plan.dtype, at::kBFloat16);
}

// Every key the trainer reads arrives in its typed options: each is set away from its default here
// and must come back (a key the copy forgot would silently train with the default).
TEST(AppOptions, TrainerSectionsFromConfig) {
    cuset::Config cfg;
    cfg.source_file = "sweep/lr.yaml";
    cfg.run.output_dir = "out";
    cfg.train.seed = 7;
    cfg.train.micro_batch_size = 3;
    cfg.train.grad_accum = 5;
    cfg.train.epochs = 2;
    cfg.train.max_steps = 11;
    cfg.train.lr = 3e-4;
    cfg.train.schedule = "linear";
    cfg.train.warmup_steps = 4;
    cfg.train.warmup_ratio = 0.25;
    cfg.train.min_lr_ratio = 0.1;
    cfg.train.weight_decay = 0.01;
    cfg.train.decay_norm_and_bias = true;
    cfg.train.beta1 = 0.8;
    cfg.train.beta2 = 0.95;
    cfg.train.eps = 1e-6;
    cfg.train.grad_clip = 0.5;
    cfg.train.eval_every = 9;
    cfg.train.max_bad_steps = 2;
    cfg.data.train = "a.jsonl";
    cfg.data.eval = "b.jsonl";
    cfg.data.max_seq_len = 512;
    cfg.data.truncation = "drop";
    cfg.data.packing = true;
    cfg.data.group_by_length = true;
    cfg.data.shuffle = false;
    cfg.data.tokenize.cache_dir = "cache";
    cfg.data.chat_format = "chatml";
    cfg.checkpoint.every = 6;
    cfg.checkpoint.keep_last = 3;
    cfg.checkpoint.max_shard_mb = 100;
    cfg.log.every = 2;
    cfg.log.progress = "never";
    cfg.log.sample_weights = true;
    cfg.log.tensorboard = true;
    cfg.distributed.zero_stage = 2;
    cfg.distributed.offload_optimizer = true;
    cfg.distributed.bucket_mb = 8;
    cfg.model.path = "m";
    cfg.model.dtype = "bfloat16";
    cfg.model.activation_checkpointing = true;
    cfg.model.lora.enabled = true;
    cfg.model.lora.path = "adapter";
    cfg.objective.method = "rho1";
    cfg.objective.confidence_cache = "conf.bin";
    cfg.objective.rho1_reference_scores = "ref.bin";
    cfg.objective.grpo.tasks = "tasks.jsonl";
    const cuset::TrainOptions t = cuset::train_options_from(cfg, cuset::Runtime{});
    EXPECT_EQ(t.run.dir, "out/lr");
    EXPECT_EQ(t.run.config_yaml, cuset::config_to_yaml(cfg));
    EXPECT_EQ(t.run.config_hash, cuset::config_hash(cfg));
    const cuset::OptimizeOptions& o = t.train;
    EXPECT_EQ(o.seed, 7);
    EXPECT_EQ(o.micro_batch_size, 3);
    EXPECT_EQ(o.grad_accum, 5);
    EXPECT_EQ(o.epochs, 2);
    EXPECT_EQ(o.max_steps, 11);
    EXPECT_EQ(o.lr, 3e-4);
    EXPECT_EQ(o.schedule, "linear");
    EXPECT_EQ(o.warmup_steps, 4);
    EXPECT_EQ(o.warmup_ratio, 0.25);
    EXPECT_EQ(o.min_lr_ratio, 0.1);
    EXPECT_EQ(o.weight_decay, 0.01);
    EXPECT_TRUE(o.decay_norm_and_bias);
    EXPECT_EQ(o.beta1, 0.8);
    EXPECT_EQ(o.beta2, 0.95);
    EXPECT_EQ(o.eps, 1e-6);
    EXPECT_EQ(o.grad_clip, 0.5);
    EXPECT_EQ(o.eval_every, 9);
    EXPECT_EQ(o.max_bad_steps, 2);
    const cuset::BatchingOptions& d = t.data;
    EXPECT_EQ(d.train, "a.jsonl");
    EXPECT_EQ(d.eval, "b.jsonl");
    EXPECT_EQ(d.max_seq_len, 512);
    EXPECT_EQ(d.truncation, "drop");
    EXPECT_TRUE(d.packing);
    EXPECT_TRUE(d.group_by_length);
    EXPECT_FALSE(d.shuffle);
    EXPECT_EQ(d.tokenize.cache_dir, "cache");
    EXPECT_EQ(d.tokenize.progress, "never");
    EXPECT_EQ(t.checkpoint.every, 6);
    EXPECT_EQ(t.checkpoint.keep_last, 3);
    EXPECT_EQ(t.checkpoint.max_shard_mb, 100);
    EXPECT_EQ(t.log.every, 2);
    EXPECT_EQ(t.log.progress, "never");
    EXPECT_TRUE(t.log.sample_weights);
    EXPECT_TRUE(t.log.tensorboard);
    EXPECT_EQ(t.distributed.zero_stage, 2);
    EXPECT_TRUE(t.distributed.offload_optimizer);
    EXPECT_EQ(t.distributed.bucket_mb, 8);
    const cuset::TrainModelOptions& m = t.model;
    EXPECT_EQ(m.path, "m");
    EXPECT_EQ(m.dtype, "bfloat16");
    EXPECT_TRUE(m.activation_checkpointing);
    EXPECT_TRUE(m.lora);
    EXPECT_EQ(m.adapter, "adapter");
    EXPECT_EQ(m.method, "rho1");
    EXPECT_EQ(m.confidence_cache, "conf.bin");
    EXPECT_EQ(m.rho1_reference_scores, "ref.bin");
    EXPECT_EQ(m.tasks, "tasks.jsonl");
    EXPECT_EQ(m.chat_format, "chatml");

    // --extend: only the schedule length may differ between a checkpoint's configuration and this one.
    cuset::Config longer = cfg;
    longer.train.max_steps = 99;
    longer.train.epochs = 4;
    EXPECT_NE(cuset::config_hash(longer), t.run.config_hash);
    EXPECT_EQ(cuset::schedule_neutral_hash(longer), t.run.schedule_hash);
    cuset::Config other = cfg;
    other.train.lr = 1e-3;
    EXPECT_NE(cuset::schedule_neutral_hash(other), t.run.schedule_hash);
}

// The other commands' typed options: generate, score, analyze, eval and its judge, data show and
// check, the process group.
TEST(AppOptions, CommandOptionsFromConfig) {
    cuset::Config cfg;
    cfg.model.path = "m";
    cfg.model.tokenizer = "tok";
    cfg.model.lora.path = "adapter";
    cfg.run.output_dir = "out";
    cfg.run.name = "r";
    cfg.log.progress = "always";
    cfg.generate.max_new_tokens = 77;
    cfg.generate.n = 4;
    cfg.generate.sampling.temperature = 0.7;
    cfg.generate.sampling.top_k = 5;
    cfg.generate.sampling.top_p = 0.9;
    cfg.generate.sampling.min_p = 0.05;
    cfg.generate.sampling.repetition_penalty = 1.1;
    cfg.generate.seed = 99;
    cfg.generate.batch_size = 2;
    cfg.generate.stop = "[\"\\n\\n\"]";
    cfg.generate.thinking = true;
    cfg.generate.skip_invalid = true;
    cuset::GenerateRequest command;
    command.prompts = "p.jsonl";
    command.out = "o.jsonl";
    cuset::GenerateRequest g = cuset::generate_request_from(cfg, command);
    EXPECT_EQ(g.model, "m");  // no --model: model.path
    EXPECT_EQ(g.adapter, "adapter");
    EXPECT_EQ(g.tokenizer, "tok");
    EXPECT_EQ(g.prompts, "p.jsonl");
    EXPECT_EQ(g.out, "o.jsonl");
    EXPECT_EQ(g.settings.max_new_tokens, 77);
    EXPECT_EQ(g.settings.n, 4);
    EXPECT_EQ(g.settings.sampling.temperature, 0.7);
    EXPECT_EQ(g.settings.sampling.top_k, 5);
    EXPECT_EQ(g.settings.sampling.top_p, 0.9);
    EXPECT_EQ(g.settings.sampling.min_p, 0.05);
    EXPECT_EQ(g.settings.sampling.repetition_penalty, 1.1);
    EXPECT_EQ(g.settings.seed, 99);
    EXPECT_EQ(g.settings.batch_size, 2);
    EXPECT_EQ(g.settings.stop, "[\"\\n\\n\"]");
    EXPECT_TRUE(g.settings.thinking);
    EXPECT_TRUE(g.settings.skip_invalid);
    EXPECT_EQ(g.settings.progress, "always");
    command.model = "ckpt";
    EXPECT_EQ(cuset::generate_request_from(cfg, command).model, "ckpt");  // --model wins

    cfg.data.train = "a.jsonl";
    cfg.data.eval = "b.jsonl";
    cfg.data.max_seq_len = 300;
    cfg.data.truncation = "drop";
    cfg.data.tokenize.cache_dir = "";
    cfg.objective.loss.chunk_size = 64;
    cfg.train.micro_batch_size = 6;
    const cuset::ScoreSetup s = cuset::score_setup_from(cfg);
    EXPECT_EQ(s.model, "m");
    EXPECT_EQ(s.tokenizer, "tok");
    EXPECT_EQ(s.adapter, "adapter");
    EXPECT_EQ(s.train, "a.jsonl");
    EXPECT_EQ(s.eval, "b.jsonl");
    EXPECT_EQ(s.max_seq_len, 300);
    EXPECT_EQ(s.chunk_size, 64);
    EXPECT_EQ(s.micro_batch_size, 6);
    EXPECT_EQ(s.run_dir, "out/r");
    EXPECT_EQ(s.tokenize.cache_dir, "");
    EXPECT_EQ(s.tokenize.progress, "always");

    cfg.analysis.window = 32;
    cfg.analysis.low_threshold = 0.3;
    cfg.analysis.overlap = 0.25;
    cfg.analysis.bins = 10;
    const cuset::AnalysisOptions a = cuset::analysis_options_from(cfg);
    EXPECT_EQ(a.window, 32);
    EXPECT_EQ(a.low_threshold, 0.3);
    EXPECT_EQ(a.overlap, 0.25);
    EXPECT_EQ(a.bins, 10);

    cuset::DataShowOptions show;
    show.index = 3;
    show = cuset::data_show_options_from(cfg, show);
    EXPECT_EQ(show.index, 3);
    EXPECT_EQ(show.train, "a.jsonl");
    EXPECT_EQ(show.eval, "b.jsonl");
    EXPECT_EQ(show.max_seq_len, 300);
    EXPECT_TRUE(show.drop_too_long);

    cfg.eval.nvcc = "/opt/nvcc";
    cfg.eval.python = "/opt/python";
    cfg.eval.jobs = 5;
    cfg.eval.compile_timeout_s = 11;
    cfg.eval.run_timeout_s = 12;
    cfg.eval.gen_timeout_s = 13;
    cfg.eval.compare_timeout_s = 14;
    cfg.eval.emulate_timeout_s = 15;
    cfg.eval.contain = false;
    cfg.eval.limits.cpu_s = 16;
    cfg.eval.limits.memory_mb = 17;
    cfg.eval.limits.file_mb = 18;
    cfg.eval.limits.processes = 19;
    cfg.eval.limits.open_files = 20;
    cfg.eval.gpu_name = "H200";
    const cuset::eval::JudgeSettings j = cuset::judge_settings_from(cfg);
    EXPECT_EQ(j.nvcc, "/opt/nvcc");
    EXPECT_EQ(j.python, "/opt/python");
    EXPECT_EQ(j.jobs, 5);
    EXPECT_EQ(j.compile_timeout_s, 11);
    EXPECT_EQ(j.run_timeout_s, 12);
    EXPECT_EQ(j.gen_timeout_s, 13);
    EXPECT_EQ(j.compare_timeout_s, 14);
    EXPECT_EQ(j.emulate_timeout_s, 15);
    EXPECT_FALSE(j.contain);
    EXPECT_EQ(j.limits.cpu_s, 16);
    EXPECT_EQ(j.limits.memory_mb, 17);
    EXPECT_EQ(j.limits.file_mb, 18);
    EXPECT_EQ(j.limits.processes, 19);
    EXPECT_EQ(j.limits.open_files, 20);
    const cuset::DataCheckOptions check = cuset::data_check_options_from(cfg, cuset::DataCheckOptions{});
    EXPECT_EQ(check.max_seq_len, 300);
    EXPECT_TRUE(check.drop_too_long);  // its programs' containment is the judge's settings above

    cuset::eval::EvalRequest ecmd;
    ecmd.model = "ckpt";
    ecmd.samples = 2;
    const cuset::eval::EvalRequest e = cuset::eval_request_from(cfg, ecmd);
    EXPECT_EQ(e.model, "ckpt");
    EXPECT_EQ(e.samples, 2);
    EXPECT_EQ(e.run_dir, "out/r");
    EXPECT_EQ(e.gpu_name, "H200");
    EXPECT_EQ(e.progress, "always");
    EXPECT_EQ(e.generate.model, "m");
    EXPECT_EQ(e.generate.settings.max_new_tokens, 77);
    EXPECT_EQ(e.judge_settings.emulate_timeout_s, 15);

    cfg.distributed.backend = "gloo";
    cfg.distributed.timeout_s = 42;
    cfg.distributed.bucket_mb = 3.5;
    const cuset::ProcessGroupOptions pg = cuset::process_group_options_from(cfg);
    EXPECT_EQ(pg.backend, "gloo");
    EXPECT_EQ(pg.timeout_s, 42);
    EXPECT_EQ(pg.bucket_mb, 3.5);
}

// The GRPO speed-up reward: its weights and timing keys reach the rollout, and it is refused with
// any judge but the GPU's (an emulated or compile-only time says nothing about a GPU).
TEST(AppOptions, SpeedupRewardNeedsTheGpuJudge) {
    cuset::Config cfg;
    cfg.objective.method = "grpo";
    cfg.objective.grpo.tasks = "tasks.jsonl";
    cfg.objective.grpo.judge_while_sampling = false;
    EXPECT_FALSE(cuset::grpo_steps_options_from(cfg).rollout.judge_while_sampling);
    EXPECT_FALSE(cuset::grpo_steps_options_from(cfg).rollout.judge.runner.speedup.enabled) << "weight 0: no timing";
    EXPECT_EQ(cuset::grpo_steps_options_from(cfg).rollout.rewards.unjudged, cuset::judge::UnjudgedReward::kFail);
    cfg.objective.grpo.reward.unjudged = cuset::judge::UnjudgedReward::kSkip;
    EXPECT_EQ(cuset::grpo_steps_options_from(cfg).rollout.rewards.unjudged, cuset::judge::UnjudgedReward::kSkip);
    cfg.objective.grpo.reward.speedup = 0.5;
    cfg.objective.grpo.reward.speedup_cap = 4;
    cfg.objective.grpo.speedup_warmup = 2;
    cfg.objective.grpo.speedup_repeats = 7;
    for (const char* judge : {"compile", "emulate"}) {
        cfg.objective.grpo.judge = judge;
        std::string e;
        try {
            cuset::grpo_steps_options_from(cfg);
        } catch (const cuset::UsageError& u) {
            e = u.what();
        }
        EXPECT_NE(e.find("'objective.grpo.reward.speedup'"), std::string::npos) << e;
        EXPECT_NE(e.find(std::string("the judge is ") + judge), std::string::npos) << e;
    }
    cfg.objective.grpo.judge = "gpu";
    ::setenv("CUSET_ASSUME_GPU", "1", 1);  // the judge's documented stand-in for a GPU machine
    const cuset::rl::GrpoStepsOptions o = cuset::grpo_steps_options_from(cfg);
    ::unsetenv("CUSET_ASSUME_GPU");
    EXPECT_TRUE(o.rollout.judge.runner.speedup.enabled);
    EXPECT_EQ(o.rollout.judge.runner.speedup.warmup, 2);
    EXPECT_EQ(o.rollout.judge.runner.speedup.repeats, 7);
    EXPECT_EQ(o.rollout.rewards.speedup, 0.5);
    EXPECT_EQ(o.rollout.rewards.speedup_cap, 4);
}

// The loss keys reach GRPO's loss options under TRL's names: the loss type, two-sided clipping,
// the importance-sampling level and sapo's temperatures; their defaults are TRL's.
TEST(AppOptions, GrpoLossKeysReachTheLoss) {
    cuset::Config cfg;
    cfg.objective.method = "grpo";
    cfg.objective.grpo.tasks = "tasks.jsonl";
    const cuset::GrpoOptions d = cuset::grpo_steps_options_from(cfg).step.loss;
    EXPECT_EQ(d.loss_type, cuset::GrpoLossType::kDapo);
    EXPECT_FALSE(d.delta.has_value());
    EXPECT_EQ(d.importance_sampling, cuset::ImportanceSampling::kToken);
    EXPECT_EQ(d.sapo_temperature_pos, 1.0);
    EXPECT_EQ(d.sapo_temperature_neg, 1.05);
    cfg.objective.grpo.loss_type = "sapo";
    cfg.objective.grpo.delta = 1.5;
    cfg.objective.grpo.importance_sampling_level = "sequence";
    cfg.objective.grpo.sapo_temperature_pos = 0.5;
    cfg.objective.grpo.sapo_temperature_neg = 2.0;
    const cuset::GrpoOptions o = cuset::grpo_steps_options_from(cfg).step.loss;
    EXPECT_EQ(o.loss_type, cuset::GrpoLossType::kSapo);
    ASSERT_TRUE(o.delta.has_value());
    EXPECT_EQ(*o.delta, 1.5);
    EXPECT_EQ(o.importance_sampling, cuset::ImportanceSampling::kSequence);
    EXPECT_EQ(o.sapo_temperature_pos, 0.5);
    EXPECT_EQ(o.sapo_temperature_neg, 2.0);
    cfg.objective.grpo.importance_sampling_level = "tokens";
    EXPECT_THROW(cuset::grpo_steps_options_from(cfg), cuset::UsageError);
}
