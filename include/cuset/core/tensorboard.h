// TensorBoard event files without TensorFlow or protobuf: `events.out.tfevents.<time>.<host>`
// in a folder, TFRecord framing (length, masked CRC32C of the length, the record, masked CRC32C
// of the record) around hand-encoded Event protobufs: a file_version event first, then one Event
// per (step, tag, value) with a Summary holding one simple_value. Torch-free; the trainer writes
// one on rank 0 when log.tensorboard is true.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace cuset {

// CRC-32C (Castagnoli), as TFRecord uses it, and its masked form ((crc >> 15 | crc << 17) + 0xa282ead8).
uint32_t crc32c(const void* data, size_t n);
uint32_t crc32c_masked(const void* data, size_t n);

class TensorBoardWriter {
public:
    TensorBoardWriter() = default;
    // Creates `dir` when needed and a new event file in it (RuntimeFailure when it cannot).
    explicit TensorBoardWriter(const std::string& dir);
    ~TensorBoardWriter();
    TensorBoardWriter(const TensorBoardWriter&) = delete;
    TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

    bool is_open() const { return f_ != nullptr; }
    const std::string& path() const { return path_; }
    // One scalar record at `step` (wall time now). Non-finite values are written as they are.
    void scalar(const std::string& tag, double value, int64_t step);
    // Pushes what was written to the file (the trainer calls it after each logged step).
    void flush();
    void close();

private:
    void write_record(const std::string& event);
    std::FILE* f_ = nullptr;
    std::string path_;
};

// The Event protobuf bytes (for tests): wall_time (field 1, double), step (field 2, int64), and
// either file_version (field 3, string) or summary (field 5) { value (field 1) { tag (field 1),
// simple_value (field 2, float) } }.
std::string tensorboard_scalar_event(double wall_time, int64_t step, const std::string& tag, float value);
std::string tensorboard_version_event(double wall_time);

}  // namespace cuset
