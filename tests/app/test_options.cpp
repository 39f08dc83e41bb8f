// The application layer's typed options (app/options.h): every key of a configuration lands in
// the library option it belongs to, and a command's --model stands for model.path in the
// tokenizer's place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuset/app/options.h"
#include "cuset/core/config.h"
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
    cfg.objective.confidence_source = "cached";
    cfg.objective.mask_confidence = false;
    cfg.objective.mask_sensitivity = false;
    cfg.objective.drop_weight = 0.25;
    cfg.objective.threshold_mode = "batch_quantile";
    cfg.objective.threshold_q = 0.3;
    cfg.objective.threshold_value = 0.6;
    cfg.objective.region_enabled = false;
    cfg.objective.region_window = 64;
    cfg.objective.region_alpha = 2.0;
    cfg.objective.focal_gamma = 3.0;
    cfg.objective.chunk_size = 0;
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
    cfg.objective.eaft_alpha = 0.5;
    cfg.objective.eaft_k = 7;
    cfg.objective.asft_alpha = 0.25;
    cfg.objective.rho1_keep_fraction = 0.3;
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
    cfg.data.skip_invalid = true;
    cfg.data.invalid_utf8 = "replace";
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
