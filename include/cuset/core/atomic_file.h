// Crash-safe writing of files and folders: everything is written under a unique temporary name
// next to the target ("<target>.tmp-<pid>-<random>", never the name of an existing file), synced
// to disk, and renamed onto the target only when complete. Until the commit the target keeps its
// old contents (or stays absent); after it, the new version is on disk. Every writer of cuset
// (checkpoints, model folders, safetensors, score files, the tokenised cache, `data check`
// outputs) goes through this. A crash leaves at most a ".tmp-" leftover, never a torn target.
//
// Errors are RuntimeFailure: "cannot create|write|rename|sync <what> '<path>': <reason>", with
// <what> the description given to the writer ("score file") or nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset {

// Targets that are not regular files: a symbolic link is written through (its final target,
// also a dangling one's, is what gets replaced; the link stays); a FIFO, character or block
// device (/dev/stdout, /dev/null) is opened and written in place, without a temporary name or a
// rename; a folder is a UsageError ("... is a folder").

// UsageError when the file `out` is about to be written over one of `inputs`, compared by file
// identity (st_dev/st_ino: another spelling, a symbolic or a hard link of the same file all
// count): "<what>: the output 'OUT' is the input 'IN' (<what> never modifies its input; ...)". Inputs or an
// output that do not exist never match; empty names are skipped.
void refuse_output_equal_to_input(const std::string& out, const std::vector<std::string>& inputs,
                                  const std::string& what);
// True when both names exist and are the same file (st_dev/st_ino).
bool same_file_identity(const std::string& a, const std::string& b);
// The entries of `dir` (not below it), as inputs for the check above: a model folder's files.
// None when `dir` is not a folder.
std::vector<std::string> folder_entries(const std::string& dir);

// Leftovers of interrupted writes in `dir` (not below it), made safe at the next start:
// "<name>.tmp-<pid>-<hex>" folders holding the ".cuset-partial" marker that AtomicDir puts in
// every temporary folder are removed; a "<name>.tmp-old-<pid>-<hex>" folder (the previous version
// moved aside by atomic_dir_commit) is renamed back to <name> when <name> is missing, and removed
// when <name> exists and it holds the ".cuset-old" marker; "<name>.tmp-<pid>-<hex>" files whose
// writer process is gone are removed. Anything else, and the leftovers of a live process, is
// left alone. Returns one line per action taken (for the log).
std::vector<std::string> atomic_recover(const std::string& dir);
// Marker files of the above.
inline constexpr const char* kAtomicPartialMarker = ".cuset-partial";
inline constexpr const char* kAtomicOldMarker = ".cuset-old";

// A name next to `target` that no file has now: "<target>.<tag>-<pid>-<random hex>".
std::string atomic_temp_name(const std::string& target, const std::string& tag = "tmp");

// fsyncs a file or a folder (EINVAL from file systems that cannot sync folders is ignored).
void fsync_path(const std::string& path, bool directory);

// Writes `data` to `path` atomically (missing parent folders are created).
void atomic_write(const std::string& path, std::string_view data, const std::string& what = "");
// The same with the content given as pieces (e.g. a header and tensor buffers), not copied.
void atomic_write(const std::string& path, const std::vector<std::pair<const void*, size_t>>& parts,
                  const std::string& what = "");
// The older name of the whole-string atomic_write(), kept for its callers.
inline void file_write_atomic(const std::string& path, const std::string& text) { atomic_write(path, text); }

// A file written piece by piece and committed at the end. The temporary file is created by the
// constructor (and missing parent folders with it); commit() flushes, fsyncs, closes, renames it
// onto the target and fsyncs the folder. Destroyed without commit(), it removes the temporary
// file and leaves the target as it was.
class AtomicFile {
public:
    explicit AtomicFile(std::string path, std::string what = "");
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // Appends bytes; throws RuntimeFailure when the write fails.
    void write(const void* data, size_t n);
    void write(std::string_view s) { write(s.data(), s.size()); }
    // A buffered stream onto the temporary file (for << and binary write()); a failed write
    // sets its badbit and is reported by commit().
    std::ostream& stream();
    void commit();

    const std::string& path() const { return path_; }
    const std::string& temp_path() const { return tmp_; }
    bool committed() const { return committed_; }

private:
    class Buf;
    std::string path_, tmp_, what_;
    int fd_ = -1;
    std::unique_ptr<Buf> buf_;
    std::unique_ptr<std::ostream> stream_;
    bool committed_ = false;
};

// fsyncs every file and folder in `tmp_dir` and the folder itself, renames it to `final_dir`
// (an existing folder of that name is moved aside first and deleted after, so a crash in
// between leaves one complete copy under a ".tmp-old-" name), and fsyncs the parent folder.
void atomic_dir_commit(const std::string& tmp_dir, const std::string& final_dir);

// A folder written file by file and committed at the end: path() is a temporary folder next
// to `final_dir` (created with missing parents); commit() is atomic_dir_commit(). Destroyed
// without commit(), it removes the temporary folder with everything in it.
class AtomicDir {
public:
    explicit AtomicDir(std::string final_dir);
    ~AtomicDir();
    AtomicDir(const AtomicDir&) = delete;
    AtomicDir& operator=(const AtomicDir&) = delete;

    const std::string& path() const { return tmp_; }
    const std::string& final_path() const { return final_; }
    void commit();
    bool committed() const { return committed_; }

private:
    std::string final_, tmp_;
    bool committed_ = false;
};

}  // namespace cuset
