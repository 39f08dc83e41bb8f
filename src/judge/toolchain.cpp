// Finding nvcc, Python and a GPU; reading error lines (judge/toolchain.h).
#include "cuset/judge/toolchain.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cuset/core/error.h"
#include "cuset/core/process.h"
#include "cuset/core/utf8_text.h"

namespace fs = std::filesystem;

namespace cuset::judge {

namespace {

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Every line kept from a program or a tool is made valid UTF-8 here, where it is read: a byte the
// program printed must never stop a writer of eval.json or the pages.
std::string clip(const std::string& s, size_t n = 240) { return utf8_sanitize(s, n); }

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) out.push_back(trim(l));
    return out;
}

// The folder above this binary's folder (build/cuset-train -> the checkout), "" when unknown.
std::string checkout_of_binary() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return "";
    return exe.parent_path().parent_path().string();
}

}  // namespace

std::string find_program(const std::string& name) {
    std::string found = process_find_program(name);
    if (found.empty()) return "";
    std::error_code ec;
    fs::path abs = fs::absolute(found, ec);
    return ec ? found : abs.lexically_normal().string();
}

std::string find_nvcc(const std::string& configured, const std::string& key) {
    const std::string name = configured.empty() ? "nvcc" : configured;
    std::string nvcc = find_program(name);
    if (nvcc.empty() && name == "nvcc" && ::access("/usr/local/cuda/bin/nvcc", X_OK) == 0) nvcc = "/usr/local/cuda/bin/nvcc";
    if (nvcc.empty())
        throw UsageError(name == "nvcc" ? "cannot find nvcc on PATH or at /usr/local/cuda/bin/nvcc: install the CUDA "
                                          "toolkit, or name it with " + key
                                        : key + ": nvcc '" + name + "' not found or not executable");
    return nvcc;
}

std::string cuda_root_of(const std::string& nvcc) {
    std::error_code ec;
    fs::path real = fs::canonical(nvcc, ec);
    if (ec) real = nvcc;
    return real.parent_path().parent_path().string();
}

PythonInfo find_python(const std::string& configured, const std::string& key) {
    PythonInfo info;
    std::string name = configured;
    if (name.empty()) {
        for (const std::string& root : {checkout_of_binary(), std::string(
#ifdef CUSET_SOURCE_ROOT
                                                                  CUSET_SOURCE_ROOT
#endif
                                                                  )}) {
            if (root.empty()) continue;
            const std::string venv = root + "/.venv/bin/python";
            if (::access(venv.c_str(), X_OK) == 0) {
                name = venv;
                info.origin = "the project's environment";
                break;
            }
        }
        if (name.empty()) {
            name = "python3";
            info.origin = "python3 on PATH";
        }
    } else {
        info.origin = key;
    }
    info.executable = find_program(name);
    if (info.executable.empty())
        throw UsageError("cannot find the Python '" + name + "' that runs gen.py and compare.py; name one with " + key);
    ProcessOptions po;
    po.argv = {info.executable, "-I", "-c",
               "import os, sys; print(sys.prefix); print(sys.base_prefix); "
               "print(os.path.dirname(os.path.realpath(sys.executable))); print('%d.%d.%d' % sys.version_info[:3])"};
    po.timeout_s = 60;
    ProcessResult r = process_run(po);
    std::vector<std::string> lines = lines_of(r.out);
    if (!r.ok() || lines.size() < 4)
        throw UsageError("the Python '" + info.executable + "' (" + key + ") does not run: " +
                         last_output_line(r.err + r.out));
    for (size_t i = 0; i < 3; ++i) {
        std::error_code ec;
        fs::path p = fs::canonical(lines[i], ec);
        std::string s = ec ? lines[i] : p.string();
        // The interpreter's own folder is covered by its prefix; bin/ of a system Python is /usr/bin.
        if (fs::path(s).filename() == "bin") s = fs::path(s).parent_path().string();
        if (std::find(info.roots.begin(), info.roots.end(), s) == info.roots.end()) info.roots.push_back(s);
    }
    // The interpreter as named (a link or a wrapper script) lives in a folder the sandbox must show too.
    const std::string named_dir = fs::path(info.executable).parent_path().string();
    if (std::find(info.roots.begin(), info.roots.end(), named_dir) == info.roots.end()) info.roots.push_back(named_dir);
    info.version = lines[3];
    return info;
}

