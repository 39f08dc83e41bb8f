// Temporary name, fsync, rename: crash-safe files and folders.
#include "cuset/core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <streambuf>
#include <thread>

#include "cuset/core/error.h"

namespace cuset {

namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& what, const std::string& path) {
    return (what.empty() ? "" : what + " ") + "'" + path + "'";
}

uint64_t random_u64() {
    thread_local std::mt19937_64 gen([] {
        std::random_device rd;
        uint64_t seed = (uint64_t(rd()) << 32) ^ rd();
        seed ^= static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        seed ^= std::hash<std::thread::id>()(std::this_thread::get_id());
        return seed;
    }());
    return gen();
}

std::string temp_candidate(const std::string& target, const std::string& tag) {
    char rnd[17];
    std::snprintf(rnd, sizeof(rnd), "%016llx", static_cast<unsigned long long>(random_u64()));
    return target + "." + tag + "-" + std::to_string(::getpid()) + "-" + rnd;
}

bool exists_nofollow(const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
}

void make_parent(const std::string& path, const std::string& what) {
    fs::path parent = fs::path(path).parent_path();
    if (parent.empty()) return;
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw RuntimeFailure("cannot create the folder of " + quoted(what, path) + ": " + ec.message());
}

std::string parent_or_dot(const std::string& path) {
    fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? "." : parent.string();
}

bool write_all(int fd, const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        ssize_t w = ::write(fd, p, std::min<size_t>(n, size_t{1} << 30));
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

// Where a write to `path` goes: through symbolic links to the file they name (`path` of the
// result), or, for a FIFO or device, straight into it (`direct`).
struct Target {
    std::string path;
    bool direct = false;
};

Target resolve_target(const std::string& path, const std::string& what) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) throw UsageError("cannot write " + quoted(what, path) + ": it is a folder");
        if (!S_ISREG(st.st_mode)) return {path, true};
    }
    std::string p = path;
    for (int i = 0; i < 40; ++i) {
        struct stat l {};
        if (::lstat(p.c_str(), &l) != 0 || !S_ISLNK(l.st_mode)) return {p, false};
        std::string link(4096, '\0');
        ssize_t n = ::readlink(p.c_str(), link.data(), link.size());
        if (n < 0 || static_cast<size_t>(n) >= link.size())
            throw RuntimeFailure("cannot read the symbolic link " + quoted(what, p) + ": " + std::strerror(errno));
        link.resize(static_cast<size_t>(n));
        fs::path lp(link);
        p = lp.is_absolute() ? link : (fs::path(p).parent_path() / lp).string();
    }
    throw UsageError("cannot write " + quoted(what, path) + ": too many levels of symbolic links");
}

// Opens a FIFO or device for writing in place (a FIFO without a reader is an error, not a hang).
int open_direct(const std::string& path, const std::string& what) {
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        throw RuntimeFailure("cannot write " + quoted(what, path) + ": " +
                             (err == ENXIO ? std::string("no process reads this FIFO") : std::strerror(err)));
    }
    int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

void close_direct(int fd, const std::string& path, const std::string& what) {
    if (::close(fd) != 0 && errno != EINTR)
        throw RuntimeFailure("cannot write " + quoted(what, path) + ": " + std::strerror(errno));
}

// Creates a new file under a fresh temporary name next to `path`; returns its descriptor.
int create_temp(const std::string& path, const std::string& what, std::string* tmp) {
    make_parent(path, what);
    for (int attempt = 0;; ++attempt) {
        *tmp = temp_candidate(path, "tmp");
        int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) return fd;
        if (errno != EEXIST || attempt >= 100)
            throw RuntimeFailure("cannot create " + quoted(what, *tmp) + ": " + std::strerror(errno));
    }
}

// fsync + close + rename + fsync of the folder; on failure the temporary file is removed.
void finish_file(int fd, const std::string& tmp, const std::string& path, const std::string& what) {
    int err = 0;
    if (::fsync(fd) != 0 && errno != EINVAL) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
        ::unlink(tmp.c_str());
        throw RuntimeFailure("cannot write " + quoted(what, tmp) + ": " + std::strerror(err));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        err = errno;
        ::unlink(tmp.c_str());
        throw RuntimeFailure("cannot rename " + quoted(what, tmp) + " to '" + path + "': " + std::strerror(err));
    }
    fsync_path(parent_or_dot(path), true);
}

// "<base>.<tag>-<pid>-<16 hex>" as temp_candidate() makes it: sets *base and *pid.
bool parse_temp_name(const std::string& name, const std::string& tag, std::string* base, long* pid) {
    const std::string mid = "." + tag + "-";
    if (name.size() < mid.size() + 19) return false;
    const std::string hex = name.substr(name.size() - 16);
    if (hex.find_first_not_of("0123456789abcdef") != std::string::npos || name[name.size() - 17] != '-') return false;
    std::string head = name.substr(0, name.size() - 17);  // "<base>.<tag>-<pid>"
    size_t dash = head.find_last_of('-');
    if (dash == std::string::npos) return false;
    std::string digits = head.substr(dash + 1);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    if (head.size() < mid.size() + digits.size() ||
        head.compare(dash + 1 - mid.size(), mid.size(), mid) != 0)
        return false;
    *base = head.substr(0, dash + 1 - mid.size());
    *pid = std::stol(digits);
    return !base->empty();
}

