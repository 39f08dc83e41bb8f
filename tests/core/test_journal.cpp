// core/journal: lines read back in order; a torn last line (no newline: an append cut by a kill)
// is dropped by the reader and cut off by the next writer; a path that is not a regular file, a
// symbolic link or a hard-linked file is an InputError naming it; a missing file is an empty journal.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cuset/core/error.h"
#include "cuset/core/journal.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::JournalWriter;
using cuset::read_journal;
using cuset::test::read_file;
using cuset::test::scratch_dir;
using cuset::test::write_file;

TEST(Journal, AppendsWholeLinesAndReadsThemBack) {
    const std::string path = scratch_dir("journal_append") + "/sub/j.jsonl";
    EXPECT_TRUE(read_journal(path, "journal").empty()) << "no file yet";
    {
        JournalWriter w(path, "journal");
        w.append("{\"a\": 1}");
        w.append("{\"b\": \"x y\"}");
    }
    {
        JournalWriter w(path, "journal");  // reopened: appends after what is there
        w.append("{\"c\": 3}");
    }
    EXPECT_EQ(read_file(path), "{\"a\": 1}\n{\"b\": \"x y\"}\n{\"c\": 3}\n");
    EXPECT_EQ(read_journal(path, "journal"), (std::vector<std::string>{"{\"a\": 1}", "{\"b\": \"x y\"}", "{\"c\": 3}"}));
}

TEST(Journal, ATornLastLineIsDroppedAndCutOff) {
    const std::string path = scratch_dir("journal_torn") + "/j.jsonl";
    write_file(path, "one\ntwo\nthr");
    EXPECT_EQ(read_journal(path, "journal"), (std::vector<std::string>{"one", "two"}));
    {
        JournalWriter w(path, "journal");
        w.append("three");
    }
    EXPECT_EQ(read_file(path), "one\ntwo\nthree\n");
    write_file(path, "no newline at all");
    EXPECT_TRUE(read_journal(path, "journal").empty());
    {
        JournalWriter w(path, "journal");
        w.append("first");
    }
    EXPECT_EQ(read_file(path), "first\n");
}

TEST(Journal, AFolderIsRefusedByName) {
    const std::string dir = scratch_dir("journal_folder");
    try {
        read_journal(dir, "judge journal");
        FAIL() << "a folder was read as a journal";
    } catch (const cuset::InputError& e) {
        EXPECT_NE(std::string(e.what()).find("judge journal " + dir + ": not a regular file"), std::string::npos) << e.what();
    }
    EXPECT_THROW(JournalWriter(dir, "judge journal"), cuset::InputError);
}

// A journal is cuset's own file: a symbolic link to a user's file (with no final newline, which a
// writer would cut as a torn line) and a hard link to it are refused by the reader and the writer,
// and the user's file keeps every byte.
TEST(Journal, ALinkToAnotherFileIsRefusedAndThatFileIsUntouched) {
    const std::string dir = scratch_dir("journal_links");
    const std::string user = dir + "/notes.txt";
    write_file(user, "line one\nline two without newline");
    fs::create_symlink(user, dir + "/judged.jsonl");
    fs::create_hard_link(user, dir + "/hard.jsonl");
    for (const char* name : {"/judged.jsonl", "/hard.jsonl"}) {
        const std::string path = dir + name;
        try {
            read_journal(path, "judge journal");
            ADD_FAILURE() << path << " was read as a journal";
        } catch (const cuset::InputError& e) {
            EXPECT_NE(std::string(e.what()).find("cuset-train writes this file itself: move it away"), std::string::npos)
                << e.what();
        }
        EXPECT_THROW(JournalWriter(path, "judge journal"), cuset::InputError) << path;
    }
    EXPECT_EQ(read_file(user), "line one\nline two without newline");
}