bool gpu_present(std::string* how) {
    auto say = [&](const std::string& s) {
        if (how) *how = s;
    };
    if (const char* a = std::getenv("CUSET_ASSUME_GPU"); a && (std::string(a) == "0" || std::string(a) == "1")) {
        say(std::string("CUSET_ASSUME_GPU=") + a);
        return std::string(a) == "1";
    }
    std::string smi = process_find_program("nvidia-smi");
    if (!smi.empty()) {
        ProcessOptions po;
        po.argv = {smi, "-L"};
        po.timeout_s = 30;
        po.merge_stderr = true;
        ProcessResult r = process_run(po);
        if (r.ok() && r.out.find("GPU ") != std::string::npos) {
            say("nvidia-smi -L: " + clip(trim(r.out.substr(0, r.out.find('\n'))), 120));
            return true;
        }
    }
    std::error_code ec;
    if (fs::exists("/dev/nvidia0", ec)) {
        say("/dev/nvidia0");
        return true;
    }
    say(smi.empty() ? "no nvidia-smi on PATH and no /dev/nvidia0" : "nvidia-smi -L lists no GPU and there is no /dev/nvidia0");
    return false;
}

std::string first_error_line(const std::string& output) {
    std::string first;
    for (const std::string& line : lines_of(output)) {
        if (line.empty()) continue;
        if (first.empty()) first = line;
        std::string lower = line;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        if (lower.find("error") != std::string::npos || lower.find("undefined reference") != std::string::npos)
            return clip(line);
    }
    return clip(first);
}

std::string last_output_line(const std::string& output) {
    std::vector<std::string> lines = lines_of(output);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (!it->empty()) return clip(*it);
    return "";
}

std::string process_ending(const ProcessResult& r, double timeout_s) {
    if (r.timed_out) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", timeout_s);
        return std::string("timed out after ") + buf + " s";
    }
    if (r.killed) return "stopped";
    if (r.signal) return "killed by signal " + std::to_string(r.signal);
    return "exit status " + std::to_string(r.exit_code);
}

std::string build_cached_runtime(const std::string& cxx, const std::vector<std::string>& flags, const std::string& dir,
                                 const std::function<std::string()>& write_files, const CachedRuntime& runtime,
                                 double timeout_s, const std::string& whose) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return "cannot create " + dir + ": " + ec.message();
    const int lock = ::open((dir + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) ::flock(lock, LOCK_EX);
    struct Unlock {
        int fd;
        ~Unlock() {
            if (fd >= 0) ::close(fd);
        }
    } unlock{lock};
    const std::filesystem::path ready = std::filesystem::path(dir) / "ready";
    if (std::filesystem::exists(ready, ec)) return "";
    if (std::string why = write_files(); !why.empty()) return why;
    std::string error;
    auto build = [&](std::vector<std::string> tail, const char* what) {
        ProcessOptions po;
        po.argv = {cxx};
        po.argv.insert(po.argv.end(), flags.begin(), flags.end());
        po.argv.insert(po.argv.end(), tail.begin(), tail.end());
        po.cwd = dir;
        po.timeout_s = timeout_s;
        po.merge_stderr = true;
        const ProcessResult r = process_run(po);
        if (!r.ok())
            error = whose + " " + what + " does not build (" + process_ending(r, timeout_s) + "): " + first_error_line(r.out);
        return r.ok();
    };
    if (!build({"-c", runtime.source, "-o", runtime.object}, "runtime")) return error;
    if (!build({"-x", "c++-header", runtime.header, "-o", runtime.header + ".gch"}, "precompiled header"))
        std::filesystem::remove(runtime.header + ".gch", ec);
    if (!runtime.library.empty() && !build(runtime.library, "library")) return error;
    std::ofstream out(ready);
    out.close();
    if (!out) throw RuntimeFailure("cannot write '" + ready.string() + "'");
    return "";
}

}  // namespace cuset::judge
