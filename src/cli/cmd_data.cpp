// `cuset-train data check FILE`, `data show` and `data build`: validating a JSONL data file,
// showing one sample as the trainer sees it, and building verified training data from tasks
// (the work is in data_check.cpp, data_show.cpp and databuild/build_run.cpp).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "cuset/app/options.h"
#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/file_tree.h"
#include "cuset/core/hash.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/core/signals.h"
#include "cuset/core/utf8_text.h"
#include "cuset/data/data_check.h"
#include "cuset/data/data_show.h"
#include "cuset/databuild/build_run.h"
#include "cuset/databuild/kernelbench_tasks.h"
#include "cuset/databuild/module_tasks.h"
#include "cuset/databuild/program_check.h"
#include "cuset/databuild/task_set.h"
#include "cuset/eval/cudabench.h"
#include "cuset/eval/eval_run.h"
#include "cuset/model/lora.h"

namespace cuset::cli {

namespace {

struct BuildCli {
    ConfigCli cfg;
    std::string tasks, out, candidates, model, against, python;
    std::string judge = "auto", keep = "first", format = "prompt";
    int64_t samples = 1, rounds = 1, limit = 0, jobs = 0;
    int level = 1;
    std::vector<std::string> task_ids;
    bool keep_work = false;
};

// What decides a model's answers: the weights, the adapter, the chat format and the sampling keys.
std::string model_source_key(const Config& cfg, const std::string& model) {
    const GenerateSettings& g = cfg.generate;
    const SamplingOptions& s = g.sampling;
    const std::string path = model.empty() ? cfg.model.path : model;
    // A served model is known by its server and name (its weights are not on this machine).
    const std::string who = g.backend == "openai" ? "served " + g.server.url + " " + g.server.model
                                                  : hash_model_with_adapter(path, cfg.model.lora.path);
    return "model " + who +
           strprintf(" format %s temperature %.17g top_k %lld top_p %.17g min_p %.17g repetition %.17g seed %lld "
                     "max_new_tokens %lld thinking %d stop ",
                     cfg.data.chat_format.c_str(), s.temperature, static_cast<long long>(s.top_k), s.top_p, s.min_p,
                     s.repetition_penalty, static_cast<long long>(g.seed), static_cast<long long>(g.max_new_tokens),
                     g.thinking ? 1 : 0) +
           g.stop + " system " + cfg.data.system_prompt;
}

int run_build(const BuildCli& b) {
    if (!b.candidates.empty() && !b.model.empty())
        throw UsageError("data build: --candidates and --model exclude each other (answers come from one source)");
    ConfigCli c = b.cfg;
    if (!b.python.empty()) c.sets.push_back("eval.python=" + b.python);
    const Config cfg = load_config(c);
    const std::vector<eval::Task> all = eval::load_tasks(b.tasks);
    const std::vector<eval::Task> tasks = eval::select_tasks(all, b.task_ids, b.limit);
    std::string how;
    const judge::JudgeMode mode = eval::resolve_judge(b.judge, &how);

    databuild::BuildOptions o;
    o.tasks_file = b.tasks;
    o.candidates_file = b.candidates;
    o.out = b.out;
    o.samples = b.samples;
    o.rounds = b.rounds;
    o.level = b.level;
    o.gpu_name = cfg.eval.gpu_name;
    o.keep = databuild::keep_policy_parse(b.keep);
    o.format = databuild::train_format_parse(b.format);
    o.against = b.against.empty() ? cfg.data.against : b.against;
    o.progress_bar = progress_bar_wanted(cfg.log.progress);
    o.judge = judge_options_from(cfg, mode, (std::filesystem::path(b.out) / "work").string(), b.keep_work);
    if (b.jobs > 0) o.judge.jobs = static_cast<int>(b.jobs);
    const TextOptions text = text_options_from(cfg, b.model);
    const TextPipeline pipe = text_pipeline_from(text);
    o.tokenizer = pipe.tokenizer.get();

    databuild::build_output_check(o);  // before any source reads or writes a file

    std::unique_ptr<databuild::CandidateSource> source;
    if (!b.candidates.empty()) {
        source = std::make_unique<databuild::FileCandidates>(b.candidates, all);
        o.source_key = "candidates " + hash_file(b.candidates);
    } else {
        GenerateRequest g;
        g.model = b.model;
        source = std::make_unique<databuild::ModelCandidates>(generate_request_from(cfg, g), text, runtime_from(cfg),
                                                              (std::filesystem::path(b.out) / "generations.jsonl").string());
        o.source_key = model_source_key(cfg, b.model);
    }
    if (mode != judge::JudgeMode::kCompile)
        log_info("data build: gen.py and compare.py run with %s (%s)", o.judge.runner.python.executable.c_str(),
                 o.judge.runner.python.origin.c_str());
    const databuild::BuildSummary s = databuild::build_run(tasks, *source, o);
    std::printf("data build [%s]: %lld task(s), %lld attempt(s); tasks passed after each round:", s.judge_label.c_str(),
                static_cast<long long>(s.tasks), static_cast<long long>(s.attempts));
    for (const databuild::RoundFigures& f : s.rounds)
        std::printf(" %lld", static_cast<long long>(f.tasks_passed));
    std::printf("; %lld sample(s) kept in %s/train.jsonl\n", static_cast<long long>(s.kept), b.out.c_str());
    std::fflush(stdout);
    return 0;
}

struct TasksCli {
    ConfigCli cfg;
    std::string file, from_sft, from_modules, from_kernelbench, out, judge = "auto", python;
    std::string prompt_option, precision;  // --from-kernelbench's; "" = not given
    std::vector<int> levels;
    bool check = false;
    int64_t jobs = 0;
};

// --from-kernelbench's options from the command line (KernelBench's defaults: one_shot, fp32).
databuild::KernelBenchOptions kernelbench_options_from(const TasksCli& t) {
    databuild::KernelBenchOptions o;
    if (!t.prompt_option.empty()) o.option = *databuild::kernelbench_option_named(t.prompt_option);
    if (!t.precision.empty()) o.precision = *databuild::kernelbench_precision_named(t.precision);
    o.levels = t.levels;
    return o;
}

// A tasks file is written only when `data tasks FILE` would accept it (every record a task, no
// duplicate id, no line over the record limit): InputError naming the line, and nothing written.
void check_tasks_before_writing(const std::string& jsonl, const std::string& out) {
    try {
        eval::parse_tasks(jsonl, out);
    } catch (const InputError& e) {
        throw InputError(std::string("data tasks: the tasks made would not load (") + e.what() + "); " + out +
                         " not written");
    }
}

// SIGINT/SIGTERM during `data tasks`: the judge's commands are killed, its work folder removed,
// and the command ends with 75 (run it again: it keeps no partial state).
StopSignalOptions tasks_stop_signals() {
    StopSignalOptions o;
    o.first_message = "cuset-train: stopping data tasks (the judge's commands are killed)\n";
    o.second_exits = false;  // the work folder is removed on the way out
    return o;
}

StoppedBySignal tasks_stopped(const std::string& what) {
    return StoppedBySignal(strprintf("data tasks: stopped by signal %d; %s; run the command again", signals_received(),
                                     what.c_str()));
}

int run_tasks(const TasksCli& t) {
    ConfigCli c = t.cfg;
    if (!t.python.empty()) c.sets.push_back("eval.python=" + t.python);
    const Config cfg = load_config(c);
    std::string tasks_file = t.file;
    if (!t.from_sft.empty() && !t.from_modules.empty())
        throw UsageError("data tasks: give either --from-sft or --from-modules, not both");
    if (!t.from_kernelbench.empty() && (!t.from_sft.empty() || !t.from_modules.empty()))
        throw UsageError("data tasks: give either --from-kernelbench or --from-sft/--from-modules, not both");
    if (t.from_kernelbench.empty() && (!t.prompt_option.empty() || !t.precision.empty() || !t.levels.empty()))
        throw UsageError("data tasks: --levels, --prompt-option and --precision are for --from-kernelbench");
    if (!t.from_kernelbench.empty() && t.check)
        throw UsageError("data tasks: --check does not apply to --from-kernelbench (its tasks have no reference program "
                         "to judge)");
    const std::string from = !t.from_kernelbench.empty() ? t.from_kernelbench : t.from_sft.empty() ? t.from_modules : t.from_sft;
    const char* from_flag = !t.from_kernelbench.empty() ? "--from-kernelbench"
                            : t.from_sft.empty()        ? "--from-modules"
                                                        : "--from-sft";
    if (!from.empty()) {
        if (t.out.empty()) throw UsageError(std::string("data tasks: ") + from_flag + " needs --out TASKS.jsonl");
        if (!t.file.empty()) throw UsageError(std::string("data tasks: give either a tasks FILE or ") + from_flag + ", not both");
        refuse_output_equal_to_input(t.out, {from}, "data tasks");
    }
    if (!t.from_sft.empty()) {
        const databuild::SftTasks s = databuild::tasks_from_sft(t.from_sft, data_load_options_from(cfg));
        for (const std::string& why : s.skipped_why) log_warn("data tasks: skipped %s", why.c_str());
        if (s.converted == 0) throw InputError(t.from_sft + ": no sample with a fenced program to make a task of");
        check_tasks_before_writing(s.jsonl, t.out);
        atomic_write(t.out, s.jsonl, "tasks file");
        log_info("data tasks: %lld task(s) from %s -> %s (%lld sample(s) skipped)", static_cast<long long>(s.converted),
                 t.from_sft.c_str(), t.out.c_str(), static_cast<long long>(s.skipped));
        tasks_file = t.out;
    } else if (!t.from_modules.empty()) {
        // Every module's gen.py runs once, contained by the judge's runner, whatever --judge says.
        const std::string work =
            atomic_temp_name((std::filesystem::temp_directory_path() / "cuset-data-tasks").string(), "modules");
        eval::JudgeOptions o = judge_options_from(cfg, judge::JudgeMode::kCompile, work, /*keep_work=*/false);
        o.runner.python = judge::find_python(judge_settings_from(cfg).python, "eval.python");
        eval::judge_work_dir_create(work, "data tasks");
        const RemoveTreeGuard remove_work(work);
        log_info("data tasks: each module's gen.py runs with %s (%s)", o.runner.python.executable.c_str(),
                 o.runner.python.origin.c_str());
        judge::Runner runner(o.runner);
        const StopSignalScope stop(tasks_stop_signals());
        const databuild::ModuleTasks m =
            databuild::tasks_from_modules(t.from_modules, runner, t.jobs > 0 ? static_cast<int>(t.jobs) : o.jobs);
        if (signals_stop_requested()) throw tasks_stopped(t.out + " not written");
        for (const std::string& p : m.problems) std::fprintf(stderr, "%s\n", utf8_visible(p).c_str());
        if (!m.problems.empty())
            throw InputError(t.from_modules + ": " + std::to_string(m.problems.size()) + " module(s) cannot be made into " +
                             "tasks (listed above); " + t.out + " not written");
        check_tasks_before_writing(m.jsonl, t.out);
        atomic_write(t.out, m.jsonl, "tasks file");
        log_info("data tasks: %lld task(s) from %s -> %s", static_cast<long long>(m.converted), t.from_modules.c_str(),
                 t.out.c_str());
        tasks_file = t.out;
    } else if (!t.from_kernelbench.empty()) {
        const databuild::KernelBenchTasks k = databuild::tasks_from_kernelbench(t.from_kernelbench, kernelbench_options_from(t));
        for (const std::string& p : k.problems) std::fprintf(stderr, "%s\n", utf8_visible(p).c_str());
        if (!k.problems.empty())
            throw InputError(t.from_kernelbench + ": " + std::to_string(k.problems.size()) + " problem(s) cannot be made into " +
                             "tasks (listed above); " + t.out + " not written");
        check_tasks_before_writing(k.jsonl, t.out);
        atomic_write(t.out, k.jsonl, "tasks file");
        log_info("data tasks: %lld KernelBench task(s) from %s -> %s", static_cast<long long>(k.converted),
                 t.from_kernelbench.c_str(), t.out.c_str());
        tasks_file = t.out;
    } else if (t.file.empty()) {
        throw UsageError("data tasks: give a tasks FILE to check, or --from-sft FILE / --from-modules PATH / "
                         "--from-kernelbench DIR with --out TASKS.jsonl");
    } else if (!t.out.empty()) {
        throw UsageError("data tasks: --out is for --from-sft, --from-modules and --from-kernelbench");
    }
    const std::vector<eval::Task> tasks = eval::load_tasks(tasks_file);  // every record well formed, or one line
    if (!t.check) {
        if (!from.empty()) return 0;
        std::printf("%s: %zu task(s), well formed (--check judges their reference solutions)\n", tasks_file.c_str(),
                    tasks.size());
        return 0;
    }
    std::string how;
    const judge::JudgeMode mode = eval::resolve_judge(t.judge, &how);
    const std::string work = atomic_temp_name((std::filesystem::temp_directory_path() / "cuset-data-tasks").string(), "work");
    eval::JudgeOptions o = judge_options_from(cfg, mode, work, /*keep_work=*/false);
    if (t.jobs > 0) o.jobs = static_cast<int>(t.jobs);
    if (o.runner.python.executable.empty())  // a compile-only judge still runs the gen.py of tasks without a reference
        for (const eval::Task& task : tasks)
            if (task.bench_cu.empty() && !task.gen_py.empty()) {
                o.runner.python = judge::find_python(judge_settings_from(cfg).python, "eval.python");
                break;
            }
    eval::judge_work_dir_create(work, "data tasks");
    const RemoveTreeGuard remove_work(work);
    Progress progress("check", static_cast<int64_t>(tasks.size()), "tasks", progress_bar_wanted(cfg.log.progress));
    o.on_progress = [&](int64_t done, int64_t) { progress.update(done); };
    const StopSignalScope stop(tasks_stop_signals());
    databuild::TaskCheck r;
    try {
        r = databuild::tasks_check(tasks, o);
    } catch (const StoppedBySignal&) {
        throw tasks_stopped("no verdict written");
    }
    if (signals_stop_requested()) throw tasks_stopped("no verdict written");
    progress.finish();
    if (!r.notice.empty()) log_warn("data tasks: %s", r.notice.c_str());
    for (const databuild::TaskProblem& p : r.problems)
        std::printf("%s\n", utf8_visible(p.where + ": task " + p.id + ": reference " + p.status +
                                          (p.error.empty() ? "" : ": " + quote_bounded(p.error)))
                                 .c_str());
    std::printf("%s [%s]: %lld of %lld reference solution(s) pass", tasks_file.c_str(), judge::judge_label(mode),
                static_cast<long long>(r.passed), static_cast<long long>(r.tasks));
    if (r.generated > 0)
        std::printf(" (%lld task(s) without one: checked by their gen.py and by their compare.py on the reference outputs)", static_cast<long long>(r.generated));
    std::printf("\n");
    std::fflush(stdout);
    return r.problems.empty() ? 0 : static_cast<int>(ExitCode::kBadInput);
}

// `data check`: its programs go through the judge's runner, contained as eval.sandbox.* says.
int run_check(const Config& cfg, const DataCheckOptions& c, databuild::ProgramCheckOptions pc) {
    DataCheckOptions o = data_check_options_from(cfg, c);
    const eval::JudgeSettings js = judge_settings_from(cfg);
    pc.run = o.run;
    pc.progress_bar = progress_bar_wanted(o.progress);
    pc.contain = js.contain;
    pc.limits = js.limits;
    databuild::JudgeProgramChecker programs(pc);
    o.programs = &programs;
    return data_check(o, text_options_from(cfg)).rejected > 0 ? static_cast<int>(ExitCode::kBadInput) : 0;
}

}  // namespace

Command add_data_command(CLI::App& root) {
    CLI::App* data = root.add_subcommand("data", "check a JSONL data file, show a sample as the trainer sees it, or build verified data from tasks");
    data->require_subcommand(1);

    auto c = std::make_shared<DataCheckOptions>();
    auto pc = std::make_shared<databuild::ProgramCheckOptions>();
    auto check_level = std::make_shared<std::string>("info");
    CLI::App* check = data->add_subcommand(
        "check", "validate FILE sample by sample (schema, UTF-8, empty fields, duplicates, token lengths, "
                 "tagger coverage; --compile/--run the CUDA programs); exit 3 when a sample is rejected");
    check->add_option("FILE", c->input, "JSONL data file (never modified)")->required();
    check->add_flag("--compile", c->compile, "compile each sample's ```cuda program with nvcc");
    check->add_flag("--run", c->run, "build and run each program on the GPU (exit code 0 = pass); implies --compile");
    check->add_option("--jobs,-j", pc->jobs, "parallel nvcc/program processes (default: number of cores)")
        ->check(non_negative_integer());
    check->add_option("--timeout", pc->timeout_s, "seconds per compile and per run before the process group is killed")
        ->capture_default_str();
    check->add_option("--against", c->against,
                      "benchmark tasks (JSONL, e.g. CUDABench-Set.jsonl): reject samples that share a long n-gram with one");
    check->add_option("--ngram", c->ngram, "tokens per shared span for --against")->check(CLI::Range(8, 100000))
        ->capture_default_str();
    check->add_option("--out", c->out, "write the kept samples (byte for byte) to this JSONL file");
    check->add_option("--report", c->report, "write the per-sample JSON report to this file");
    check->add_option("--config,-c", c->config, "configuration for the tokenizer, chat format and data.* keys");
    check->add_option("--tokenizer", c->tokenizer, "tokenizer folder or file (overrides the configuration's)");
    check->add_option("--nvcc", pc->nvcc, "nvcc to use (default: PATH, then /usr/local/cuda/bin/nvcc)");
    check->add_option("--nvcc-flags", pc->nvcc_flags, "flags for nvcc")->capture_default_str();
    check->add_option("--progress", c->progress, "progress bar: auto, always or never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    check->add_option("--log-level", *check_level, "trace, debug, info, warn or error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

    auto s = std::make_shared<DataShowOptions>();
    auto show_config = std::make_shared<std::string>();
    auto sets = std::make_shared<std::vector<std::string>>();
    CLI::App* show = data->add_subcommand(
        "show", "print one sample as the trainer sees it: tokens by role, trainable and sensitive marks, counts");
    show->add_option("--config,-c", *show_config, "YAML configuration (data.train/eval, tokenizer, chat format)")->required();
    show->add_option("--set", *sets, "override one key: --set data.chat_format=chatml (repeatable)")
        ->type_name("KEY=VALUE");
    show->add_option("--index,-i", s->index, "sample index in the file (0-based)")->capture_default_str();
    show->add_option("--split", s->split, "train or eval")->check(CLI::IsMember({"train", "eval"}))
        ->capture_default_str();
    show->add_option("--color", s->color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
    show->add_flag("--tokens", s->tokens, "also list every token: index, id, role, trainable, sensitive, piece");

    auto bo = std::make_shared<BuildCli>();
    CLI::App* build = data->add_subcommand(
        "build", "verified training data from tasks: K candidates per task (a model, or --candidates FILE), each judged, "
                 "failures repaired with the judge's finding for up to R rounds, the passing ones kept");
    add_config_options(build, bo->cfg);
    build->add_option("--tasks", bo->tasks, "tasks file in CUDABench's format (JSONL)")->required();
    build->add_option("--out", bo->out, "output folder: train.jsonl, build.jsonl, build.json, build.html")->required();
    build->add_option("--samples", bo->samples, "candidates per task, K")->check(CLI::Range(1, 65536))->capture_default_str();
    build->add_option("--rounds", bo->rounds, "attempts per candidate at most: 1 + the repair turns")
        ->check(CLI::Range(1, 64))->capture_default_str();
    build->add_option("--judge", bo->judge, "gpu | emulate | compile (default: gpu where one is present, else compile)")
        ->check(CLI::IsMember({"auto", "gpu", "emulate", "compile"}));
    build->add_option("--candidates", bo->candidates,
                      "answers from this file ({\"id\", \"sample\", \"round\", \"response\"} lines, or CUDABench's "
                      "results format) instead of a model");
    build->add_option("--model", bo->model, "model folder to generate with (default: model.path)");
    build->add_option("--jobs,-j", bo->jobs, "programs judged at once (default: eval.jobs)")->check(non_negative_integer());
    build->add_option("--keep", bo->keep, "which passing candidates to keep: first, shortest, fastest (GPU) or distinct")
        ->check(CLI::IsMember({"first", "shortest", "fastest", "distinct"}))->capture_default_str();
    build->add_option("--format", bo->format, "train.jsonl as prompt/response pairs, or whole repair conversations (messages)")
        ->check(CLI::IsMember({"prompt", "messages"}))->capture_default_str();
    build->add_option("--level", bo->level, "CUDABench description level of the prompts, 1 (most detailed) to 3")
        ->check(CLI::Range(1, 3))->capture_default_str();
    build->add_option("--against", bo->against, "evaluation set (JSONL): drop kept samples sharing a long n-gram with it "
                                                "(default: data.against)");
    build->add_option("--limit", bo->limit, "the first N selected tasks only")->check(non_negative_integer());
    build->add_option("--task-ids", bo->task_ids, "only these task ids")->delimiter(',');
    build->add_option("--python", bo->python, "Python for gen.py and compare.py (eval.python)");
    build->add_flag("--keep-work", bo->keep_work, "keep every program's work folder under OUT/work");

    auto to = std::make_shared<TasksCli>();
    CLI::App* tasks = data->add_subcommand(
        "tasks", "task files in CUDABench's format: make one from self-checking prompt/response pairs (--from-sft), "
                 "PyTorch modules (--from-modules) or a KernelBench checkout (--from-kernelbench), "
                 "check one (every record; --check: every reference solution passes the judge); exit 3 on a bad task");
    add_config_options(tasks, to->cfg);
    tasks->add_option("FILE", to->file, "tasks file (JSONL) to check");
    tasks->add_option("--from-sft", to->from_sft,
                      "prompt/response JSONL whose responses hold self-checking programs (data/cuda-sft)");
    tasks->add_option("--from-modules", to->from_modules,
                      "a KernelBench-style PyTorch module (.py: class Model, get_inputs, get_init_inputs) or a folder of "
                      "them: each becomes a task whose gen.py runs the module on seeded inputs");
    tasks->add_option("--from-kernelbench", to->from_kernelbench,
                      "a KernelBench checkout (or its KernelBench folder): each problem of level1 .. level4 becomes a "
                      "task with the prompt KernelBench's own builder makes");
    tasks->add_option("--levels", to->levels, "--from-kernelbench: only these levels (default: every level folder)")
        ->delimiter(',')->check(CLI::Range(1, 4));
    tasks->add_option("--prompt-option", to->prompt_option,
                      "--from-kernelbench: KernelBench's prompt option, one_shot (its default) or zero_shot")
        ->check(CLI::IsMember({"one_shot", "zero_shot"}));
    tasks->add_option("--precision", to->precision,
                      "--from-kernelbench: KernelBench's precision, fp32 (its default), fp16 or bf16 (the prompt's note "
                      "and the tolerance)")
        ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
    tasks->add_option("--out", to->out, "the tasks file --from-sft, --from-modules or --from-kernelbench writes");
    tasks->add_flag("--check", to->check, "judge every task's reference solution (gen.py, the program, compare.py)");
    tasks->add_option("--judge", to->judge, "gpu | emulate | compile (default: gpu where one is present, else compile)")
        ->check(CLI::IsMember({"auto", "gpu", "emulate", "compile"}));
    tasks->add_option("--jobs,-j", to->jobs, "programs judged (and --from-modules gen.py run) at once (default: eval.jobs)")
        ->check(non_negative_integer());
    tasks->add_option("--python", to->python, "Python for gen.py and compare.py (eval.python)");

    return {data, [=] {
                if (build->parsed()) return run_build(*bo);
                if (tasks->parsed()) return run_tasks(*to);
                if (check->parsed()) {
                    log_init(*check_level);
                    std::vector<Override> overrides;  // --tokenizer names model.tokenizer
                    if (!c->tokenizer.empty()) overrides.push_back({"model.tokenizer", c->tokenizer});
                    const Config cfg = config_load(c->config, overrides);
                    return run_check(cfg, *c, *pc);
                }
                log_init("info");
                std::vector<Override> overrides;
                for (const std::string& a : *sets) overrides.push_back(override_parse(a));
                const Config cfg = config_load(*show_config, overrides);
                data_show(text_options_from(cfg), data_show_options_from(cfg, *s), std::cout);
                return 0;
            }};
}

}  // namespace cuset::cli
