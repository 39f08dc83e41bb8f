// Progress reporting for long work (training, scoring, data checks): a redrawn bar with rate and
// ETA when stderr is a terminal, plain log lines at a modest interval otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace cuset {

// "auto" -> bar when stderr is a terminal; "always" -> bar; "never" -> plain lines.
bool progress_bar_wanted(const std::string& mode);

class Progress {
public:
    // `total` <= 0 means unknown (no ETA). `unit` names what is counted ("samples", "steps").
    Progress(std::string label, int64_t total, std::string unit, bool bar);
    ~Progress();

    // Sets the count done so far; `suffix` is appended (e.g. "loss 1.234 lr 2e-5").
    void update(int64_t done, const std::string& suffix = "");
    // Draws the final state and ends the line.
    void finish(const std::string& suffix = "");

    double elapsed_seconds() const;

private:
    void draw(bool final_line);

    std::string label_;
    std::string unit_;
    std::string suffix_;
    int64_t total_;
    int64_t done_ = 0;
    bool bar_;
    bool finished_ = false;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

// Seconds of the steady clock since `t0`.
double seconds_since(std::chrono::steady_clock::time_point t0);

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace cuset
