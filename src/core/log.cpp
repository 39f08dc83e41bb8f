// spdlog behind the printf-style logging functions of cuset/core/log.h.
#include "cuset/core/log.h"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <mutex>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cuset/core/error.h"
#include "cuset/core/utf8_text.h"

namespace cuset {
namespace {

std::string vformat(const char* fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    char small[512];
    int n = std::vsnprintf(small, sizeof(small), fmt, copy);
    va_end(copy);
    if (n < 0) return fmt;
    if (static_cast<size_t>(n) < sizeof(small)) return std::string(small, n);
    std::string out(static_cast<size_t>(n) + 1, '\0');
    std::vsnprintf(out.data(), out.size(), fmt, args);
    out.resize(static_cast<size_t>(n));
    return out;
}

spdlog::level::level_enum to_spd(LogLevel l) {
    switch (l) {
        case LogLevel::kTrace: return spdlog::level::trace;
        case LogLevel::kDebug: return spdlog::level::debug;
        case LogLevel::kInfo: return spdlog::level::info;
        case LogLevel::kWarn: return spdlog::level::warn;
        case LogLevel::kError: return spdlog::level::err;
    }
    return spdlog::level::info;
}

std::shared_ptr<spdlog::sinks::basic_file_sink_mt> g_file_sink;
std::mutex g_sink_mutex;

}  // namespace

void log_init(const std::string& level) {
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto logger = std::make_shared<spdlog::logger>("cuset", console);
    logger->set_pattern("%^[%H:%M:%S %L]%$ %v");
    logger->set_level(spdlog::level::from_str(level));
    logger->flush_on(spdlog::level::warn);
    spdlog::set_default_logger(logger);
}

void log_add_file(const std::string& path) {
    std::lock_guard<std::mutex> lock(g_sink_mutex);
    std::shared_ptr<spdlog::sinks::basic_file_sink_mt> sink;
    try {
        sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false);
    } catch (const spdlog::spdlog_ex& e) {
        throw RuntimeFailure("cannot open log file '" + path + "': " + e.what());
    }
    sink->set_pattern("[%Y-%m-%d %H:%M:%S.%e %L] %v");
    sink->set_level(spdlog::level::trace);
    auto& sinks = spdlog::default_logger()->sinks();
    if (g_file_sink) sinks.erase(std::remove(sinks.begin(), sinks.end(), g_file_sink), sinks.end());
    sinks.push_back(sink);
    g_file_sink = sink;
    spdlog::default_logger()->flush_on(spdlog::level::info);
}

bool log_enabled(LogLevel level) { return spdlog::default_logger()->should_log(to_spd(level)); }

void log_write(LogLevel level, const std::string& message) {
    // Messages quote what cuset does not control (a judged program's output, a task's names):
    // shown as text, a control character in them cannot act on the terminal or the log file.
    spdlog::default_logger()->log(to_spd(level), "{}", utf8_visible(message));
}

#define CUSET_DEFINE_LOG(name, level)                   \
    void name(const char* fmt, ...) {                   \
        if (!log_enabled(level)) return;                \
        va_list args;                                   \
        va_start(args, fmt);                            \
        std::string msg = vformat(fmt, args);           \
        va_end(args);                                   \
        log_write(level, msg);                          \
    }
CUSET_DEFINE_LOG(log_trace, LogLevel::kTrace)
CUSET_DEFINE_LOG(log_debug, LogLevel::kDebug)
CUSET_DEFINE_LOG(log_info, LogLevel::kInfo)
CUSET_DEFINE_LOG(log_warn, LogLevel::kWarn)
CUSET_DEFINE_LOG(log_error, LogLevel::kError)
#undef CUSET_DEFINE_LOG

std::string strprintf(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    return s;
}

bool log_stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

}  // namespace cuset
