// remove_tree() and tree_size() on the shapes a hostile program can leave in its folder: a nest
// deeper than the open-file limit and than PATH_MAX, folders without permissions, links to files
// outside, a wide folder, a sparse file; and the report when a tree cannot be removed.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cuset/core/file_tree.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace {

// Lowers the soft open-file limit for the test's scope.
struct OpenFileLimit {
    rlimit saved{};
    explicit OpenFileLimit(rlim_t n) {
        ::getrlimit(RLIMIT_NOFILE, &saved);
        rlimit r = saved;
        r.rlim_cur = n;
        EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &r), 0);
    }
    ~OpenFileLimit() { ::setrlimit(RLIMIT_NOFILE, &saved); }
};

// A chain of `depth` folders named "d" under `root`, made with one descriptor at a time (a path
// to the bottom is longer than PATH_MAX); a file in every 100th level; the deepest one mode 000.
void make_nest(const std::string& root, int depth) {
    int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    for (int i = 0; i < depth; ++i) {
        ASSERT_EQ(::mkdirat(fd, "d", 0755), 0) << "level " << i;
        if (i % 100 == 0) {
            int f = ::openat(fd, "f", O_WRONLY | O_CREAT, 0644);
            ASSERT_GE(f, 0);
            ::close(f);
        }
        int next = ::openat(fd, "d", O_RDONLY | O_DIRECTORY);
        ::close(fd);
        ASSERT_GE(next, 0) << "level " << i;
        fd = next;
    }
    ::fchmod(fd, 0);
    ::close(fd);
}

}  // namespace

TEST(RemoveTree, ANestOfTenThousandFoldersUnderAnOpenFileLimitOf1024) {
    const std::string root = cuset::test::scratch_dir("remove-tree-nest") + "/work";
    fs::create_directories(root);
    make_nest(root, 10000);
    OpenFileLimit limit(1024);
    // Measured whole: 10,000 folders and 100 files, each at least one 4 KiB entry.
    const cuset::TreeSize all = cuset::tree_size(root, UINT64_MAX, UINT64_MAX);
    EXPECT_TRUE(all.complete) << all.error;
    EXPECT_EQ(all.entries, 10100u);
    EXPECT_GE(all.bytes, 10100u * cuset::kTreeEntryBytes);
    // And cut short at a bound.
    const cuset::TreeSize some = cuset::tree_size(root, UINT64_MAX, 500);
    EXPECT_FALSE(some.complete);
    EXPECT_EQ(some.entries, 501u);
    // The standard library's recursive removal holds a descriptor per level: it cannot.
    std::error_code ec;
    fs::remove_all(root, ec);
    EXPECT_TRUE(ec) << "std::filesystem::remove_all removed a 10,000-deep nest under 1024 open files";
    EXPECT_EQ(cuset::remove_tree(root), "");
    EXPECT_FALSE(fs::exists(root));
}

TEST(TreeSize, ASparseFileCountsItsBlocksAndLinksAreNotFollowed) {
    const std::string scratch = cuset::test::scratch_dir("tree-size");
    const std::string root = scratch + "/work", outside = scratch + "/outside";
    fs::create_directories(root);
    fs::create_directories(outside);
    {
        std::ofstream big(outside + "/big.bin", std::ios::binary);
        big << std::string(1 << 20, 'x');
    }
    const int fd = ::open((root + "/sparse.bin").c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{768} << 20), 0);  // 768 MiB long, no block written
    ::close(fd);
    fs::create_directory_symlink(outside, root + "/link");
    const cuset::TreeSize s = cuset::tree_size(root, UINT64_MAX, UINT64_MAX);
    EXPECT_TRUE(s.complete) << s.error;
    EXPECT_EQ(s.entries, 2u);
    EXPECT_LE(s.bytes, 2 * 64 * 1024u) << "the hole or the linked folder's file was counted";
}

TEST(RemoveTree, FoldersWithoutPermissionsWideFoldersAndLinksThatAreNotFollowed) {
    const std::string scratch = cuset::test::scratch_dir("remove-tree-shapes");
    const std::string root = scratch + "/work", outside = scratch + "/outside";
    fs::create_directories(root + "/locked/inner");
    fs::create_directories(outside);
    std::ofstream(outside + "/keep.txt") << "keep\n";
    std::ofstream(root + "/locked/inner/x") << "x";
    fs::create_directory_symlink(outside, root + "/link-to-folder");
    fs::create_symlink(outside + "/keep.txt", root + "/link-to-file");
    fs::create_directories(root + "/wide");
    for (int i = 0; i < 5000; ++i) std::ofstream(root + "/wide/" + std::to_string(i));
    for (int i = 0; i < 200; ++i) fs::create_directories(root + "/wide/d" + std::to_string(i) + "/e");
    ::chmod((root + "/locked/inner").c_str(), 0);
    ::chmod((root + "/locked").c_str(), 0);
    ::chmod((root + "/wide").c_str(), 0500);  // entries that cannot be unlinked until it is writable
    EXPECT_EQ(cuset::remove_tree(root), "");
    EXPECT_FALSE(fs::exists(root));
    EXPECT_TRUE(fs::exists(outside + "/keep.txt")) << "a link was followed";
    EXPECT_EQ(cuset::remove_tree(root), "") << "an absent tree is success";
}

TEST(RemoveTree, AFailureIsReportedWithThePath) {
    const std::string scratch = cuset::test::scratch_dir("remove-tree-fail");
    const std::string root = scratch + "/work";
    fs::create_directories(root + "/sub");
    // A tree whose parent cannot be opened: the message names the tree.
    const std::string msg = cuset::remove_tree(root + "/sub/missing-parent/child");
    EXPECT_EQ(msg, "") << "an absent path is not a failure";
    std::ofstream(root + "/file") << "x";
    const std::string not_dir = cuset::remove_tree(root + "/file/child");
    EXPECT_NE(not_dir.find(root + "/file/child"), std::string::npos) << not_dir;
    EXPECT_EQ(not_dir.find('\n'), std::string::npos);
}
