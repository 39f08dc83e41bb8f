// SIGINT / SIGTERM as a stop request, for every long-running command. The first signal sets a
// flag that the work loop polls (signals_stop_requested()) and optionally prints a message;
// what a second one does is the caller's choice: exit at once with 128 + signal (the trainer:
// its complete checkpoints are only ever renamed into place, so that never damages one), or
// only stay recorded (`data check`, which must still kill its child process groups itself).
#pragma once

namespace cuset {

struct StopSignalOptions {
    // Written to stderr (async-signal-safely) on the first / the exiting second signal; the
    // texts must outlive the installation (string literals). nullptr = silent.
    const char* first_message = nullptr;
    const char* second_message = nullptr;
    bool second_exits = true;  // a second signal _exit()s with 128 + signal
};

// Installs the handler for SIGINT and SIGTERM (process-wide, until replaced).
void signals_install(const StopSignalOptions& opts);
// True once a first signal arrived (since the last signals_reset()).
bool signals_stop_requested();
int signals_received();  // the first signal number, 0 if none
void signals_reset();    // forgets a received signal (for tests and scoped use)

// Installs the handler for its lifetime: the flag is reset on entry, and the previous
// SIGINT/SIGTERM handlers and the flag's state come back on exit.
class StopSignalScope {
public:
    explicit StopSignalScope(const StopSignalOptions& opts);
    ~StopSignalScope();
    StopSignalScope(const StopSignalScope&) = delete;
    StopSignalScope& operator=(const StopSignalScope&) = delete;

private:
    struct Saved;
    Saved* saved_;
};

}  // namespace cuset
