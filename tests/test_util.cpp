// Implementation of the shared test helpers.
#include "test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "cuset/core/error.h"

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

std::string input_error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const cuset::InputError& e) {
        return e.what();
    }
    return "";
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

namespace {

// The kernel's range for the local ports of outgoing connections: a port inside it may be taken
// by any connection of any process (another test's Gloo mesh, say) at any moment, so a test's
// rendezvous port is drawn outside it.
std::pair<int, int> ephemeral_ports() {
    std::ifstream f("/proc/sys/net/ipv4/ip_local_port_range");
    int lo = 32768, hi = 60999;  // Linux's default when the file cannot be read
    if (f >> lo >> hi && lo <= hi) return {lo, hi};
    return {32768, 60999};
}

// A TCP socket on 127.0.0.1:port, bound (bind) or connected (!bind), then closed: whether that
// succeeded.
bool loopback(int port, bool bind) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    auto* addr = reinterpret_cast<sockaddr*>(&a);
    const bool ok = (bind ? ::bind(fd, addr, sizeof a) : ::connect(fd, addr, sizeof a)) == 0;
    ::close(fd);
    return ok;
}

// Whether nothing listens on or holds 127.0.0.1:port now (a bind without SO_REUSEADDR succeeds).
bool port_is_free(int port) { return loopback(port, true); }

}  // namespace

int free_port(int offset) {
    // Candidates: 10000..65535 less the ephemeral range. The first one tried depends on the pid and
    // the offset, so that tests running at once start far apart; each is probed by a bind.
    auto [lo, hi] = ephemeral_ports();
    std::vector<int> candidates;
    for (int p = 10000; p <= 65535; ++p)
        if (p < lo || p > hi) candidates.push_back(p);
    if (candidates.empty()) throw std::runtime_error("free_port: no port outside the ephemeral range");
    const size_t n = candidates.size();
    const size_t start = (static_cast<size_t>(::getpid()) * 7919 + static_cast<size_t>(offset) * 101) % n;
    for (size_t i = 0; i < n; ++i) {
        int p = candidates[(start + i) % n];
        if (port_is_free(p)) return p;
    }
    throw std::runtime_error("free_port: every port outside the ephemeral range is in use");
}

bool port_accepts(int port) { return loopback(port, false); }

int spawn_rank(const std::string& cfg, const std::string& name, int rank, int world, int port, const std::string& log,
               const std::vector<std::string>& extra) {
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        setenv("RANK", std::to_string(rank).c_str(), 1);
        setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
        setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
        if (!freopen(log.c_str(), "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(126);
        std::vector<std::string> args = {CUSET_BINARY, "--config", cfg, "--run-name", name};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(CUSET_BINARY, argv.data());
        _exit(127);
    }
    return pid;
}

int wait_exit(int pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void run_ranks(int world, const std::string& cfg, const std::string& dir, const std::string& name, int port,
               const std::vector<std::string>& extra) {
    std::vector<int> pids;
    for (int r = 0; r < world; ++r)
        pids.push_back(spawn_rank(cfg, name, r, world, port, dir + "/" + name + "-r" + std::to_string(r) + ".log", extra));
    std::vector<int> codes;
    for (int p : pids) codes.push_back(wait_exit(p));
    for (int r = 0; r < world; ++r)
        ASSERT_EQ(codes[r], 0) << read_file(dir + "/" + name + "-r" + std::to_string(r) + ".log");
}

std::string tiny_model_dir() { return std::string(CUSET_TEST_WORK) + "/golden/tiny_model/model"; }

int count_of(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size()))
        ++n;
    return n;
}

const char* const kDefault = "<the schema's default>";

std::string yaml_of(const ConfigKeys& keys) {
    // A tree of the dotted paths, children in the order they first appear.
    struct Node {
        std::string name, value;
        std::vector<Node> children;
        Node& child(const std::string& n) {
            for (Node& c : children)
                if (c.name == n) return c;
            children.push_back({n, "", {}});
            return children.back();
        }
    };
    Node root;
    for (const auto& [path, value] : keys) {
        Node* n = &root;
        for (size_t b = 0;;) {
            const size_t dot = path.find('.', b);
            n = &n->child(path.substr(b, dot == std::string::npos ? std::string::npos : dot - b));
            if (dot == std::string::npos) break;
            b = dot + 1;
        }
        n->value = value;
    }
    std::string out;
    std::function<void(const Node&, size_t)> emit = [&](const Node& n, size_t depth) {
        for (const Node& c : n.children) {
            out += std::string(2 * depth, ' ') + c.name + ":";
            if (c.children.empty()) {
                out += " " + c.value + "\n";
            } else {
                out += "\n";
                emit(c, depth + 1);
            }
        }
    };
    emit(root, 0);
    return out;
}

ConfigKeys tiny_run_keys(const std::string& output_dir) {
    return {{"model.path", tiny_model_dir()},
            {"model.dtype", "float32"},
            {"data.train", "tests/fixtures/mini_sft.jsonl"},
            {"data.eval", "tests/fixtures/mini_sft.jsonl"},
            {"data.chat_format", "chatml"},
            {"data.max_seq_len", "160"},
            {"data.cache_dir", "\"\""},
            {"objective.region.window", "16"},
            {"train.device", "cpu"},
            {"train.threads", "1"},
            {"train.micro_batch_size", "2"},
            {"train.grad_accum", "2"},
            {"train.max_steps", "2"},
            {"train.lr", "1.0e-2"},
            {"train.warmup_steps", "2"},
            {"train.seed", "7"},
            {"checkpoint.every", "0"},
            {"checkpoint.keep_last", "0"},
            {"log.every", "1"},
            {"log.progress", "never"},
            {"run.output_dir", output_dir}};
}

std::string tiny_run_yaml(const std::string& output_dir, const ConfigKeys& changes) {
    ConfigKeys keys = tiny_run_keys(output_dir);
    for (const auto& [key, value] : changes) {
        auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first == key; });
        if (value == kDefault) {
            if (it != keys.end()) keys.erase(it);
        } else if (it != keys.end()) {
            it->second = value;
        } else {
            keys.emplace_back(key, value);
        }
    }
    return yaml_of(keys);
}

std::string write_tiny_run_config(const std::string& path, const std::string& output_dir, const ConfigKeys& changes) {
    write_file(path, tiny_run_yaml(output_dir, changes));
    return path;
}

}  // namespace cuset::test

namespace cuset::test {

std::string safetensors_without_save_id(const std::string& path) {
    const std::string bytes = read_file(path);
    if (bytes.size() < 8) return bytes;
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
    if (n > bytes.size() - 8) return bytes;
    nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
    if (header.contains("__metadata__")) header["__metadata__"].erase("save_id");
    return header.dump() + bytes.substr(8 + n);
}

}  // namespace cuset::test
