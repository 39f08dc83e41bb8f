// `cuset-train data check`: sample-by-sample validation of a JSONL file, nvcc compilation and GPU
// runs of the fenced programs in parallel process groups with a wall-clock timeout, the filtered
// file and the JSON report. Reading samples for training is data.cpp's job, not this file's.
#include "cuset/data/data_check.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "cuset/text/chat_format.h"
#include "cuset/core/config.h"
#include "cuset/data/data.h"
#include "cuset/core/error.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/tokenizer.h"

extern char** environ;

namespace cuset {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- samples and their verdicts

struct Finding {
    std::string code;
    std::string message;
};

struct StepResult {
    std::string status = "skipped";  // pass | fail | timeout | skipped
    double seconds = 0;
    int exit_code = 0;     // of the process, when it exited
    std::string message;   // first error line (compile) or last output line (run)
};

struct Sample {
    int64_t line = 0;      // 1-based line in the input
    std::string raw;       // the line as it is in the file (without the newline)
    std::string written;   // what the filtered file gets (raw, or with UTF-8 replaced)
    Conversation conv;
    bool parsed = false;
    std::vector<Finding> rejected;  // non-empty = refused
    std::vector<Finding> warnings;
    int64_t n_tokens = -1, n_response_tokens = -1;
    uint32_t tag_bits = 0;
    bool tagged = false;
    std::string program;
    StepResult compile, run;

    bool ok() const { return rejected.empty(); }
};

std::vector<Sample> read_samples(const std::string& path, int64_t* n_lines) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot open data file " + path);
    std::vector<Sample> out;
    std::string line;
    int64_t n = 0;
    while (std::getline(in, line)) {
        ++n;
        std::string_view body = line;
        if (!body.empty() && body.back() == '\r') body.remove_suffix(1);
        if (body.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos) continue;
        Sample s;
        s.line = n;
        s.raw = line;
        out.push_back(std::move(s));
    }
    if (in.bad()) throw InputError("error reading data file " + path);
    *n_lines = n;
    return out;
}

std::string collapse_whitespace(const std::string& s) {
    std::string out;
    bool space = false;
    for (char c : s) {
        bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
        if (ws) {
            space = !out.empty();
        } else {
            if (space) out += ' ';
            space = false;
            out += c;
        }
    }
    return out;
}

// Content identity of a sample (its id does not count): roles and texts, unambiguous.
std::string sample_key(const Conversation& c, bool normalise) {
    json k = json::array();
    for (const Message& m : c.messages)
        k.push_back({m.role, normalise ? collapse_whitespace(m.content) : m.content});
    return k.dump();
}

void mark_duplicates(std::vector<Sample>& samples) {
    std::unordered_map<std::string, int64_t> exact, normalised;
    for (Sample& s : samples) {
        if (!s.ok()) continue;
        std::string k = sample_key(s.conv, false);
        std::string kn = sample_key(s.conv, true);
        if (auto it = exact.find(k); it != exact.end()) {
            s.rejected.push_back({"duplicate", strprintf("duplicate of line %lld", (long long)it->second)});
        } else if (auto jt = normalised.find(kn); jt != normalised.end()) {
            s.rejected.push_back({"whitespace_duplicate",
                                  strprintf("same as line %lld up to whitespace", (long long)jt->second)});
        } else {
            exact.emplace(std::move(k), s.line);
            normalised.emplace(std::move(kn), s.line);
        }
    }
}

// ---------------------------------------------------------------- processes

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_stop_signal(int sig) { g_signal = sig; }

// Sets SIGINT/SIGTERM to a flag while child processes run, so they can be killed, not orphaned.
class StopSignals {
public:
    StopSignals() {
        g_signal = 0;
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~StopSignals() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }

private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

std::string find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
    const char* path = std::getenv("PATH");
    std::stringstream ss(path ? path : "");
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (dir.empty()) dir = ".";
        std::string p = dir + "/" + name;
        if (access(p.c_str(), X_OK) == 0 && !fs::is_directory(p)) return p;
    }
    return "";
}

