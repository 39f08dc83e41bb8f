// core/atomic_file: files and folders written under a unique temporary name and renamed into
// place on commit; the target is untouched before, and nothing is left behind after.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "test_util.h"

using cuset::AtomicDir;
using cuset::AtomicFile;
using cuset::test::read_file;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
    return scratch_dir("atomic-" + name + "-" + std::to_string(::getpid()));
}

std::set<std::string> entries(const std::string& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
    return out;
}

}  // namespace

TEST(AtomicFile, WholeStringWriteLeavesOnlyTheTarget) {
    std::string dir = fresh_dir("whole");
    cuset::atomic_write(dir + "/x.json", "{\"a\":1}");
    EXPECT_EQ(read_file(dir + "/x.json"), "{\"a\":1}");
    cuset::atomic_write(dir + "/x.json", "replaced");
    EXPECT_EQ(read_file(dir + "/x.json"), "replaced");
    std::string header = "HEAD", body = "-body";
    cuset::atomic_write(dir + "/parts.bin", {{header.data(), header.size()}, {body.data(), body.size()}});
    EXPECT_EQ(read_file(dir + "/parts.bin"), "HEAD-body");
    EXPECT_EQ(entries(dir), (std::set<std::string>{"x.json", "parts.bin"}));
    // Missing parent folders are created.
    cuset::atomic_write(dir + "/a/b/c.txt", "deep");
    EXPECT_EQ(read_file(dir + "/a/b/c.txt"), "deep");
}

TEST(AtomicFile, TargetUntouchedUntilCommit) {
    std::string dir = fresh_dir("commit");
    std::string target = dir + "/out.txt";
    write_file(target, "old");
    AtomicFile f(target);
    f.write("new");
    f.stream() << "er" << 42;
    f.stream().flush();
    // The temporary is a separate file next to the target, named after it and this process.
    EXPECT_NE(f.temp_path(), target);
    EXPECT_EQ(fs::path(f.temp_path()).parent_path(), fs::path(target).parent_path());
    EXPECT_EQ(f.temp_path().rfind(target + ".tmp-" + std::to_string(::getpid()) + "-", 0), 0u) << f.temp_path();
    EXPECT_TRUE(fs::exists(f.temp_path()));
    EXPECT_EQ(read_file(target), "old");
    f.commit();
    EXPECT_TRUE(f.committed());
    EXPECT_EQ(read_file(target), "newer42");
    EXPECT_FALSE(fs::exists(f.temp_path()));
    EXPECT_EQ(entries(dir), (std::set<std::string>{"out.txt"}));
    f.commit();  // a second commit does nothing
    EXPECT_EQ(read_file(target), "newer42");
}

TEST(AtomicFile, DestroyedWithoutCommitRemovesItsTemporary) {
    std::string dir = fresh_dir("abandon");
    std::string target = dir + "/out.bin";
    std::string tmp;
    {
        AtomicFile f(target, "score file");
        f.write("partial", 7);
        tmp = f.temp_path();
        EXPECT_TRUE(fs::exists(tmp));
    }
    EXPECT_FALSE(fs::exists(tmp));
    EXPECT_FALSE(fs::exists(target));
    EXPECT_TRUE(entries(dir).empty());

    write_file(target, "kept");
    {
        AtomicFile f(target);
        f.stream() << "lost";
    }
    EXPECT_EQ(read_file(target), "kept");
    EXPECT_EQ(entries(dir), (std::set<std::string>{"out.bin"}));
}

TEST(AtomicFile, TemporaryNamesAreUniqueAndNeverAnExistingFile) {
    std::string dir = fresh_dir("names");
    std::string target = dir + "/t";
    std::set<std::string> names;
    for (int i = 0; i < 50; ++i) {
        std::string n = cuset::atomic_temp_name(target);
        EXPECT_FALSE(fs::exists(n));
        EXPECT_NE(n.find(".tmp-"), std::string::npos);
        names.insert(n);
    }
    EXPECT_EQ(names.size(), 50u);
    // Two writers of one target at once get two temporaries; the last commit wins.
    AtomicFile a(target), b(target);
    EXPECT_NE(a.temp_path(), b.temp_path());
    a.write("a");
    b.write("b");
    a.commit();
    EXPECT_EQ(read_file(target), "a");
    b.commit();
    EXPECT_EQ(read_file(target), "b");
    EXPECT_EQ(entries(dir), (std::set<std::string>{"t"}));
}

TEST(AtomicFile, ErrorsAreRuntimeFailures) {
    std::string dir = fresh_dir("errors");
    write_file(dir + "/plain", "a file, not a folder");
    try {
        cuset::atomic_write(dir + "/plain/x.txt", "x", "report");
        FAIL() << "wrote below a regular file";
    } catch (const cuset::RuntimeFailure& e) {
        EXPECT_NE(std::string(e.what()).find("report"), std::string::npos) << e.what();
    }
    EXPECT_THROW(AtomicFile(dir + "/plain/y.txt"), cuset::RuntimeFailure);
}

TEST(AtomicDir, CommitReplacesAnOldFolder) {
    std::string run = fresh_dir("dir");
    std::string final_dir = run + "/checkpoint-1";
    fs::create_directories(final_dir);
    write_file(final_dir + "/old.txt", "old");
    {
        AtomicDir d(final_dir);
        EXPECT_NE(d.path(), final_dir);
        EXPECT_NE(d.path().find(".tmp-"), std::string::npos);
        EXPECT_TRUE(fs::is_directory(d.path()));
        write_file(d.path() + "/new.txt", "new");
        fs::create_directories(d.path() + "/sub");
        write_file(d.path() + "/sub/deep.txt", "deep");
        // Before the commit the final folder is still the old one.
        EXPECT_EQ(entries(final_dir), (std::set<std::string>{"old.txt"}));
        d.commit();
        EXPECT_TRUE(d.committed());
        EXPECT_FALSE(fs::exists(d.path()));
    }
    EXPECT_EQ(entries(final_dir), (std::set<std::string>{"new.txt", "sub"}));
    EXPECT_EQ(read_file(final_dir + "/sub/deep.txt"), "deep");
    EXPECT_EQ(entries(run), (std::set<std::string>{"checkpoint-1"}));  // no aside copy left
}

TEST(AtomicDir, DestroyedWithoutCommitRemovesItsTemporary) {
    std::string run = fresh_dir("dir-abandon");
    std::string final_dir = run + "/model";
    std::string tmp;
    {
        AtomicDir d(final_dir);
        tmp = d.path();
        write_file(tmp + "/config.json", "{}");
    }
    EXPECT_FALSE(fs::exists(tmp));
    EXPECT_FALSE(fs::exists(final_dir));
    EXPECT_TRUE(entries(run).empty());
    // A folder filled by hand under atomic_temp_name commits the same way.
    std::string t2 = cuset::atomic_temp_name(final_dir);
    fs::create_directories(t2);
    write_file(t2 + "/a.txt", "one");
    cuset::atomic_dir_commit(t2, final_dir);
    EXPECT_EQ(read_file(final_dir + "/a.txt"), "one");
    EXPECT_EQ(entries(run), (std::set<std::string>{"model"}));
}
