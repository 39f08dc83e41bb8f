// OUT/build.jsonl: appended and fsync'd per attempt, read back on restart (databuild/attempt_log.h).
#include "cuset/databuild/attempt_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

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

int64_t jsonl_cut_torn_tail(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return 0;
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.empty() || data.back() == '\n') return 0;
    const size_t keep = data.rfind('\n') == std::string::npos ? 0 : data.rfind('\n') + 1;
    if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
        throw RuntimeFailure("cannot cut the torn last line of '" + path + "': " + std::strerror(errno));
    return static_cast<int64_t>(data.size() - keep);
}

void write_all_synced(int fd, std::string_view data, const std::string& path) {
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw RuntimeFailure("cannot write '" + path + "': " + std::strerror(errno));
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 && errno != EINVAL) throw RuntimeFailure("cannot sync '" + path + "': " + std::strerror(errno));
}

void append_synced(const std::string& path, std::string_view data) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) throw RuntimeFailure("cannot open '" + path + "' for appending: " + std::strerror(errno));
    try {
        write_all_synced(fd, data, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
}

AttemptLog::AttemptLog(std::string path) : path_(std::move(path)) {
    torn_ = jsonl_cut_torn_tail(path_);
    {
        std::ifstream in(path_, std::ios::binary);
        std::string line;
        int64_t n = 0;
        while (std::getline(in, line)) {
            ++n;
            if (line.empty()) continue;
            const std::string where = path_ + ":" + std::to_string(n);
            json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
            if (j.is_discarded()) throw InputError(where + ": not valid JSON; move the output folder away to start afresh");
            AttemptRecord a = attempt_from_json(j, where);
            records_[a.key] = std::move(a);
        }
    }
    resumed_ = static_cast<int64_t>(records_.size());
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw RuntimeFailure("cannot open '" + path_ + "' for appending: " + std::strerror(errno));
}

AttemptLog::~AttemptLog() {
    if (fd_ >= 0) ::close(fd_);
}

void AttemptLog::append(const AttemptRecord& a) {
    const std::string line = attempt_json(a).dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
    std::lock_guard<std::mutex> lock(mu_);
    write_all_synced(fd_, line, path_);
    records_[a.key] = a;
}

}  // namespace cuset::databuild
