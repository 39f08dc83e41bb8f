// Opening and reading the files cuset takes as input. A file that must be a regular file is
// checked as one on the opened descriptor, before anything is read: a folder, a FIFO (which would
// block for ever) or a device such as /dev/zero (which never ends) is refused with one line
// naming it. Whole files and single lines (JSONL records) are read with a bound on their size, so
// that no input can make a reader allocate without limit. Errors are InputError (exit 3).
// Not here: writing files (atomic_file.h), parsing JSON (json_io.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuset {

// The most bytes one line (one JSONL record) may have: 64 MiB.
inline constexpr size_t kMaxRecordBytes = size_t(64) << 20;
// The most bytes a whole text file read by read_input_file() may have by default: 1 GiB.
inline constexpr size_t kMaxTextFileBytes = size_t(1) << 30;

// What `path` is when it is not a regular file ("a folder", "a FIFO", "a character device",
// "a block device", "a socket"); "" for a regular file, a missing or an unreadable name. Follows
// symbolic links.
std::string non_regular_kind(const std::string& path);

// InputError "<what> 'PATH' is a folder, not a file; give the file itself" when `path` exists and
// is not a regular file (links followed). A missing file passes (the caller's own message names it).
void require_regular_file(const std::string& path, const std::string& what);

// The whole of the regular file `path`. InputError when it cannot be opened ("cannot read <what>
// 'PATH': <reason>"), is not a regular file, or is larger than max_bytes.
std::string read_input_file(const std::string& path, const std::string& what, size_t max_bytes = kMaxTextFileBytes);

// The lines of a regular file, one at a time, as std::getline gives them (split at '\n', the
// last one also without a '\n', no empty line after a final '\n'), each at most max_line_bytes.
class LineReader {
public:
    // Opens `path` (InputError as read_input_file()).
    LineReader(const std::string& path, const std::string& what, size_t max_line_bytes = kMaxRecordBytes);
    ~LineReader();
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    // The next line into `line`; false at the end. InputError "PATH:N: a line longer than M bytes
    // (the most one record may have)" for a longer line, and on a read error.
    bool next(std::string& line);
    // The number of the line last returned (1-based); 0 before the first.
    int64_t line_no() const { return line_no_; }

private:
    bool fill();
    std::string path_, what_;
    size_t max_line_;
    int fd_ = -1;
    std::string buf_;
    size_t pos_ = 0;
    bool eof_ = false;
    int64_t line_no_ = 0;
};

}  // namespace cuset
