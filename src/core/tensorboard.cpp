// TensorBoard event files: TFRecord framing and the Event / Summary protobuf encoded by hand.
#include "cuset/core/tensorboard.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "cuset/core/error.h"

namespace cuset {

namespace {

const uint32_t* crc32c_table() {
    static uint32_t table[256];
    static bool init = [] {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            table[i] = c;
        }
        return true;
    }();
    (void)init;
    return table;
}

void put_varint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

void put_tag(std::string& out, int field, int wire) { put_varint(out, static_cast<uint64_t>(field) << 3 | wire); }

void put_fixed64(std::string& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_fixed32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

void put_bytes(std::string& out, int field, const std::string& bytes) {
    put_tag(out, field, 2);
    put_varint(out, bytes.size());
    out += bytes;
}

std::string event_head(double wall_time, int64_t step) {
    std::string e;
    uint64_t wt;
    std::memcpy(&wt, &wall_time, 8);
    put_tag(e, 1, 1);
    put_fixed64(e, wt);
    if (step != 0) {
        put_tag(e, 2, 0);
        put_varint(e, static_cast<uint64_t>(step));
    }
    return e;
}

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

uint32_t crc32c(const void* data, size_t n) {
    const uint32_t* t = crc32c_table();
    const unsigned char* p = static_cast<const unsigned char*>(data);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) c = t[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

uint32_t crc32c_masked(const void* data, size_t n) {
    uint32_t c = crc32c(data, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string tensorboard_version_event(double wall_time) {
    std::string e = event_head(wall_time, 0);
    put_bytes(e, 3, "brain.Event:2");
    return e;
}

std::string tensorboard_scalar_event(double wall_time, int64_t step, const std::string& tag, float value) {
    std::string v;
    put_bytes(v, 1, tag);
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    put_tag(v, 2, 5);
    put_fixed32(v, bits);
    std::string summary;
    put_bytes(summary, 1, v);
    std::string e = event_head(wall_time, step);
    put_bytes(e, 5, summary);
    return e;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    char host[256] = {0};
    if (gethostname(host, sizeof host - 1) != 0 || host[0] == 0) std::strcpy(host, "localhost");
    const double t = now_seconds();
    // TensorBoard orders the files of a folder by name: the time keeps a resumed run's file last.
    std::string name = "events.out.tfevents." + std::to_string(static_cast<long long>(t)) + "." + host;
    path_ = (std::filesystem::path(dir) / name).string();
    for (int i = 1; std::filesystem::exists(path_); ++i)  // a second writer within the same second
        path_ = (std::filesystem::path(dir) / (name + "." + std::to_string(i))).string();
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) throw RuntimeFailure("cannot create the TensorBoard event file " + path_ + ": " + std::strerror(errno));
    write_record(tensorboard_version_event(t));
    flush();
}

TensorBoardWriter::~TensorBoardWriter() { close(); }

void TensorBoardWriter::write_record(const std::string& event) {
    if (!f_) return;
    std::string rec;
    put_fixed64(rec, event.size());
    put_fixed32(rec, crc32c_masked(rec.data(), 8));
    rec += event;
    put_fixed32(rec, crc32c_masked(event.data(), event.size()));
    if (std::fwrite(rec.data(), 1, rec.size(), f_) != rec.size())
        throw RuntimeFailure("cannot write the TensorBoard event file " + path_ + ": " + std::strerror(errno));
}

void TensorBoardWriter::scalar(const std::string& tag, double value, int64_t step) {
    write_record(tensorboard_scalar_event(now_seconds(), step, tag, static_cast<float>(value)));
}

void TensorBoardWriter::flush() {
    if (f_) std::fflush(f_);
}

void TensorBoardWriter::close() {
    if (f_) std::fclose(f_);
    f_ = nullptr;
}

}  // namespace cuset