// Starts argv[0] (a path) in its own process group, in `cwd`, stdin from /dev/null, stdout and
// stderr into `log`, with TMPDIR=`tmpdir` (nvcc's intermediate files die with the folder).
pid_t spawn(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log,
            const std::string& tmpdir) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_store;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "TMPDIR=", 7) != 0) env_store.emplace_back(*e);
    env_store.push_back("TMPDIR=" + tmpdir);
    std::vector<char*> env;
    for (std::string& e : env_store) env.push_back(e.data());
    env.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, args[0], &fa, &at, args.data(), env.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0)
        throw RuntimeFailure("cannot start " + argv[0] + ": " + std::strerror(rc));
    return pid;
}

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<std::string> lines;
    std::string l;
    while (std::getline(in, l)) {
        if (!l.empty() && l.back() == '\r') l.pop_back();
        lines.push_back(l);
    }
    return lines;
}

std::string clip(std::string s, size_t n = 300) {
    if (s.size() > n) s = s.substr(0, n) + "...";
    return s;
}

// The line of a compiler log that says what went wrong first: nvcc/EDG ("x.cu(3): error: ..."),
// gcc ("x.cu:3:5: error: ..."), the linker ("undefined reference"), else the first line.
std::string first_error_line(const std::string& log) {
    std::vector<std::string> lines = read_lines(log);
    for (const std::string& l : lines)
        if (l.find("error") != std::string::npos || l.find("undefined reference") != std::string::npos)
            return clip(l);
    for (const std::string& l : lines)
        if (l.find_first_not_of(" \t") != std::string::npos) return clip(l);
    return "";
}

std::string last_output_line(const std::string& log) {
    std::vector<std::string> lines = read_lines(log);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (it->find_first_not_of(" \t") != std::string::npos) return clip(*it);
    return "";
}

struct Outcome {
    bool timed_out = false;
    bool signaled = false;
    int code = 0;  // exit code, or the signal number when signaled
    double seconds = 0;
};

// Runs one command to completion (used for nvcc --version and nvidia-smi -L).
Outcome run_sync(const std::vector<std::string>& argv, const std::string& dir, const std::string& log,
                 double timeout_s) {
    auto start = Clock::now();
    pid_t pid = spawn(argv, dir, log, dir);
    Outcome o;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            o.signaled = WIFSIGNALED(st);
            o.code = o.signaled ? WTERMSIG(st) : WEXITSTATUS(st);
            break;
        }
        if (std::chrono::duration<double>(Clock::now() - start).count() > timeout_s) {
            kill(-pid, SIGKILL);
            waitpid(pid, &st, 0);
            o.timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return o;
}

// A temporary folder, removed with everything in it when this goes out of scope.
class TempDir {
public:
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "cuset-check-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) throw RuntimeFailure("cannot create a temporary folder " + tmpl);
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

struct GpuProbe {
    bool present = false;
    std::string how;  // what found it, or what was tried
};

GpuProbe probe_gpu(const std::string& scratch) {
    GpuProbe g;
    // An override for machines where detection is wrong (and for tests of the run step).
    if (const char* a = std::getenv("CUSET_ASSUME_GPU"); a && (std::string(a) == "0" || std::string(a) == "1")) {
        g.present = std::string(a) == "1";
        g.how = std::string("CUSET_ASSUME_GPU=") + a;
        return g;
    }
    std::string smi = find_program("nvidia-smi");
    if (!smi.empty()) {
        std::string log = scratch + "/nvidia-smi.log";
        Outcome o = run_sync({smi, "-L"}, scratch, log, /*timeout_s=*/30);
        std::ifstream in(log);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!o.timed_out && !o.signaled && o.code == 0 && text.find("GPU ") != std::string::npos) {
            g.present = true;
            g.how = "nvidia-smi -L: " + clip(text.substr(0, text.find('\n')), 120);
            return g;
        }
    }
    if (fs::exists("/dev/nvidia0")) {
        g.present = true;
        g.how = "/dev/nvidia0";
        return g;
    }
    g.how = smi.empty() ? "no nvidia-smi on PATH and no /dev/nvidia0"
                        : "nvidia-smi -L lists no GPU and there is no /dev/nvidia0";
    return g;
}

std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string w;
    while (ss >> w) out.push_back(w);
    return out;
}

// One sample's compile (then run) in flight.
struct Task {
    size_t sample = 0;
    bool running_program = false;  // false: nvcc; true: the built program
    pid_t pid = 0;
    Clock::time_point start, deadline;
    bool killed = false;
    std::string dir;
};

