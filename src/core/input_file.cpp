// Regular-file checks and bounded reads of input files.
#include "cuset/core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cuset/core/error.h"

namespace cuset {

namespace {

std::string kind_of(mode_t m) {
    if (S_ISREG(m)) return "";
    if (S_ISDIR(m)) return "a folder";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

std::string named(const std::string& what, const std::string& path) {
    return (what.empty() ? "" : what + " ") + "'" + path + "'";
}

[[noreturn]] void refuse_kind(const std::string& what, const std::string& path, const std::string& kind) {
    throw InputError(named(what, path) + " is " + kind + ", not a regular file; give the file itself");
}

// Opens `path` for reading without blocking on a FIFO, and refuses anything but a regular file.
int open_regular(const std::string& path, const std::string& what, struct stat* st) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == EISDIR) refuse_kind(what, path, "a folder");
        throw InputError("cannot read " + named(what, path) + ": " + std::strerror(err));
    }
    if (::fstat(fd, st) != 0) {
        const int err = errno;
        ::close(fd);
        throw InputError("cannot read " + named(what, path) + ": " + std::strerror(err));
    }
    if (std::string k = kind_of(st->st_mode); !k.empty()) {
        ::close(fd);
        refuse_kind(what, path, k);
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

}  // namespace

std::string non_regular_kind(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return "";
    return kind_of(st.st_mode);
}

void require_regular_file(const std::string& path, const std::string& what) {
    if (std::string k = non_regular_kind(path); !k.empty()) refuse_kind(what, path, k);
}

std::string read_input_file(const std::string& path, const std::string& what, size_t max_bytes) {
    struct stat st;
    const int fd = open_regular(path, what, &st);
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
        ::close(fd);
        throw InputError(named(what, path) + " has " + std::to_string(st.st_size) + " bytes, more than the " +
                         std::to_string(max_bytes) + " such a file may have");
    }
    std::string out;
    out.reserve(static_cast<size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw InputError("cannot read " + named(what, path) + ": " + std::strerror(err));
        }
        if (n == 0) break;
        if (out.size() + static_cast<size_t>(n) > max_bytes) {  // the file grew while being read
            ::close(fd);
            throw InputError(named(what, path) + " has more than the " + std::to_string(max_bytes) +
                             " bytes such a file may have");
        }
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

LineReader::LineReader(const std::string& path, const std::string& what, size_t max_line_bytes)
    : path_(path), what_(what), max_line_(max_line_bytes) {
    struct stat st;
    fd_ = open_regular(path, what, &st);
}

LineReader::~LineReader() {
    if (fd_ >= 0) ::close(fd_);
}

bool LineReader::fill() {
    if (eof_) return false;
    if (pos_ > 0) {
        buf_.erase(0, pos_);
        pos_ = 0;
    }
    const size_t old = buf_.size();
    buf_.resize(old + (size_t(1) << 16));
    ssize_t n;
    do n = ::read(fd_, &buf_[old], buf_.size() - old);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        const int err = errno;
        buf_.resize(old);
        throw InputError("cannot read " + named(what_, path_) + ": " + std::strerror(err));
    }
    buf_.resize(old + static_cast<size_t>(n));
    if (n == 0) eof_ = true;
    return n > 0;
}

bool LineReader::next(std::string& line) {
    size_t scanned = pos_;
    for (;;) {
        const size_t nl = buf_.find('\n', scanned);
        if (nl != std::string::npos && nl - pos_ <= max_line_) {
            line.assign(buf_, pos_, nl - pos_);
            pos_ = nl + 1;
            ++line_no_;
            return true;
        }
        if (buf_.size() - pos_ > max_line_)
            throw InputError(path_ + ":" + std::to_string(line_no_ + 1) + ": a line longer than " +
                             std::to_string(max_line_) + " bytes (the most one record may have)");
        scanned = buf_.size() - pos_;  // relative to pos_, which fill() moves to 0
        if (!fill()) {
            if (buf_.size() == pos_) return false;
            line.assign(buf_, pos_, std::string::npos);
            pos_ = buf_.size();
            ++line_no_;
            return true;
        }
    }
}

}  // namespace cuset
