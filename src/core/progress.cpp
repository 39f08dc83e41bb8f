// Progress bar / progress lines on stderr.
#include "cuset/core/progress.h"

#include <cmath>
#include <cstdio>

#include "cuset/core/log.h"

namespace cuset {

bool progress_bar_wanted(const std::string& mode) {
    if (mode == "always") return true;
    if (mode == "never") return false;
    return log_stderr_is_tty();
}

std::string format_duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    long t = std::lround(s);
    if (t >= 3600) return strprintf("%ldh%02ldm", t / 3600, (t % 3600) / 60);
    if (t >= 60) return strprintf("%ldm%02lds", t / 60, t % 60);
    return strprintf("%lds", t);
}

Progress::Progress(std::string label, int64_t total, std::string unit, bool bar)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), bar_(bar),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

Progress::~Progress() {
    if (!finished_ && bar_ && done_ > 0) std::fputc('\n', stderr);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double Progress::elapsed_seconds() const { return seconds_since(start_); }

void Progress::update(int64_t done, const std::string& suffix) {
    done_ = done;
    suffix_ = suffix;
    auto now = std::chrono::steady_clock::now();
    double since = std::chrono::duration<double>(now - last_draw_).count();
    // A terminal bar redraws at most 10 times a second; plain lines come every 10 seconds.
    // A terminal bar redraws on completion too; plain mode leaves the last line to finish().
    bool complete = total_ > 0 && done >= total_;
    if (since < (bar_ ? 0.1 : 10.0) && !(bar_ && complete)) return;
    if (!bar_ && complete) return;
    last_draw_ = now;
    draw(false);
}

void Progress::finish(const std::string& suffix) {
    if (finished_) return;
    if (!suffix.empty()) suffix_ = suffix;
    finished_ = true;
    draw(true);
}

void Progress::draw(bool final_line) {
    double el = elapsed_seconds();
    double rate = el > 0 ? done_ / el : 0.0;
    std::string eta = "?";
    if (total_ > 0 && rate > 0) eta = format_duration((total_ - done_) / rate);
    std::string count = total_ > 0 ? strprintf("%lld/%lld", (long long)done_, (long long)total_)
                                   : strprintf("%lld", (long long)done_);
    if (bar_) {
        const int width = 24;
        int filled = total_ > 0 ? int(width * std::min<double>(1.0, double(done_) / total_)) : 0;
        std::string bar(filled, '#');
        bar += std::string(width - filled, '.');
        std::fprintf(stderr, "\r\033[2K%s [%s] %s %s | %.2f %s/s | %s %s | %s", label_.c_str(),
                     bar.c_str(), count.c_str(), unit_.c_str(), rate, unit_.c_str(),
                     final_line ? "took" : "ETA",
                     final_line ? format_duration(el).c_str() : eta.c_str(), suffix_.c_str());
        if (final_line) std::fputc('\n', stderr);
        std::fflush(stderr);
    } else {
        log_info("%s %s %s | %.2f %s/s | %s %s%s%s", label_.c_str(), count.c_str(), unit_.c_str(),
                 rate, unit_.c_str(), final_line ? "took" : "ETA",
                 final_line ? format_duration(el).c_str() : eta.c_str(),
                 suffix_.empty() ? "" : " | ", suffix_.c_str());
    }
}

}  // namespace cuset
