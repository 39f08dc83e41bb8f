// The answers of a build: a candidates file, or a model through generate_run (databuild/candidates.h).
#include "cuset/core/json_io.h"
#include "cuset/databuild/candidates.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/journal.h"
#include "cuset/core/log.h"
#include "cuset/databuild/attempt_log.h"
#include "cuset/generate/generate_run.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cuset::databuild {

std::string AttemptKey::name() const {
    return task + "/s" + std::to_string(sample) + "/r" + std::to_string(round);
}

namespace {

std::string id_text_of(const json& id) { return id.is_string() ? id.get<std::string>() : id.dump(); }

int64_t positive_int(const json& rec, const char* key, const std::string& at) {
    if (!rec.contains(key)) return 1;
    const json& v = rec[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 1)
        throw InputError(at + ": \"" + key + "\" must be an integer >= 1, got " + quote_bounded(v.dump()));
    return v.get<int64_t>();
}

}  // namespace

FileCandidates::FileCandidates(const std::string& path, const std::vector<eval::Task>& tasks) : path_(path) {
    std::set<std::string> ids;
    for (const eval::Task& t : tasks) ids.insert(t.id_text);
    // A regular file only (a FIFO or a device is refused before it is read), each line at most
    // kMaxRecordBytes.
    LineReader in(path, "candidates file");
    std::string text;
    int64_t line = 0;
    auto add = [&](AttemptKey k, std::string response, const std::string& at) {
        if (!answers_.emplace(k, std::move(response)).second)
            throw InputError(at + ": a second answer for task " + k.task + ", sample " + std::to_string(k.sample) +
                             ", round " + std::to_string(k.round));
    };
    while (in.next(text)) {
        line = in.line_no();
        if (!text.empty() && text.back() == '\r') text.pop_back();
        if (text.find_first_not_of(" \t") == std::string::npos) continue;
        const std::string at = path + ":" + std::to_string(line);
        json rec;
        try {
            rec = json_parse(text, at);
        } catch (const InputError&) {
            throw;
        } catch (const std::exception& e) {
            throw InputError(at + ": not valid JSON (" + quote_bounded(e.what()) + ")");
        }
        if (!rec.is_object()) throw InputError(at + ": a candidate must be a JSON object");
        if (!rec.contains("id") || !(rec["id"].is_string() || rec["id"].is_number_integer()))
            throw InputError(at + ": a candidate needs an \"id\" (the task's id, an integer or a string)");
        AttemptKey k;
        k.task = id_text_of(rec["id"]);
        if (!ids.count(k.task)) throw InputError(at + ": id " + k.task + " is not a task of the tasks file");
        if (rec.contains("response")) {
            if (!rec["response"].is_string()) throw InputError(at + ": \"response\" must be a string");
            k.sample = positive_int(rec, "sample", at);
            k.round = positive_int(rec, "round", at);
            add(k, rec["response"].get<std::string>(), at);
            continue;
        }
        if (!rec.contains("response1") && !rec.contains("code1"))
            throw InputError(at + ": a candidate needs \"response\" (or CUDABench's response1, code1, ...)");
        for (int64_t i = 1;; ++i) {  // CUDABench's results format: sample i of round 1
            const std::string r = "response" + std::to_string(i), c = "code" + std::to_string(i);
            if (!rec.contains(r) && !rec.contains(c)) break;
            k.sample = i;
            if (rec.contains(r) && rec[r].is_string()) add(k, rec[r].get<std::string>(), at);
            else if (rec.contains(c) && rec[c].is_string()) add(k, "```cuda\n" + rec[c].get<std::string>() + "\n```", at);
            else if (!(rec.contains(r) && rec[r].is_null()) && !(rec.contains(c) && rec[c].is_null()))
                throw InputError(at + ": \"" + r + "\" must be a string or null");
        }
    }
}

std::vector<Answer> FileCandidates::answer(const std::vector<Request>& requests) {
    std::vector<Answer> out;
    out.reserve(requests.size());
    for (const Request& r : requests) {
        Answer a;
        auto it = answers_.find(r.key);
        if (it != answers_.end()) a.response = it->second;
        out.push_back(std::move(a));
    }
    return out;
}

ModelCandidates::ModelCandidates(GenerateRequest generate, TextOptions text, Runtime runtime, std::string cache)
    : generate_(std::move(generate)), text_(std::move(text)), runtime_(runtime), cache_(std::move(cache)) {
    generate_.settings.n = 1;
    for (const std::string& line : read_journal(cache_, "generation cache")) {
        if (line.empty()) continue;
        json j = json_depth_problem(line).empty() ? json::parse(line, nullptr, /*allow_exceptions=*/false) : json();
        if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("response") ||
            !j["response"].is_string())
            continue;
        const bool counted = j.contains("generated_tokens") && j["generated_tokens"].is_number_integer();
        if (j.contains("generated_tokens") && !counted) continue;  // a hand edit: generated again
        cached_[j["id"].get<std::string>()] = {j["response"].get<std::string>(),
                                               counted ? j["generated_tokens"].get<int64_t>() : int64_t{-1}};
    }
}

std::string ModelCandidates::describe() const {
    const GenerateSettings& g = generate_.settings;
    if (g.backend == "openai") return "served model " + g.server.model + " at " + g.server.url;
    return "model " + generate_.model;
}

std::vector<Answer> ModelCandidates::answer(const std::vector<Request>& requests) {
    std::vector<const Request*> missing;
    for (const Request& r : requests)
        if (!cached_.count(r.key.name())) missing.push_back(&r);
    if (!missing.empty()) {
        // One prompt per request (its id seeds its stream), generated in one call.
        const fs::path dir = fs::path(cache_).parent_path();
        const std::string prompts = (dir / "generate-prompts.jsonl").string();
        const std::string outputs = (dir / "generate-out.jsonl").string();
        std::string lines;
        for (const Request* r : missing) lines += prompt_record_line(r->key.name(), r->conversation) + "\n";
        atomic_write(prompts, lines, "generation prompts");
        GenerateRequest g = generate_;
        g.prompts = prompts;
        g.out = outputs;
        generate_run(g, text_, runtime_);
        std::ifstream in(outputs, std::ios::binary);
        std::string line;
        std::vector<std::string> append;
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            json j = json_parse(line, outputs, ExitCode::kRuntime);  // generate's own output
            json c;
            c["id"] = j["id"];
            c["response"] = j["response"];
            c["generated_tokens"] = j["generated_tokens"];
            append.push_back(c.dump(-1, ' ', false, json::error_handler_t::replace));
            cached_[j["id"].get<std::string>()] = {j["response"].get<std::string>(), j["generated_tokens"].get<int64_t>()};
        }
        // Appended and synced as one batch: a restart reuses the whole round's answers.
        JournalWriter(cache_, "generation cache").append_lines(append);
        std::error_code ec;
        fs::remove(prompts, ec);
        fs::remove(outputs, ec);
    }
    std::vector<Answer> out;
    for (const Request& r : requests) {  // a prompt generate skipped (generate.skip_invalid) has no answer
        auto it = cached_.find(r.key.name());
        out.push_back(it == cached_.end() ? Answer{} : it->second);
    }
    return out;
}

}  // namespace cuset::databuild