struct BuildSettings {
    std::string nvcc;
    std::vector<std::string> flags;
    bool run = false;
    int jobs = 1;
    double timeout_s = 60;
    bool bar = false;
};

void compile_and_run(std::vector<Sample>& samples, const std::vector<size_t>& todo,
                     const BuildSettings& bs, const std::string& work) {
    StopSignals stop_signals;
    std::vector<Task> active;
    // Whatever ends this function early (a signal, an exception) takes the running groups along.
    struct KillActive {
        std::vector<Task>& tasks;
        ~KillActive() {
            for (Task& t : tasks) {
                if (t.pid <= 0) continue;  // kill(-0) would be our own group
                kill(-t.pid, SIGKILL);
                int st = 0;
                waitpid(t.pid, &st, 0);
            }
        }
    } kill_active{active};
    size_t next = 0, done = 0;
    int64_t n_pass = 0, n_fail = 0;
    Progress progress(bs.run ? "compile+run" : "compile", static_cast<int64_t>(todo.size()),
                      "samples", bs.bar);
    auto start_step = [&](Task& t) {
        t.pid = 0;
        t.start = Clock::now();
        t.deadline = t.start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(bs.timeout_s));
        t.killed = false;
        if (!t.running_program) {
            std::vector<std::string> argv{bs.nvcc};
            argv.insert(argv.end(), bs.flags.begin(), bs.flags.end());
            argv.insert(argv.end(), {"-o", "program", "program.cu"});
            t.pid = spawn(argv, t.dir, t.dir + "/compile.log", t.dir);
        } else {
            t.pid = spawn({t.dir + "/program"}, t.dir, t.dir + "/run.log", t.dir);
        }
    };
    auto finish_step = [&](Task& t, int status) -> bool {  // true: the task has another step
        Sample& s = samples[t.sample];
        StepResult& r = t.running_program ? s.run : s.compile;
        r.seconds = std::chrono::duration<double>(Clock::now() - t.start).count();
        const std::string log = t.dir + (t.running_program ? "/run.log" : "/compile.log");
        if (t.killed) {
            r.status = "timeout";
            r.message = strprintf("still running after %gs; killed", bs.timeout_s);
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            r.status = "pass";
        } else {
            r.status = "fail";
            r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            std::string line = t.running_program ? last_output_line(log) : first_error_line(log);
            if (WIFSIGNALED(status))
                line = strprintf("killed by signal %d%s%s", WTERMSIG(status), line.empty() ? "" : ": ",
                                 line.c_str());
            else if (line.empty())
                line = strprintf("exit status %d, no output", WEXITSTATUS(status));
            else if (t.running_program)
                line = strprintf("exit status %d: %s", WEXITSTATUS(status), line.c_str());
            r.message = line;
        }
        if (!t.running_program) {
            if (r.status == "timeout")
                s.rejected.push_back({"compile_timeout", "nvcc " + r.message});
            else if (r.status == "fail")
                s.rejected.push_back({"compile_error", r.message});
            if (r.status == "pass" && bs.run) {
                t.running_program = true;
                return true;
            }
        } else {
            if (r.status == "timeout")
                s.rejected.push_back({"run_timeout", "program " + r.message});
            else if (r.status == "fail")
                s.rejected.push_back({"run_failed", r.message});
        }
        return false;
    };

    while (done < todo.size()) {
        while (active.size() < static_cast<size_t>(bs.jobs) && next < todo.size()) {
            Task t;
            t.sample = todo[next++];
            t.dir = strprintf("%s/L%lld", work.c_str(), (long long)samples[t.sample].line);
            fs::create_directories(t.dir);
            std::ofstream(t.dir + "/program.cu", std::ios::binary) << samples[t.sample].program;
            start_step(t);
            active.push_back(std::move(t));
        }
        bool reaped = false;
        for (size_t i = 0; i < active.size();) {
            Task& t = active[i];
            // Peek without reaping: while the leader is a zombie its group id cannot be reused,
            // so killing the group (leftover children of a compiler driver) hits only ours.
            siginfo_t info{};
            if (waitid(P_PID, static_cast<id_t>(t.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                info.si_pid == t.pid) {
                kill(-t.pid, SIGKILL);
                int st = 0;
                waitpid(t.pid, &st, 0);
                reaped = true;
                if (finish_step(t, st)) {
                    start_step(t);
                    ++i;
                    continue;
                }
                Sample& s = samples[t.sample];
                if (s.compile.status == "pass") ++n_pass; else ++n_fail;
                std::error_code ec;
                fs::remove_all(t.dir, ec);
                active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
                ++done;
                continue;
            }
            if (!t.killed && Clock::now() > t.deadline) {
                kill(-t.pid, SIGKILL);
                t.killed = true;
            }
            ++i;
        }
        if (int sig = g_signal) {
            progress.finish("interrupted");
            throw RuntimeFailure(strprintf("data check interrupted by signal %d; compiles stopped", sig));
        }
        progress.update(static_cast<int64_t>(done),
                        strprintf("%lld passed, %lld failed", (long long)n_pass, (long long)n_fail));
        if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    progress.finish(strprintf("%lld passed, %lld failed", (long long)n_pass, (long long)n_fail));
}

// ---------------------------------------------------------------- statistics and output

json quantiles(std::vector<int64_t> v) {
    if (v.empty()) return nullptr;
    std::sort(v.begin(), v.end());
    // Linear interpolation between order statistics (numpy's default "linear" method).
    auto q = [&](double p) {
        double pos = p * double(v.size() - 1);
        size_t lo = static_cast<size_t>(std::floor(pos));
        size_t hi = std::min(lo + 1, v.size() - 1);
        return double(v[lo]) + (pos - double(lo)) * double(v[hi] - v[lo]);
    };
    double sum = 0;
    for (int64_t x : v) sum += double(x);
    return {{"min", v.front()}, {"mean", sum / double(v.size())}, {"p50", q(0.5)},
            {"p95", q(0.95)},  {"max", v.back()}};
}

void write_atomically(const std::string& path, const std::string& text) {
    fs::path p(path);
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
    std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary);
        if (!f) throw RuntimeFailure("cannot write " + tmp);
        f << text;
        if (!f) throw RuntimeFailure("error writing " + tmp);
    }
    fs::rename(tmp, path);
}

bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(b, ec) && fs::equivalent(a, b, ec)) return true;
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// The tokenizer and chat format of the configuration, when one is configured and present.
struct TextSetup {
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<ChatFormatter> formatter;
    std::string tokenizer_path;
    std::string notice;  // why token statistics are skipped
};

TextSetup load_text(const DataCheckOptions& o, const Config& cfg) {
    TextSetup t;
    t.tokenizer_path = cfg.model.tokenizer.empty() ? cfg.model.path : cfg.model.tokenizer;
    bool asked = !o.config.empty() || !o.tokenizer.empty();
    if (!asked && !fs::exists(t.tokenizer_path)) {
        t.notice = "no tokenizer at " + t.tokenizer_path + " (give --tokenizer PATH or --config FILE)";
        return t;
    }
    ChatFormatOptions fo;
    fo.format = cfg.data.chat_format;
    fo.system_prompt = cfg.data.system_prompt;
    fo.templ = cfg.data.templ;
    try {
        t.tokenizer = tokenizer_load(t.tokenizer_path);
        t.formatter = std::make_unique<ChatFormatter>(*t.tokenizer, fo, tokenizer_dir(t.tokenizer_path));
    } catch (const Error& e) {
        if (asked) throw;  // the user named this tokenizer: its problem is the answer
        t.formatter.reset();
        t.notice = std::string("the default tokenizer is unusable here: ") + e.what();
    }
    return t;
}

}  // namespace

