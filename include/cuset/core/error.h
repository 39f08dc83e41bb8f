// Error types of cuset and the process exit codes they map to.
// Library code throws these with context (file, line, key); only main() catches them.
#pragma once

#include <stdexcept>
#include <string>

namespace cuset {

// Process exit codes, documented in README.md ("Exit codes").
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

}  // namespace cuset
