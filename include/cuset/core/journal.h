// An append-only JSONL file that survives a kill: long jobs (judging a results file, building a
// data set) append one record per finished unit of work and, run again, read back what is there
// and skip it. Each append() writes one whole line and fdatasyncs it before returning, so after a
// kill the file holds every record appended before it, plus at most one torn last line (no
// newline), which read_journal() drops and JournalWriter cuts off before appending.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cuset {

// InputError "<what> PATH: a symbolic link; cuset-train writes this file itself: move it away"
// when `path` exists and is not a regular file of its own: a symbolic link (appends would go to
// the file it names), a file with other hard links, a folder, a FIFO or a device. A missing path
// passes. The journals below, and every file cuset appends to, are checked so.
void require_own_file(const std::string& path, const std::string& what);

// The complete lines of `path` (without their newlines), in order; none when it does not exist.
// A last line with no newline (a write cut by a kill) is left out. `what` names the file in
// errors ("judge journal"): a path that exists but is not a regular file is an InputError.
std::vector<std::string> read_journal(const std::string& path, const std::string& what);

class JournalWriter {
public:
    // Opens `path` for appending (creating it and missing parent folders); a torn last line is
    // cut off first. RuntimeFailure naming the file when it cannot be opened.
    JournalWriter(const std::string& path, const std::string& what);
    ~JournalWriter();
    JournalWriter(const JournalWriter&) = delete;
    JournalWriter& operator=(const JournalWriter&) = delete;

    // Appends `line` (must not contain a newline) and a newline, then fdatasyncs. Not thread
    // safe: callers serialise.
    void append(const std::string& line);
    // Appends every line, each with its newline, in one write and one fdatasync (a batch that a
    // restart reuses whole, or up to a torn last line).
    void append_lines(const std::vector<std::string>& lines);
    const std::string& path() const { return path_; }
    int64_t cut_bytes() const { return cut_; }  // bytes of a torn last line cut off at opening

private:
    void write_synced(const std::string& data);
    std::string path_, what_;
    int fd_ = -1;
    int64_t cut_ = 0;
};

}  // namespace cuset
