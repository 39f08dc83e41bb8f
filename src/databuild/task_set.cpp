// Task sets: self-checking pairs -> task records, and the check of a tasks file (databuild/task_set.h).
#include "cuset/databuild/task_set.h"

#include <filesystem>

#include <nlohmann/json.hpp>

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
    const eval::JudgeSummary s = eval::judge_results(tasks, eval::reference_records(tasks), opts);
    r.notice = s.notice;
    const judge::Status pass =
        opts.runner.mode == judge::JudgeMode::kCompile ? judge::Status::kCompiled : judge::Status::kPass;
    for (size_t i = 0; i < s.tasks.size(); ++i) {
        const eval::SampleResult& v = s.tasks[i].samples.at(0);
        if (v.status == pass) {
            ++r.passed;
            continue;
        }
        r.problems.push_back({tasks[i].file + ":" + std::to_string(tasks[i].line), tasks[i].id_text,
                              judge::status_name(v.status), v.error});
    }
    return r;
}

}  // namespace cuset::databuild
