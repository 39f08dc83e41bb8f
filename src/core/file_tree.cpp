// Walking a hostile folder tree with a bounded number of descriptors (core/file_tree.h).
// The walk descends with openat(O_NOFOLLOW) and climbs back through "..", checked against the
// device and inode it came from, so its state is a stack of names, not of open folders; the top
// kKeepOpen levels keep their listing open, deeper ones are listed again after each child (a
// removal finds the finished child gone; a measurement skips to the entry after it).
#include "cuset/core/file_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "cuset/core/log.h"

namespace cuset {

namespace {

constexpr size_t kKeepOpen = 32;  // levels whose listing stays open while a child is walked

struct Level {
    std::string name;  // its entry in the level above
    dev_t dev = 0;
    ino_t ino = 0;
    DIR* dir = nullptr;  // open listing, or nullptr (closed while deeper levels are walked)
};

std::string why(const std::string& what, const std::string& path, int err) {
    return "cannot walk '" + path + "': " + what + ": " + std::strerror(err);
}

// Opens folder `name` under `at`; a removal first gives it owner permissions when it has none for
// us, and makes it writable so that its entries can go.
int open_dir(int at, const char* name, bool remove) {
    const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::openat(at, name, flags);
    if (!remove) return fd;
    if (fd < 0 && errno == EACCES && ::fchmodat(at, name, 0700, 0) == 0) fd = ::openat(at, name, flags);
    if (fd >= 0) ::fchmod(fd, 0700);
    return fd;
}

uint64_t entry_bytes(const struct stat& st) {
    return std::max<uint64_t>(static_cast<uint64_t>(st.st_blocks) * 512, kTreeEntryBytes);
}

// Removes (remove) or measures (size) the tree at `path`, a folder. Returns "" or the first error.
std::string walk(const std::string& path, const struct stat& top_st, bool remove, TreeSize* size, uint64_t stop_bytes,
                 uint64_t stop_entries) {
    const size_t last = path.find_last_not_of('/');
    const size_t slash = path.find_last_of('/', last);
    const std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    const std::string base = path.substr(slash == std::string::npos ? 0 : slash + 1,
                                         last - (slash == std::string::npos ? 0 : slash + 1) + 1);
    const int top = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0) return why("opening its parent", path, errno);
    int fd = open_dir(top, base.c_str(), remove);
    DIR* dir = fd >= 0 ? ::fdopendir(fd) : nullptr;
    if (!dir) {
        const std::string error = why("opening it", path, errno);
        if (fd >= 0) ::close(fd);
        ::close(top);
        return error;
    }
    std::vector<Level> stack{{base, top_st.st_dev, top_st.st_ino, nullptr}};
    std::string error, skip_to;  // skip_to: a measurement's relisted folder resumes after this entry
    auto here = [&] { return path + (stack.size() > 1 ? " (at depth " + std::to_string(stack.size() - 1) + ")" : ""); };
    auto over = [&] { return size && (size->bytes > stop_bytes || size->entries > stop_entries); };

    while (error.empty() && !over()) {
        errno = 0;
        const dirent* e = ::readdir(dir);
        if (e) {
            const char* name = e->d_name;
            if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
            if (!skip_to.empty()) {
                if (skip_to == name) skip_to.clear();
                continue;
            }
            const int at = ::dirfd(dir);
            struct stat es {};
            if (::fstatat(at, name, &es, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno != ENOENT) error = why("stat of an entry", here(), errno);
                continue;
            }
            if (size) {
                ++size->entries;
                size->bytes += entry_bytes(es);
            }
            if (!S_ISDIR(es.st_mode)) {
                if (remove && ::unlinkat(at, name, 0) != 0 && errno != ENOENT) error = why("unlink of an entry", here(), errno);
                continue;
            }
            if (remove && ::unlinkat(at, name, AT_REMOVEDIR) == 0) continue;  // an empty folder
            const int child = open_dir(at, name, remove);
            DIR* child_dir = child >= 0 ? ::fdopendir(child) : nullptr;
            if (!child_dir) {
                error = why("opening a folder", here(), errno);
                if (child >= 0) ::close(child);
                break;
            }
            std::string child_name = name;  // `name` lives in dir's buffer, which closedir frees
            Level& cur = stack.back();
            if (stack.size() < kKeepOpen) {
                cur.dir = dir;
            } else {
                ::closedir(dir);
                cur.dir = nullptr;
            }
            stack.push_back({std::move(child_name), es.st_dev, es.st_ino, nullptr});
            dir = child_dir;
            continue;
        }
        if (errno != 0) {
            error = why("reading a folder", here(), errno);
            break;
        }
        skip_to.clear();
        // This level is done: climb to its parent (and remove it there).
        if (stack.size() == 1) {
            ::closedir(dir);
            dir = nullptr;
            if (remove && ::unlinkat(top, base.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) error = why("rmdir", path, errno);
            break;
        }
        const Level done = stack.back();
        stack.pop_back();
        Level& up = stack.back();
        DIR* up_dir = up.dir;
        if (!up_dir) {
            const int pfd = ::openat(::dirfd(dir), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            struct stat ps {};
            if (pfd < 0 || ::fstat(pfd, &ps) != 0 || ps.st_dev != up.dev || ps.st_ino != up.ino) {
                error = "cannot walk '" + path + "': a folder moved while it was walked";
                if (pfd >= 0) ::close(pfd);
                break;
            }
            up_dir = ::fdopendir(pfd);
            if (!up_dir) {
                error = why("reopening a folder", here(), errno);
                ::close(pfd);
                break;
            }
            if (!remove) skip_to = done.name;
        }
        ::closedir(dir);
        dir = up_dir;
        up.dir = nullptr;
        if (remove && ::unlinkat(::dirfd(dir), done.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
            error = why("rmdir of a folder", here(), errno);
    }
    if (dir) ::closedir(dir);
    for (Level& l : stack)
        if (l.dir) ::closedir(l.dir);
    ::close(top);
    return error;
}

}  // namespace

std::string remove_tree(const std::string& path) {
    if (path.empty()) return "";
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? "" : "cannot remove '" + path + "': " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return ::unlink(path.c_str()) == 0 || errno == ENOENT ? "" : "cannot remove '" + path + "': " + std::strerror(errno);
    return walk(path, st, /*remove=*/true, nullptr, 0, 0);
}

TreeSize tree_size(const std::string& path, uint64_t stop_bytes, uint64_t stop_entries) {
    TreeSize size;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) {
            size.complete = false;
            size.error = "cannot measure '" + path + "': " + std::strerror(errno);
        }
        return size;
    }
    if (!S_ISDIR(st.st_mode)) {
        size.entries = 1;
        size.bytes = entry_bytes(st);
        return size;
    }
    size.error = walk(path, st, /*remove=*/false, &size, stop_bytes, stop_entries);
    if (!size.error.empty() || size.bytes > stop_bytes || size.entries > stop_entries) size.complete = false;
    return size;
}

RemoveTreeGuard::~RemoveTreeGuard() {
    if (path_.empty()) return;
    const std::string error = remove_tree(path_);
    if (!error.empty()) log_warn("%s", error.c_str());
}

}  // namespace cuset
