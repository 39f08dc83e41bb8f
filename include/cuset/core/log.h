// Logging: messages go to stderr (colours on a terminal) and, once a run folder exists, to a log
// file in it. printf-style on purpose: LibTorch ships its own {fmt}, so no module includes
// spdlog or {fmt} headers next to LibTorch's; spdlog lives only in src/core/log.cpp.
#pragma once

#include <string>

#if defined(__GNUC__)
#define CUSET_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define CUSET_PRINTF(fmt_index, first_arg)
#endif

namespace cuset {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };

// Sets the console logger and its level ("trace", "debug", "info", "warn", "error").
void log_init(const std::string& level);

// Also writes every message to `path` (appending; the run folder's train.log).
void log_add_file(const std::string& path);

bool log_enabled(LogLevel level);
void log_write(LogLevel level, const std::string& message);

void log_trace(const char* fmt, ...) CUSET_PRINTF(1, 2);
void log_debug(const char* fmt, ...) CUSET_PRINTF(1, 2);
void log_info(const char* fmt, ...) CUSET_PRINTF(1, 2);
void log_warn(const char* fmt, ...) CUSET_PRINTF(1, 2);
void log_error(const char* fmt, ...) CUSET_PRINTF(1, 2);

// printf into a std::string.
std::string strprintf(const char* fmt, ...) CUSET_PRINTF(1, 2);

// True when stderr is a terminal (progress bars and colours).
bool log_stderr_is_tty();

}  // namespace cuset
