// Implementation of the shared test helpers.
#include "test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace cuset::test {

namespace fs = std::filesystem;

void record_tolerance(const Site& site, double observed, double bound, double margin) {
    const char* log = std::getenv("CUSET_TOLERANCE_LOG");
    if (!log || !*log) return;
    // The site relative to the repository, so that every test program names a file alike: the
    // compiler names it absolute or relative to the build folder, and checks live under tests/.
    std::string file = site.file;
    const std::string root = std::string(CUSET_SOURCE_DIR) + "/";
    if (file.compare(0, root.size(), root) == 0) {
        file = file.substr(root.size());
    } else if (file.compare(0, 6, "tests/") != 0) {
        const size_t at = file.rfind("/tests/");
        if (at != std::string::npos) file = file.substr(at + 1);
    }
    char line[1024];
    const int n = margin > 0 ? std::snprintf(line, sizeof line, "%s:%d\t%.17g\t%.17g\t%g\n", file.c_str(), site.line,
                                             observed, bound, margin)
                             : std::snprintf(line, sizeof line, "%s:%d\t%.17g\t%.17g\n", file.c_str(), site.line,
                                             observed, bound);
    if (n <= 0 || n >= static_cast<int>(sizeof line)) return;
    // One write(2) of a short line with O_APPEND: lines of parallel test processes do not interleave.
    const int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const ssize_t written = ::write(fd, line, static_cast<size_t>(n));
    (void)written;
    ::close(fd);
}

::testing::AssertionResult NearAt::operator()(const char* a_expr, const char* b_expr, const char* tol_expr,
                                              double a, double b, double tol) const {
    const double diff = a == b ? 0.0 : std::fabs(a - b);  // equal infinities are near
    record_tolerance(site, diff, tol);
    if (diff <= tol) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "The difference between " << a_expr << " and " << b_expr << " is " << diff << ", which exceeds "
           << tol_expr << ", where\n"
           << a_expr << " evaluates to " << a << ",\n"
           << b_expr << " evaluates to " << b << ", and\n"
           << tol_expr << " evaluates to " << tol << ".";
}

::testing::AssertionResult WithinAt::operator()(const char* diff_expr, const char* tol_expr, double diff,
                                                double tol) const {
    record_tolerance(site, diff, tol, margin);
    if (diff <= tol) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << diff_expr << " is " << diff << ", which exceeds " << tol_expr
                                         << " (" << tol << ").";
}

RunResult run_command(const std::string& cmd) {
    static int counter = 0;
    std::string base = std::string(CUSET_TEST_WORK) + "/cmd." + std::to_string(::getpid()) + "." +
                       std::to_string(counter++);
    std::string full = "(" + cmd + ") >" + base + ".out 2>" + base + ".err";
    int status = std::system(full.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_file(base + ".out");
    r.err = read_file(base + ".err");
    fs::remove(base + ".out");
    fs::remove(base + ".err");
    return r;
}

RunResult run_cuset(const std::string& args) {
    return run_command(std::string("'") + CUSET_BINARY + "' " + args);
}

std::string scratch_dir(const std::string& name) {
    fs::path p = fs::path(CUSET_TEST_WORK) / name;
    fs::remove_all(p);
    fs::create_directories(p);
    return p.string();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write " + path);
    f << text;
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::vector<nlohmann::json> read_metrics(const std::string& run_dir) {
    std::vector<nlohmann::json> out;
    std::ifstream f(run_dir + "/metrics.jsonl");
    for (std::string line; std::getline(f, line);) {
        nlohmann::json j = nlohmann::json::parse(line);
        if (j.contains("loss")) out.push_back(j);
    }
    return out;
}

std::vector<std::string> lines_of(const std::string& path) {
    std::vector<std::string> out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(line);
    return out;
}

Interrupted run_cuset_then_sigterm(const std::string& cfg, const std::string& dir, const std::string& run_name,
                                   size_t steps, int timeout_s) {
    const std::string log = dir + "/" + run_name + ".err";
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        if (!freopen(log.c_str(), "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(126);
        execl(CUSET_BINARY, CUSET_BINARY, "--config", cfg.c_str(), "--run-name", run_name.c_str(), (char*)nullptr);
        _exit(127);
    }
    const auto t0 = std::chrono::steady_clock::now();
    while (read_metrics(dir + "/" + run_name).size() < steps &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(timeout_s))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kill(pid, SIGTERM);
    Interrupted r;
    waitpid(pid, &r.status, 0);
    r.steps = read_metrics(dir + "/" + run_name).size();
    return r;
}

std::string tiny_model_dir() { return std::string(CUSET_TEST_WORK) + "/golden/tiny_model/model"; }

int count_of(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size()))
        ++n;
    return n;
}

}  // namespace cuset::test
