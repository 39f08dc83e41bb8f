// The durable record of a build: OUT/build.jsonl, one JSON line per judged attempt, appended,
// flushed and fsync'd as each verdict arrives, so that a build stopped at any moment (a signal,
// a crash, a power cut) loses at most the attempts still being judged. A restart reads the
// complete lines back and skips those attempts; a torn last line (no newline) is cut off first.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/core/journal.h"
#include "cuset/databuild/candidates.h"

namespace cuset::databuild {

struct AttemptRecord {
    AttemptKey key;
    std::string status;      // judge::status_name of the verdict
    std::string error;       // the judge's first finding ("" = none)
    std::string response;    // the answer judged (needed to continue its conversation on resume)
    int64_t tokens = 0;      // tokens of the answer
    double seconds = 0;      // judging wall time
    double run_seconds = -1; // the program's own run; -1 = not run
    bool emulated = false;
};

nlohmann::ordered_json attempt_json(const AttemptRecord& a);
// InputError naming `where` for a line that is not an attempt.
AttemptRecord attempt_from_json(const nlohmann::json& j, const std::string& where);

class AttemptLog {
public:
    // Opens (creating) `path` for appending; the records already there are in records().
    explicit AttemptLog(std::string path);
    ~AttemptLog();
    AttemptLog(const AttemptLog&) = delete;
    AttemptLog& operator=(const AttemptLog&) = delete;

    // Appends one line and fsyncs it (safe from several threads).
    void append(const AttemptRecord& a);
    const std::map<AttemptKey, AttemptRecord>& records() const { return records_; }
    int64_t resumed() const { return resumed_; }  // attempts read back at opening
    int64_t torn_bytes() const { return writer_->cut_bytes(); }  // bytes of a torn last line cut off at opening

private:
    std::string path_;
    std::unique_ptr<JournalWriter> writer_;
    std::mutex mu_;
    std::map<AttemptKey, AttemptRecord> records_;
    int64_t resumed_ = 0;
};

}  // namespace cuset::databuild
