// Task sets: self-checking pairs -> task records, and the check of a tasks file (databuild/task_set.h).
#include "cuset/databuild/task_set.h"
#include "cuset/databuild/module_tasks.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"

namespace fs = std::filesystem;

using nlohmann::ordered_json;

namespace cuset::databuild {

SftTasks tasks_from_sft(const std::string& path, const DataLoadOptions& load) {
    SftTasks out;
    for (const Conversation& c : data_load_jsonl(path, load)) {
        std::string prompt, response;
        for (const Message& m : c.messages) {
            if (m.role == "user") prompt = m.content;
            if (m.role == "assistant") response = m.content;
        }
        std::optional<std::string> code = eval::extract_code(response);
        if (prompt.empty() || !code || code->empty()) {
            ++out.skipped;
            out.skipped_why.push_back(path + ": sample " + c.id + ": " +
                                      (prompt.empty() ? "no user prompt" : "no fenced program in the response"));
            continue;
        }
        ordered_json t;
        t["id"] = c.id;
        t["task_name"] = c.id;
        t["task_description"] = prompt;
        t["inputs"] = ordered_json::array();
        t["outputs"] = ordered_json::array();
        t["gpu"] = "unknown";
        t["bench.cu"] = *code;
        t["gen.py"] = "";
        t["compare.py"] = "";
        for (const char* k : {"level1_prompt", "level2_prompt", "level3_prompt"}) t[k] = prompt;
        out.jsonl += t.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
        ++out.converted;
    }
    return out;
}

TaskCheck tasks_check(const std::vector<eval::Task>& tasks, const eval::JudgeOptions& opts) {
    TaskCheck r;
    r.tasks = static_cast<int64_t>(tasks.size());
    // A task without a reference solution (a PyTorch module's) is checked by running its gen.py
    // and judging its reference outputs with its compare.py.
    std::vector<eval::Task> judged, generated;
    for (const eval::Task& t : tasks) (t.bench_cu.empty() && !t.gen_py.empty() ? generated : judged).push_back(t);
    std::vector<std::pair<int64_t, TaskProblem>> problems;
    if (!judged.empty()) {
        const eval::JudgeSummary s = eval::judge_results(judged, eval::reference_records(judged), opts);
        r.notice = s.notice;
        const judge::Status pass =
            opts.runner.mode == judge::JudgeMode::kCompile ? judge::Status::kCompiled : judge::Status::kPass;
        for (size_t i = 0; i < s.tasks.size(); ++i) {
            const eval::SampleResult& v = s.tasks[i].samples.at(0);
            if (v.status == pass) {
                ++r.passed;
                continue;
            }
            problems.push_back({judged[i].line, {judged[i].file + ":" + std::to_string(judged[i].line), judged[i].id_text,
                                                 judge::status_name(v.status), v.error}});
        }
    }
    if (!generated.empty()) {
        if (opts.runner.python.executable.empty())
            throw UsageError("data tasks --check: tasks without a reference solution need a Python for their gen.py");
        judge::Runner runner(opts.runner);
        for (size_t i = 0; i < generated.size(); ++i) {
            const eval::Task& t = generated[i];
            std::vector<std::string> outputs;
            for (const eval::TensorSpec& o : t.outputs) outputs.push_back(o.name);
            const judge::Verdict g =
                runner.judge_files(eval::checked_task_of(t), reference_outputs_of(outputs), "gen-" + std::to_string(i));
            r.generated += 1;
            if (opts.on_progress)
                opts.on_progress(static_cast<int64_t>(judged.size() + i + 1), static_cast<int64_t>(tasks.size()));
            if (g.status == judge::Status::kPass) {
                ++r.passed;
                continue;
            }
            problems.push_back({t.line, {t.file + ":" + std::to_string(t.line), t.id_text, judge::status_name(g.status), g.error}});
        }
    }
    std::stable_sort(problems.begin(), problems.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& p : problems) r.problems.push_back(std::move(p.second));
    return r;
}

}  // namespace cuset::databuild
