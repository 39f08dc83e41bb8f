// Folder trees that a hostile program may have shaped: removing them and measuring them, at any
// depth (a 10,000-deep nest of one-letter folders, deeper than the open-file limit and longer
// than PATH_MAX), any width, with folders left without permissions, never following a link.
// Not here: choosing what to remove or how much a program may write.
#pragma once

#include <cstdint>
#include <string>

namespace cuset {

// Removes `path` and everything under it. The walk holds at most a fixed number of open
// descriptors whatever the depth, makes folders without permissions removable, and never
// follows a symbolic link (a link is removed as a link). An absent `path` is success. Returns ""
// when the tree is gone, else one line saying what could not be removed and why.
std::string remove_tree(const std::string& path);

// What a folder tree holds, for a bound on a program's writes.
struct TreeSize {
    uint64_t bytes = 0;    // allocated bytes (st_blocks), at least kTreeEntryBytes per entry
    uint64_t entries = 0;  // files, folders and links below the top
    bool complete = true;  // false: the walk stopped at a bound or could not read the tree
    std::string error;     // why it could not read the tree ("" = it could)
};

// Every entry counts at least this much: a tree of empty files is not free.
inline constexpr uint64_t kTreeEntryBytes = 4096;

// Measures `path` as remove_tree() walks it (bounded descriptors, no link followed); stops early
// once `stop_bytes` or `stop_entries` is passed (complete = false). A sparse file counts the
// blocks it holds, not its length.
TreeSize tree_size(const std::string& path, uint64_t stop_bytes, uint64_t stop_entries);

// Removes its folder when it goes out of scope (unless released): for work folders a command
// makes and must not leave behind, however it ends. A failed removal is logged as a warning.
class RemoveTreeGuard {
public:
    explicit RemoveTreeGuard(std::string path) : path_(std::move(path)) {}
    ~RemoveTreeGuard();
    RemoveTreeGuard(const RemoveTreeGuard&) = delete;
    RemoveTreeGuard& operator=(const RemoveTreeGuard&) = delete;
    void release() { path_.clear(); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace cuset
