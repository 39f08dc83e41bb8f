// The rule that decides which of a task's files the candidate may see (judge/task_files.h), on
// hand-worked examples in the shapes CUDABench's tasks have.
#include <gtest/gtest.h>

#include "cuset/judge/task_files.h"

using cuset::judge::classify_task_files;
using cuset::judge::data_paths_named;
using Files = std::vector<std::string>;

TEST(TaskFiles, NamesAreTheDataLiteralsWithoutDotSlash) {
    const std::string src = R"(read_binary("./data/a.bin", a, n); fopen('data/b.bin', "rb");
        // "data/"  (too short)  "data/../x.bin" (leaves the folder)  "xdata/c.bin"  "data/c d.bin"
        write("data/out.bin"); read("data/a.bin");)";
    EXPECT_EQ(data_paths_named(src), (Files{"data/a.bin", "data/b.bin", "data/out.bin"}));
}

TEST(TaskFiles, InputsAreWhatTheReferenceReadsAndTheRestIsWithheld) {
    // CUDABench's Sigmoid task: gen.py writes input.bin and reference.bin; bench.cu reads
    // input.bin and writes output.bin; compare.py reads output.bin and reference.bin.
    const auto tf = classify_task_files({"data/input.bin", "data/reference.bin"},
                                        R"(read("./data/input.bin"); write("./data/output.bin");)", {"input"},
                                        R"(np.fromfile("./data/output.bin"); np.fromfile("./data/reference.bin"))");
    EXPECT_EQ(tf.problem, "");
    EXPECT_EQ(tf.inputs, (Files{"data/input.bin"}));
    EXPECT_EQ(tf.withheld, (Files{"data/reference.bin"}));
    EXPECT_EQ(tf.outputs, (Files{"data/output.bin"}));
}

TEST(TaskFiles, AFileNobodyNamesIsWithheldAndADeclaredInputIsAnInput) {
    // No reference program: the task record's declared inputs name them.
    const auto tf = classify_task_files({"data/x.bin", "data/meta.txt", "data/y_ref.bin"}, "", {"x"},
                                        "open('data/y.bin'); open('data/y_ref.bin')");
    EXPECT_EQ(tf.problem, "");
    EXPECT_EQ(tf.inputs, (Files{"data/x.bin"}));
    EXPECT_EQ(tf.withheld, (Files{"data/meta.txt", "data/y_ref.bin"}));
    EXPECT_EQ(tf.outputs, (Files{"data/y.bin"}));
}

TEST(TaskFiles, AFileBothReadByTheReferenceAndComparedIsReportedNotGuessed) {
    const auto tf = classify_task_files({"data/in.bin", "data/ref.bin"}, R"(read("data/in.bin"); read("data/ref.bin");)",
                                        {}, "open('data/out.bin'); open('data/ref.bin')");
    EXPECT_NE(tf.problem.find("data/ref.bin"), std::string::npos) << tf.problem;
    EXPECT_NE(tf.problem.find("cannot be told"), std::string::npos) << tf.problem;
}

TEST(TaskFiles, ACheckerThatReadsNoOutputIsReported) {
    const auto tf = classify_task_files({"data/in.bin"}, R"(read("data/in.bin");)", {}, "print('T')");
    EXPECT_NE(tf.problem.find("no output"), std::string::npos) << tf.problem;
}