bool data_extract_program(std::string_view text, std::string* program) {
    struct Block {
        std::string lang, body;
    };
    std::vector<Block> blocks;
    size_t pos = 0;
    bool in_fence = false;
    char fence_char = 0;
    size_t fence_len = 0;
    Block cur;
    while (pos <= text.size()) {
        size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        std::string_view line = text.substr(pos, eol - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        size_t indent = line.find_first_not_of(' ');
        bool fence_line = false;
        size_t run = 0;
        char ch = 0;
        if (indent != std::string_view::npos && indent <= 3) {
            ch = line[indent];
            if (ch == '`' || ch == '~') {
                while (indent + run < line.size() && line[indent + run] == ch) ++run;
                fence_line = run >= 3;
            }
        }
        if (!in_fence && fence_line) {
            std::string info(line.substr(indent + run));
            size_t b = info.find_first_not_of(" \t");
            info = b == std::string::npos ? "" : info.substr(b);
            size_t e = info.find_first_of(" \t{");
            std::string lang = info.substr(0, e);
            std::transform(lang.begin(), lang.end(), lang.begin(), [](unsigned char c) { return std::tolower(c); });
            cur = Block{lang, ""};
            in_fence = true;
            fence_char = ch;
            fence_len = run;
        } else if (in_fence && fence_line && ch == fence_char && run >= fence_len &&
                   line.find_first_not_of(" \t", indent + run) == std::string_view::npos) {
            blocks.push_back(std::move(cur));
            in_fence = false;
        } else if (in_fence) {
            cur.body.append(line);
            cur.body += '\n';
        }
        if (eol == text.size()) break;
        pos = eol + 1;
    }
    if (in_fence) blocks.push_back(std::move(cur));  // unclosed: runs to the end

    auto has_main = [](const std::string& body) {
        for (size_t p = body.find("main"); p != std::string::npos; p = body.find("main", p + 4)) {
            bool start_ok = p == 0 || !(std::isalnum((unsigned char)body[p - 1]) || body[p - 1] == '_');
            size_t q = body.find_first_not_of(" \t", p + 4);
            if (start_ok && q != std::string::npos && body[q] == '(') return true;
        }
        return false;
    };
    auto pick = [&](auto&& accept) -> bool {
        const Block* first = nullptr;
        for (const Block& b : blocks) {
            if (!accept(b)) continue;
            if (has_main(b.body)) {
                *program = b.body;
                return true;
            }
            if (!first) first = &b;
        }
        if (first) *program = first->body;
        return first != nullptr;
    };
    if (pick([](const Block& b) { return b.lang == "cuda" || b.lang == "cu" || b.lang == "cuh"; }))
        return true;
    return pick([](const Block& b) {
        static const char* kLangs[] = {"", "c", "cpp", "c++", "cc", "cxx"};
        bool lang_ok = std::any_of(std::begin(kLangs), std::end(kLangs),
                                   [&](const char* l) { return b.lang == l; });
        return lang_ok && b.body.find("__global__") != std::string::npos;
    });
}

DataCheckSummary data_check(const DataCheckOptions& o) {
    if (o.input.empty()) throw UsageError("data check: no input file given");
    if (!fs::is_regular_file(o.input)) throw InputError("cannot open data file " + o.input);
    for (const std::string* p : {&o.out, &o.report})
        if (!p->empty() && same_file(o.input, *p))
            throw UsageError("data check never modifies its input: " + *p + " is the input file");
    if (!o.out.empty() && !o.report.empty() && same_file(o.out, o.report))
        throw UsageError("--out and --report name the same file " + o.out);
    if (o.timeout_s <= 0) throw UsageError("--timeout must be positive");

    std::vector<Override> overrides;
    if (!o.tokenizer.empty()) overrides.push_back({"model.tokenizer", o.tokenizer});
    Config cfg = config_load(o.config, overrides);
    const bool replace_utf8 = cfg.data.invalid_utf8 == "replace";
    TaggerOptions tagger_opts;
    tagger_opts.device_functions = cfg.tagger.device_functions;

    // nvcc is looked for before any work, so a missing compiler fails fast.
    const bool compile = o.compile || o.run;  // --run builds first
    std::string nvcc;
    if (compile) {
        nvcc = !o.nvcc.empty() ? find_program(o.nvcc) : find_program("nvcc");
        if (nvcc.empty() && o.nvcc.empty() && access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
            nvcc = "/usr/local/cuda/bin/nvcc";
        if (nvcc.empty())
            throw UsageError(o.nvcc.empty()
                                 ? "--compile needs nvcc: none on PATH or at /usr/local/cuda/bin/nvcc "
                                   "(install the CUDA toolkit or pass --nvcc PATH)"
                                 : "--compile: nvcc '" + o.nvcc + "' not found or not executable");
    }

    int64_t n_lines = 0;
    std::vector<Sample> samples = read_samples(o.input, &n_lines);

    // 1. Records: UTF-8, JSON, schema, empty fields.
    for (Sample& s : samples) {
        RecordProblem problem;
        std::string fixed;
        s.parsed = data_parse_record(s.raw, replace_utf8, &s.conv, &problem, &fixed);
        if (!s.parsed) {
            s.rejected.push_back({problem.code, problem.message});
            continue;
        }
        // The filtered file must load without data.invalid_utf8=replace: it gets the repaired line.
        s.written = fixed.empty() ? s.raw : fixed;
        if (!fixed.empty())
            s.warnings.push_back({"invalid_utf8_replaced", "invalid UTF-8 replaced by U+FFFD"});
    }
    // 2. Duplicates among the well-formed samples, the first occurrence kept.
    mark_duplicates(samples);

    // 3. Token lengths with the configured tokenizer and chat format; tagger coverage.
    TextSetup text = load_text(o, cfg);
    Progress scan(text.formatter ? "tokenize+tag" : "tag", static_cast<int64_t>(samples.size()), "samples",
                  progress_bar_wanted(o.progress));
    for (size_t i = 0; i < samples.size(); ++i) {
        Sample& s = samples[i];
        scan.update(static_cast<int64_t>(i));
        if (!s.ok()) continue;
        uint32_t bits = 0;
        for (const Message& m : s.conv.messages)
            if (m.role == "assistant" || m.role == kTextRole)
                for (const TagSpan& t : tag_text(m.content, tagger_opts)) bits |= t.bits;
        s.tag_bits = bits;
        s.tagged = true;
        if (!(bits & kTagKernel)) s.warnings.push_back({"no_kernel", "the tagger found no kernel body"});
        if (!(bits & kTagLaunch)) s.warnings.push_back({"no_launch", "the tagger found no kernel launch"});
        if (text.formatter) {
            FormattedSample f;
            try {
                f = text.formatter->format(s.conv);
            } catch (const InputError& e) {
                s.rejected.push_back({"format_error", e.what()});
                continue;
            }
            s.n_tokens = static_cast<int64_t>(f.ids.size());
            s.n_response_tokens = 0;
            for (size_t t = 0; t < f.ids.size(); ++t) s.n_response_tokens += f.trainable[t] != 0;
            if (s.n_tokens > cfg.data.max_seq_len)
                s.warnings.push_back(
                    {"too_long", strprintf("%lld tokens > data.max_seq_len %lld: the trainer %s it",
                                           (long long)s.n_tokens, (long long)cfg.data.max_seq_len,
                                           cfg.data.truncation == "drop" ? "drops" : "truncates")});
        }
    }

    scan.update(static_cast<int64_t>(samples.size()));
    scan.finish();

    // 4. Compile (and run) the programs of the samples still standing.
    json compile_info = nullptr, run_info = nullptr;
    if (compile) {
        GpuProbe gpu;
        BuildSettings bs;
        bs.nvcc = nvcc;
        bs.flags = split_words(o.nvcc_flags);
        bs.jobs = o.jobs > 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
        bs.timeout_s = o.timeout_s;
        bs.bar = progress_bar_wanted(o.progress);
        TempDir work;
        Outcome v = run_sync({nvcc, "--version"}, work.path(), work.path() + "/nvcc-version.log", 60);
        if (v.timed_out || v.signaled || v.code != 0)
            throw UsageError("--compile: " + nvcc + " --version failed; is it a working nvcc?");
        std::string version;
        for (const std::string& l : read_lines(work.path() + "/nvcc-version.log"))
            if (l.find("release") != std::string::npos) version = "nvcc " + l.substr(l.rfind(' ') + 1);
        if (o.run) {
            gpu = probe_gpu(work.path());
            bs.run = gpu.present;
            if (gpu.present) bs.flags.push_back("-arch=native");
            else std::printf("notice: --run skipped: no GPU found (%s); programs are only compiled\n",
                             gpu.how.c_str());
        }
        std::vector<size_t> todo;
        for (size_t i = 0; i < samples.size(); ++i) {
            Sample& s = samples[i];
            if (!s.ok()) continue;
            std::string program;
            bool found = false;
            for (auto it = s.conv.messages.rbegin(); it != s.conv.messages.rend() && !found; ++it)
                if (it->role == "assistant" || it->role == kTextRole)
                    found = data_extract_program(it->content, &program);
            if (!found) {
                s.rejected.push_back({"no_program", "no ```cuda code block with a program to compile"});
                continue;
            }
            s.program = std::move(program);
            todo.push_back(i);
        }
        std::string flags_text;
        for (const std::string& f : bs.flags) flags_text += (flags_text.empty() ? "" : " ") + f;
        compile_info = {{"nvcc", nvcc}, {"version", version}, {"flags", flags_text},
                        {"jobs", bs.jobs}, {"timeout_s", bs.timeout_s}};
        if (o.run) run_info = {{"gpu", gpu.present}, {"probe", gpu.how}};
        compile_and_run(samples, todo, bs, work.path());
    }

    // 5. Verdicts, outputs, summary.
    DataCheckSummary sum;
    sum.lines = n_lines;
    sum.samples = static_cast<int64_t>(samples.size());
    std::map<std::string, int64_t> reasons, warnings;
    std::vector<int64_t> tok_total, tok_resp;
    int64_t n_no_kernel = 0, n_no_launch = 0, n_too_long = 0;
    int64_t c_pass = 0, c_fail = 0, c_timeout = 0, r_pass = 0, r_fail = 0, r_timeout = 0;
    std::string filtered;
    json rows = json::array();
    for (const Sample& s : samples) {
        if (s.ok()) {
            ++sum.kept;
            if (!s.warnings.empty()) ++sum.warnings;
            filtered += s.written;
            filtered += '\n';
            if (s.n_tokens >= 0) {
                tok_total.push_back(s.n_tokens);
                tok_resp.push_back(s.n_response_tokens);
            }
        } else {
            ++sum.rejected;
            ++reasons[s.rejected.front().code];
        }
        for (const Finding& w : s.warnings) {
            if (!s.ok()) break;  // the counts describe the kept samples
            ++warnings[w.code];
            n_no_kernel += w.code == "no_kernel";
            n_no_launch += w.code == "no_launch";
            n_too_long += w.code == "too_long";
        }
        c_pass += s.compile.status == "pass";
        c_fail += s.compile.status == "fail";
        c_timeout += s.compile.status == "timeout";
        r_pass += s.run.status == "pass";
        r_fail += s.run.status == "fail";
        r_timeout += s.run.status == "timeout";

        json row = {{"line", s.line}, {"status", !s.ok() ? "rejected" : s.warnings.empty() ? "ok" : "warning"}};
        if (s.parsed && !s.conv.id.empty()) row["id"] = s.conv.id;
        auto findings = [](const std::vector<Finding>& v) {
            json a = json::array();
            for (const Finding& f : v) a.push_back({{"code", f.code}, {"message", f.message}});
            return a;
        };
        row["reasons"] = findings(s.rejected);
        row["warnings"] = findings(s.warnings);
        if (s.n_tokens >= 0) row["tokens"] = {{"total", s.n_tokens}, {"response", s.n_response_tokens}};
        if (s.tagged) row["tags"] = {{"kernel", bool(s.tag_bits & kTagKernel)}, {"launch", bool(s.tag_bits & kTagLaunch)}};
        auto step = [](const StepResult& r) {
            json j = {{"status", r.status}, {"seconds", std::round(r.seconds * 100) / 100}};
            if (r.status == "fail") j["exit_code"] = r.exit_code;
            if (!r.message.empty()) j["message"] = r.message;
            return j;
        };
        if (compile) row["compile"] = step(s.compile);
        if (o.run) row["run"] = step(s.run);
        rows.push_back(std::move(row));
    }

    json rep;
    rep["input"] = o.input;
    rep["lines"] = sum.lines;
    rep["samples"] = sum.samples;
    rep["kept"] = sum.kept;
    rep["rejected"] = sum.rejected;
    rep["warned"] = sum.warnings;
    rep["rejected_by_reason"] = reasons;
    rep["warnings_by_code"] = warnings;
    if (text.formatter) {
        rep["tokens"] = {{"tokenizer", text.tokenizer_path}, {"chat_format", text.formatter->name()},
                         {"max_seq_len", cfg.data.max_seq_len}, {"over_max_seq_len", n_too_long},
                         {"total", quantiles(tok_total)}, {"response", quantiles(tok_resp)}};
    } else {
        rep["tokens"] = {{"skipped", text.notice}};
    }
    rep["tagger"] = {{"no_kernel", n_no_kernel}, {"no_launch", n_no_launch}};
    if (compile) {
        compile_info["passed"] = c_pass;
        compile_info["failed"] = c_fail;
        compile_info["timed_out"] = c_timeout;
        rep["compile"] = compile_info;
    }
    if (o.run) {
        run_info["passed"] = r_pass;
        run_info["failed"] = r_fail;
        run_info["timed_out"] = r_timeout;
        rep["run"] = run_info;
    }
    rep["output"] = o.out.empty() ? json(nullptr) : json(o.out);
    rep["per_sample"] = std::move(rows);

    if (!o.out.empty()) write_atomically(o.out, filtered);
    if (!o.report.empty()) write_atomically(o.report, rep.dump(2) + "\n");

    // Console summary.
    std::printf("data check %s: %lld samples in %lld lines: %lld kept (%lld with warnings), %lld rejected\n",
                o.input.c_str(), (long long)sum.samples, (long long)sum.lines, (long long)sum.kept,
                (long long)sum.warnings, (long long)sum.rejected);
    auto counts = [](const std::map<std::string, int64_t>& m) {
        std::string s;
        for (const auto& [k, v] : m) s += strprintf("%s%s %lld", s.empty() ? "" : ", ", k.c_str(), (long long)v);
        return s;
    };
    if (!reasons.empty()) std::printf("  rejected: %s\n", counts(reasons).c_str());
    if (!warnings.empty()) std::printf("  warnings: %s\n", counts(warnings).c_str());
    if (text.formatter && !tok_total.empty()) {
        json t = quantiles(tok_total), r = quantiles(tok_resp);
        std::printf("  tokens (%s, %s): total min %lld / mean %.0f / p95 %.0f / max %lld; response mean %.0f; "
                    "over data.max_seq_len %lld: %lld\n",
                    text.formatter->name().c_str(), text.tokenizer_path.c_str(), t["min"].get<long long>(),
                    t["mean"].get<double>(), t["p95"].get<double>(), t["max"].get<long long>(),
                    r["mean"].get<double>(), (long long)cfg.data.max_seq_len, (long long)n_too_long);
    } else if (!text.formatter) {
        std::printf("  tokens: skipped: %s\n", text.notice.c_str());
    }
    std::printf("  tagger: %lld kept sample(s) without a kernel, %lld without a launch\n",
                (long long)n_no_kernel, (long long)n_no_launch);
    if (compile)
        std::printf("  compile (%s, %s, %d jobs, timeout %gs): %lld passed, %lld failed, %lld timed out\n",
                    compile_info["version"].get<std::string>().c_str(),
                    compile_info["flags"].get<std::string>().c_str(), compile_info["jobs"].get<int>(),
                    o.timeout_s, (long long)c_pass, (long long)c_fail, (long long)c_timeout);
    if (o.run && run_info["gpu"].get<bool>())
        std::printf("  run (%s): %lld passed, %lld failed, %lld timed out\n",
                    run_info["probe"].get<std::string>().c_str(), (long long)r_pass, (long long)r_fail,
                    (long long)r_timeout);
    const size_t kMaxListed = 50;
    size_t listed = 0, unlisted = 0;
    for (const Sample& s : samples) {
        if (s.ok() && s.warnings.empty()) continue;
        if (listed == kMaxListed) {
            ++unlisted;
            continue;
        }
        ++listed;
        std::string id = s.parsed && !s.conv.id.empty() ? " (" + clip(s.conv.id, 60) + ")" : "";
        const std::vector<Finding>& f = s.ok() ? s.warnings : s.rejected;
        std::string what;
        for (const Finding& x : f) what += (what.empty() ? "" : "; ") + x.code + ": " + x.message;
        std::printf("  line %lld%s %s: %s\n", (long long)s.line, id.c_str(), s.ok() ? "warning" : "REJECTED",
                    what.c_str());
    }
    if (unlisted) std::printf("  ... %zu more in the report\n", unlisted);
    if (!o.out.empty()) std::printf("  filtered: %s (%lld samples)\n", o.out.c_str(), (long long)sum.kept);
    if (!o.report.empty()) std::printf("  report: %s\n", o.report.c_str());
    std::fflush(stdout);
    return sum;
}

}  // namespace cuset
