// The stop-signal flag and its SIGINT/SIGTERM handler.
#include "cuset/core/signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace cuset {

namespace {

std::atomic<int> g_signal{0};
// Read by the handler; written only while installing (handlers are then replaced atomically).
std::atomic<const char*> g_first_message{nullptr};
std::atomic<const char*> g_second_message{nullptr};
std::atomic<bool> g_second_exits{true};

void write_stderr(const char* msg) {
    if (!msg) return;
    ssize_t ignored = ::write(STDERR_FILENO, msg, std::strlen(msg));
    (void)ignored;
}

extern "C" void on_stop_signal(int sig) {
    int expected = 0;
    if (!g_signal.compare_exchange_strong(expected, sig)) {
        if (!g_second_exits.load()) return;
        write_stderr(g_second_message.load());
        ::_exit(128 + sig);
    }
    write_stderr(g_first_message.load());
}

void install(const StopSignalOptions& opts, struct sigaction* old_int, struct sigaction* old_term) {
    g_first_message.store(opts.first_message);
    g_second_message.store(opts.second_message);
    g_second_exits.store(opts.second_exits);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, old_int);
    sigaction(SIGTERM, &sa, old_term);
}

}  // namespace

void signals_install(const StopSignalOptions& opts) { install(opts, nullptr, nullptr); }
bool signals_stop_requested() { return g_signal.load() != 0; }
int signals_received() { return g_signal.load(); }
void signals_reset() { g_signal.store(0); }

struct StopSignalScope::Saved {
    struct sigaction old_int {};
    struct sigaction old_term {};
    int old_signal = 0;
    const char* first = nullptr;
    const char* second = nullptr;
    bool exits = true;
};

StopSignalScope::StopSignalScope(const StopSignalOptions& opts) : saved_(new Saved) {
    saved_->old_signal = g_signal.load();
    saved_->first = g_first_message.load();
    saved_->second = g_second_message.load();
    saved_->exits = g_second_exits.load();
    g_signal.store(0);
    install(opts, &saved_->old_int, &saved_->old_term);
}

StopSignalScope::~StopSignalScope() {
    sigaction(SIGINT, &saved_->old_int, nullptr);
    sigaction(SIGTERM, &saved_->old_term, nullptr);
    g_first_message.store(saved_->first);
    g_second_message.store(saved_->second);
    g_second_exits.store(saved_->exits);
    g_signal.store(saved_->old_signal);
    delete saved_;
}

}  // namespace cuset