// Whether the process that made a temporary name may still be writing it.
bool writer_alive(long pid) {
    if (pid == static_cast<long>(::getpid())) return false;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

bool same_file_identity(const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    if (a.empty() || b.empty() || ::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::vector<std::string> folder_entries(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return out;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path().string());
    return out;
}

void refuse_output_equal_to_input(const std::string& out, const std::vector<std::string>& inputs,
                                  const std::string& what) {
    for (const std::string& in : inputs)
        if (same_file_identity(out, in))
            throw UsageError(what + ": the output '" + out + "' is the input '" + in +
                             "' (" + what + " never modifies its input; write to another file)");
}

std::vector<std::string> atomic_recover(const std::string& dir) {
    std::vector<std::string> done;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return done;
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    for (const fs::path& p : entries) {
        const std::string name = p.filename().string();
        std::string base;
        long pid = 0;
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) continue;
        const bool is_dir = S_ISDIR(st.st_mode);
        if (parse_temp_name(name, "tmp-old", &base, &pid)) {
            if (!is_dir || writer_alive(pid)) continue;
            const fs::path target = p.parent_path() / base;
            if (!exists_nofollow(target.string())) {
                fs::rename(p, target, ec);
                if (ec) throw RuntimeFailure("cannot restore '" + p.string() + "' to '" + target.string() + "': " + ec.message());
                ::unlink((target / kAtomicOldMarker).c_str());
                fsync_path(dir, true);
                done.push_back("restored " + target.string() + " from " + p.string() +
                               " (the copy moved aside by an interrupted replacement)");
            } else if (exists_nofollow((p / kAtomicOldMarker).string())) {
                fs::remove_all(p, ec);
                done.push_back("removed " + p.string() + " (an older copy of " + base + ", already replaced)");
            }
        } else if (parse_temp_name(name, "tmp", &base, &pid)) {
            if (writer_alive(pid)) continue;
            if (is_dir && exists_nofollow((p / kAtomicPartialMarker).string())) {
                fs::remove_all(p, ec);
                done.push_back("removed " + p.string() + " left by an interrupted write");
            } else if (S_ISREG(st.st_mode)) {
                ::unlink(p.c_str());
                done.push_back("removed " + p.string() + " left by an interrupted write");
            }
        }
    }
    return done;
}

std::string atomic_temp_name(const std::string& target, const std::string& tag) {
    for (;;) {
        std::string name = temp_candidate(target, tag);
        if (!exists_nofollow(name)) return name;
    }
}

void fsync_path(const std::string& path, bool directory) {
    int fd = ::open(path.c_str(), (directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) throw RuntimeFailure("cannot open '" + path + "' to sync it: " + std::strerror(errno));
    if (::fsync(fd) != 0 && errno != EINVAL) {
        int err = errno;
        ::close(fd);
        throw RuntimeFailure("cannot sync '" + path + "': " + std::strerror(err));
    }
    ::close(fd);
}

void atomic_write(const std::string& path_in, const std::vector<std::pair<const void*, size_t>>& parts,
                  const std::string& what) {
    const Target target = resolve_target(path_in, what);
    const std::string& path = target.path;
    if (target.direct) {
        int fd = open_direct(path, what);
        for (const auto& [data, n] : parts) {
            if (!write_all(fd, data, n)) {
                int err = errno;
                ::close(fd);
                throw RuntimeFailure("cannot write " + quoted(what, path) + ": " + std::strerror(err));
            }
        }
        close_direct(fd, path, what);
        return;
    }
    std::string tmp;
    int fd = create_temp(path, what, &tmp);
    for (const auto& [data, n] : parts) {
        if (!write_all(fd, data, n)) {
            int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            throw RuntimeFailure("cannot write " + quoted(what, tmp) + ": " + std::strerror(err));
        }
    }
    finish_file(fd, tmp, path, what);
}

void atomic_write(const std::string& path, std::string_view data, const std::string& what) {
    atomic_write(path, {{data.data(), data.size()}}, what);
}

// ---------------------------------------------------------------- AtomicFile

// An output buffer onto a descriptor; the first failed write is kept for commit() to report.
class AtomicFile::Buf : public std::streambuf {
public:
    explicit Buf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof(buf_)); }
    int error() const { return err_; }

    bool flush_buffer() {
        size_t n = static_cast<size_t>(pptr() - pbase());
        if (n > 0 && !put(pbase(), n)) return false;
        setp(buf_, buf_ + sizeof(buf_));
        return err_ == 0;
    }

protected:
    int_type overflow(int_type c) override {
        if (!flush_buffer()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        if (n >= static_cast<std::streamsize>(sizeof(buf_))) {  // large pieces bypass the buffer
            if (!flush_buffer() || !put(s, static_cast<size_t>(n))) return 0;
            return n;
        }
        return std::streambuf::xsputn(s, n);
    }
    int sync() override { return flush_buffer() ? 0 : -1; }

private:
    bool put(const char* s, size_t n) {
        if (err_ != 0) return false;
        if (!write_all(fd_, s, n)) {
            err_ = errno ? errno : EIO;
            return false;
        }
        return true;
    }

    int fd_;
    int err_ = 0;
    char buf_[1 << 16];
};

AtomicFile::AtomicFile(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
    const Target target = resolve_target(path_, what_);
    path_ = target.path;
    if (target.direct) fd_ = open_direct(path_, what_);  // tmp_ stays empty: written in place
    else fd_ = create_temp(path_, what_, &tmp_);
    buf_ = std::make_unique<Buf>(fd_);
    stream_ = std::make_unique<std::ostream>(buf_.get());
}

AtomicFile::~AtomicFile() {
    if (committed_) return;
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

std::ostream& AtomicFile::stream() {
    if (committed_) throw RuntimeFailure("write to " + quoted(what_, path_) + " after it was committed");
    return *stream_;
}

void AtomicFile::write(const void* data, size_t n) {
    std::ostream& s = stream();
    s.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!s) {
        int err = buf_->error() ? buf_->error() : EIO;
        throw RuntimeFailure("cannot write " + quoted(what_, tmp_) + ": " + std::strerror(err));
    }
}

void AtomicFile::commit() {
    if (committed_) return;
    bool ok = static_cast<bool>(*stream_) && buf_->flush_buffer();
    if (!ok) {
        int err = buf_->error() ? buf_->error() : EIO;
        throw RuntimeFailure("cannot write " + quoted(what_, tmp_) + ": " + std::strerror(err));
    }
    int fd = fd_;
    fd_ = -1;
    committed_ = true;  // finish_file closes the descriptor and removes the temporary on failure
    if (tmp_.empty()) close_direct(fd, path_, what_);
    else finish_file(fd, tmp_, path_, what_);
}

// ---------------------------------------------------------------- folders

void atomic_dir_commit(const std::string& tmp_dir, const std::string& final_dir) {
    std::error_code ec;
    ::unlink((fs::path(tmp_dir) / kAtomicPartialMarker).c_str());  // complete now
    for (const auto& e : fs::recursive_directory_iterator(tmp_dir, ec)) {
        if (e.is_regular_file()) fsync_path(e.path().string(), false);
        else if (e.is_directory()) fsync_path(e.path().string(), true);
    }
    if (ec) throw RuntimeFailure("cannot list '" + tmp_dir + "' to sync it: " + ec.message());
    fsync_path(tmp_dir, true);
    if (exists_nofollow(final_dir)) {
        // Replacing a folder of the same name: move the old one aside first, so that a crash in
        // between leaves one complete copy.
        std::string old = atomic_temp_name(final_dir, "tmp-old");
        fs::rename(final_dir, old, ec);
        if (ec) throw RuntimeFailure("cannot move " + final_dir + " aside: " + ec.message());
        fs::rename(tmp_dir, final_dir, ec);
        if (ec) {
            std::error_code ec2;
            fs::rename(old, final_dir, ec2);  // put the old copy back
            throw RuntimeFailure("cannot rename " + tmp_dir + " to " + final_dir + ": " + ec.message());
        }
        // The new copy is in place: mark the old one as superseded (a crash before it is gone
        // leaves a folder atomic_recover() knows it may delete), then delete it.
        fsync_path(parent_or_dot(final_dir), true);
        if (fs::is_directory(old, ec)) {
            int fd = ::open((fs::path(old) / kAtomicOldMarker).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
            if (fd >= 0) ::close(fd);
        }
        fs::remove_all(old, ec);
    } else {
        fs::rename(tmp_dir, final_dir, ec);
        if (ec) throw RuntimeFailure("cannot rename " + tmp_dir + " to " + final_dir + ": " + ec.message());
    }
    fsync_path(parent_or_dot(final_dir), true);
}

AtomicDir::AtomicDir(std::string final_dir) : final_(std::move(final_dir)) {
    make_parent(final_, "folder");
    for (int attempt = 0;; ++attempt) {
        tmp_ = temp_candidate(final_, "tmp");
        if (::mkdir(tmp_.c_str(), 0777) == 0) {
            // Says "a temporary folder of cuset" to atomic_recover(); removed by the commit.
            int fd = ::open((fs::path(tmp_) / kAtomicPartialMarker).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
            if (fd < 0) {
                int err = errno;
                ::rmdir(tmp_.c_str());
                throw RuntimeFailure("cannot create '" + tmp_ + "/" + kAtomicPartialMarker + "': " + std::strerror(err));
            }
            ::close(fd);
            return;
        }
        if (errno != EEXIST || attempt >= 100)
            throw RuntimeFailure("cannot create '" + tmp_ + "': " + std::strerror(errno));
    }
}

AtomicDir::~AtomicDir() {
    if (committed_) return;
    std::error_code ec;
    fs::remove_all(tmp_, ec);
}

void AtomicDir::commit() {
    if (committed_) return;
    atomic_dir_commit(tmp_, final_);
    committed_ = true;
}

}  // namespace cuset
