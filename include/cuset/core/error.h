// Error types of cuset and the process exit codes they map to.
// Library code throws these with context (file, line, key); only main() catches them.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cuset {

// Process exit codes, documented in docs/exit-codes.md.
enum class ExitCode : int {
    kOk = 0,
    kUsage = 2,      // command line or configuration error
    kBadInput = 3,   // bad data, model, tokenizer or checkpoint file
    kRuntime = 4,    // failure while running (non-finite loss streak, I/O, device)
    kSignal = 75,    // stopped by SIGINT/SIGTERM after saving a resumable checkpoint
};

class Error : public std::runtime_error {
public:
    Error(ExitCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
    ExitCode code() const { return code_; }

private:
    ExitCode code_;
};

// Command line and configuration problems (exit 2).
class UsageError : public Error {
public:
    explicit UsageError(const std::string& what) : Error(ExitCode::kUsage, what) {}
};

// Bad input files: data, model, tokenizer, checkpoint (exit 3).
class InputError : public Error {
public:
    explicit InputError(const std::string& what) : Error(ExitCode::kBadInput, what) {}
};

// Failures while running (exit 4).
class RuntimeFailure : public Error {
public:
    explicit RuntimeFailure(const std::string& what) : Error(ExitCode::kRuntime, what) {}
};

// A non-finite value in the loss or logits. The trainer skips such a step (and stops with exit 4
// after train.max_bad_steps in a row); elsewhere it is a plain runtime failure.
class NonFiniteError : public RuntimeFailure {
public:
    explicit NonFiniteError(const std::string& what) : RuntimeFailure(what) {}
};

// Thrown by the trainer after it saved a checkpoint on SIGINT/SIGTERM (exit 75).
class StoppedBySignal : public Error {
public:
    explicit StoppedBySignal(const std::string& what) : Error(ExitCode::kSignal, what) {}
};

// User content quoted in a message (a JSONL line or a value read from it, a configuration value,
// a config.json entry): at most max_bytes of it, cut at a UTF-8 character boundary, then "...",
// so that a 50 MB line in a file never becomes a 50 MB line on stderr.
inline constexpr size_t kQuoteMaxBytes = 200;
inline std::string quote_bounded(std::string_view s, size_t max_bytes = kQuoteMaxBytes) {
    if (s.size() <= max_bytes) return std::string(s);
    size_t n = max_bytes;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a character
    return std::string(s.substr(0, n)) + "...";
}

}  // namespace cuset
