// OUT/build.jsonl: appended and synced per attempt (a core/journal.h journal), read back on restart (databuild/attempt_log.h).
#include "cuset/core/json_io.h"
#include "cuset/databuild/attempt_log.h"

#include "cuset/core/error.h"

namespace cuset::databuild {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json attempt_json(const AttemptRecord& a) {
    ordered_json j;
    j["task"] = a.key.task;
    j["sample"] = a.key.sample;
    j["round"] = a.key.round;
    j["status"] = a.status;
    j["error"] = a.error;
    j["tokens"] = a.tokens;
    j["seconds"] = a.seconds;
    j["run_seconds"] = a.run_seconds < 0 ? ordered_json() : ordered_json(a.run_seconds);
    j["emulated"] = a.emulated;
    j["response"] = a.response;
    return j;
}

AttemptRecord attempt_from_json(const json& j, const std::string& where) {
    try {
        AttemptRecord a;
        a.key.task = j.at("task").get<std::string>();
        a.key.sample = j.at("sample").get<int64_t>();
        a.key.round = j.at("round").get<int64_t>();
        a.status = j.at("status").get<std::string>();
        a.error = j.at("error").get<std::string>();
        a.tokens = j.at("tokens").get<int64_t>();
        a.seconds = j.at("seconds").get<double>();
        a.run_seconds = j.at("run_seconds").is_null() ? -1 : j.at("run_seconds").get<double>();
        a.emulated = j.at("emulated").get<bool>();
        a.response = j.at("response").get<std::string>();
        return a;
    } catch (const json::exception& e) {
        throw InputError(where + ": not an attempt of a build (" + quote_bounded(e.what()) +
                         "); move the output folder away to start afresh");
    }
}

AttemptLog::AttemptLog(std::string path) : path_(std::move(path)) {
    int64_t n = 0;
    for (const std::string& line : read_journal(path_, "build log")) {
        ++n;
        if (line.empty()) continue;
        const std::string where = path_ + ":" + std::to_string(n);
        json j = json_parse(line, where);
        AttemptRecord a = attempt_from_json(j, where);
        records_[a.key] = std::move(a);
    }
    resumed_ = static_cast<int64_t>(records_.size());
    writer_ = std::make_unique<JournalWriter>(path_, "build log");
}

AttemptLog::~AttemptLog() = default;

void AttemptLog::append(const AttemptRecord& a) {
    const std::string line = attempt_json(a).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
    std::lock_guard<std::mutex> lock(mu_);
    writer_->append(line);
    records_[a.key] = a;
}

}  // namespace cuset::databuild
