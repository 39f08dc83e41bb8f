// TensorBoard event files: CRC-32C known answers, the hand-encoded Event bytes, and a file that
// PyPI's tensorboard reads back (tests/golden/check_tensorboard.py) with every scalar at its step.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cuset/core/tensorboard.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::run_command;
using cuset::test::scratch_dir;
using cuset::test::write_file;

TEST(TensorBoard, Crc32cKnownAnswers) {
    // RFC 3720 B.4 and the usual check value.
    EXPECT_EQ(cuset::crc32c("123456789", 9), 0xE3069283u);
    std::string zeros(32, '\0'), ones(32, '\xff');
    EXPECT_EQ(cuset::crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
    EXPECT_EQ(cuset::crc32c(ones.data(), ones.size()), 0x62A8AB43u);
    EXPECT_EQ(cuset::crc32c("", 0), 0u);
    uint32_t c = cuset::crc32c("123456789", 9);
    EXPECT_EQ(cuset::crc32c_masked("123456789", 9), ((c >> 15) | (c << 17)) + 0xa282ead8u);
}

TEST(TensorBoard, EventBytes) {
    // wall_time 1.0, step 3, tag "a", value 2.0f: field by field.
    std::string e = cuset::tensorboard_scalar_event(1.0, 3, "a", 2.0f);
    std::string want = std::string("\x09\x00\x00\x00\x00\x00\x00\xf0\x3f", 9) + "\x10\x03" +
                       std::string("\x2a\x0a\x0a\x08\x0a\x01" "a" "\x15\x00\x00\x00\x40", 12);
    EXPECT_EQ(e, want);
    std::string v = cuset::tensorboard_version_event(1.0);
    EXPECT_NE(v.find("brain.Event:2"), std::string::npos);
}

TEST(TensorBoard, ReadBackByTensorboard) {
    std::string dir = scratch_dir("tensorboard-readback");
    nlohmann::json want = nlohmann::json::object();
    {
        cuset::TensorBoardWriter w(dir + "/events");
        ASSERT_TRUE(w.is_open());
        EXPECT_EQ(fs::path(w.path()).filename().string().rfind("events.out.tfevents.", 0), 0u);
        for (int64_t step = 1; step <= 300; ++step) {
            double loss = 3.0 / step + 0.001 * (step % 7);
            w.scalar("train/loss", loss, step);
            want["train/loss"].push_back({step, loss});
            if (step % 50 == 0) {
                w.scalar("eval/ce", 1.0 + 1.0 / step, step);
                want["eval/ce"].push_back({step, 1.0 + 1.0 / step});
            }
            // A large step (varint of several bytes) and a tiny value.
            if (step == 300) {
                w.scalar("train/lr", 1.5e-7, int64_t(1) << 40);
                want["train/lr"].push_back({int64_t(1) << 40, 1.5e-7});
            }
            w.flush();
        }
    }
    write_file(dir + "/want.json", want.dump());
    auto r = run_command(std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/tests/golden/check_tensorboard.py " +
                         dir + "/events " + dir + "/want.json");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("308 records"), std::string::npos) << r.out;
}
