// Append-only, kill-safe JSONL (core/journal.h).
#include "cuset/core/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cuset/core/error.h"

namespace fs = std::filesystem;

namespace cuset {

namespace {

// The length of the prefix of `path` made of complete lines (its size when it ends in '\n').
off_t complete_prefix(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return 0;
    in.seekg(0, std::ios::end);
    const off_t size = static_cast<off_t>(in.tellg());
    off_t pos = size;
    char c = 0;
    while (pos > 0) {  // walk back to the last newline
        in.seekg(pos - 1);
        in.get(c);
        if (c == '\n') break;
        --pos;
    }
    if (!in) throw InputError(what + " " + path + ": cannot be read");
    return pos;
}

}  // namespace

// A journal is cuset's own file: a symbolic link (appends would go to the file it names), a file
// with other hard links, or anything but a regular file is refused, never followed or written.
void require_own_file(const std::string& path, const std::string& what) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return;  // missing: the writer makes it
    const std::string move = "; cuset-train writes this file itself: move it away";
    if (S_ISLNK(st.st_mode)) throw InputError(what + " " + path + ": a symbolic link" + move);
    if (!S_ISREG(st.st_mode)) throw InputError(what + " " + path + ": not a regular file" + move);
    if (st.st_nlink > 1) throw InputError(what + " " + path + ": a file with other hard links" + move);
}

std::vector<std::string> read_journal(const std::string& path, const std::string& what) {
    std::vector<std::string> lines;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) return lines;
    require_own_file(path, what);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(what + " " + path + ": cannot be read: " + std::strerror(errno));
    std::string line;
    while (std::getline(in, line)) {
        if (in.eof()) break;  // no newline after it: a torn last line
        lines.push_back(line);
    }
    return lines;
}

JournalWriter::JournalWriter(const std::string& path, const std::string& what) : path_(path), what_(what) {
    std::error_code ec;
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    require_own_file(path, what);
    const off_t keep = complete_prefix(path, what);
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd_ < 0) throw RuntimeFailure(what + " " + path + ": cannot be opened for appending: " + std::strerror(errno));
    struct stat s {};
    if (::fstat(fd_, &s) == 0 && s.st_size > keep) {
        if (::ftruncate(fd_, keep) != 0)
            throw RuntimeFailure(what + " " + path + ": cannot cut its torn last line: " + std::strerror(errno));
        cut_ = static_cast<int64_t>(s.st_size - keep);
    }
}

JournalWriter::~JournalWriter() {
    if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::append(const std::string& line) { write_synced(line + "\n"); }

void JournalWriter::append_lines(const std::vector<std::string>& lines) {
    std::string buf;
    for (const std::string& l : lines) buf += l + "\n";
    if (!buf.empty()) write_synced(buf);
}

void JournalWriter::write_synced(const std::string& buf) {
    const char* p = buf.data();
    size_t left = buf.size();
    while (left > 0) {
        ssize_t n = ::write(fd_, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw RuntimeFailure(what_ + " " + path_ + ": write failed: " + std::strerror(errno));
        p += n;
        left -= static_cast<size_t>(n);
    }
    if (::fdatasync(fd_) != 0 && errno != EINVAL)
        throw RuntimeFailure(what_ + " " + path_ + ": fdatasync failed: " + std::strerror(errno));
}

}  // namespace cuset
