// The scripts, the captured calls and the emulated extensions' toolchain of KernelBench candidates
// (judge/kernelbench_judge.h); the stages themselves run in the runner (judge/runner.cpp).
#include "cuset/judge/kernelbench_judge.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/json_io.h"
#include "cuset/core/process.h"
#include "cuset/judge/toolchain.h"

namespace fs = std::filesystem;

namespace cuset::judge {

namespace {

const std::string& embedded(const std::string& rel) {
    for (const auto& [path, text] : kernelbench_files())
        if (path == rel) return text;
    throw RuntimeFailure("judge: no embedded KernelBench file " + rel);
}

// A Python string literal of `s` (JSON's escapes are Python's; bytes that are not UTF-8 replaced).
std::string py_string(const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string py_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += py_string(items[i]);
    }
    return out + "]";
}

// The shortest text that reads back as `v` (also Python's repr of a float).
std::string number(double v) { return nlohmann::json(v).dump(); }

std::vector<std::string> trial_files(const char* stem, int trials) {
    std::vector<std::string> out;
    for (int k = 0; k < trials; ++k) {
        std::string f = "data/";
        f += stem;
        f += std::to_string(k);
        f += ".bin";
        out.push_back(std::move(f));
    }
    return out;
}

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw RuntimeFailure("judge: cannot write " + p.string());
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

KernelBenchScripts kernelbench_scripts(const KernelBenchProblemCheck& p, int64_t max_input_elements) {
    const int trials = std::max(1, p.trials) + std::max(0, p.extra_trials);
    const std::string source = "KB_SOURCE = " + py_string(p.source) + "\n";
    const std::string precision = "\"precision\": " + py_string(p.precision);
    const std::string seed = "\"seed\": " + std::to_string(p.seed);
    // The extra trials' seed (the reference stage's only: the candidate's run is not told which
    // trials are KernelBench's): from the problem's text, so that a problem gets the same trials
    // in every run and verdicts repeat, and never KernelBench's.
    const std::string extra_seed =
        std::to_string(std::stoull(Hasher().add("cuset-kernelbench-extra-trials").add(p.source).hex().substr(0, 8),
                                   nullptr, 16));
    const std::string extra = "\"kernelbench_trials\": " + std::to_string(std::max(1, p.trials)) +
                              ", \"extra_seed\": " + extra_seed;
    const std::string inputs = "\"inputs\": " + py_list(trial_files("input_t", trials)) +
                               ", \"inputs_manifest\": \"data/inputs.json\"";
    const std::string refs = "\"refs\": " + py_list(trial_files("ref_t", trials)) + ", \"refs_manifest\": \"data/refs.json\"";
    const std::string outputs = "\"outputs\": " + py_list(trial_files("output_t", trials)) +
                                ", \"outputs_manifest\": \"data/outputs.json\"";
    const std::string& common = embedded("common.py");
    KernelBenchScripts s;
    s.gen_py = source + "KB = {" + precision + ", " + seed + ", " + extra + ", \"max_input_elements\": " +
               std::to_string(std::max<int64_t>(0, max_input_elements)) + ", " + inputs + ", " + refs + "}\n" + common +
               embedded("reference.py");
    s.harness_py = source + "KB = {" + precision + ", " + seed + ", " + inputs + ", " + outputs + "}\n" + common +
                   embedded("candidate.py");
    s.compare_py = "KB = {\"tolerance\": " + number(p.tolerance) + ", " + refs + ", " + outputs + "}\n" + common +
                   embedded("compare.py");
    return s;
}

std::vector<KernelBenchInclude> kernelbench_includes(const std::string& unit) {
    std::vector<KernelBenchInclude> out;
    for (size_t b = 0; b < unit.size();) {
        const size_t e = std::min(unit.find('\n', b), unit.size());
        const std::string_view line(unit.data() + b, e - b);
        const size_t begin = b;
        b = e + 1;
        size_t i = line.find_first_not_of(" \t");
        if (i == std::string_view::npos || line[i] != '#') continue;
        i = line.find_first_not_of(" \t", i + 1);
        if (i == std::string_view::npos || line.compare(i, 7, "include") != 0) continue;
        i = line.find_first_not_of(" \t", i + 7);
        if (i == std::string_view::npos || (line[i] != '"' && line[i] != '<')) continue;
        const size_t close = line.find(line[i] == '"' ? '"' : '>', i + 1);
        if (close == std::string_view::npos) continue;
        out.push_back({begin, e, std::string(line.substr(i + 1, close - i - 1))});
    }
    return out;
}

std::string kernelbench_foreign_include(const std::string& unit) {
    for (const KernelBenchInclude& inc : kernelbench_includes(unit)) {
        const std::string& path = inc.path;
        if (path.empty()) continue;
        bool climbs = false;
        for (size_t p = 0; p < path.size();) {
            const size_t q = std::min(path.find('/', p), path.size());
            if (path.compare(p, q - p, "..") == 0) climbs = true;
            p = q + 1;
        }
        if (path[0] == '/' || climbs) return path;
    }
    return "";
}

std::string kernelbench_size_note(const std::string& out) {
    const std::string key = "cuset-kernelbench-scaled: ";
    const size_t at = out.rfind(key);
    if (at == std::string::npos) return "";
    const nlohmann::json j = nlohmann::json::parse(first_line(out.substr(at + key.size())), nullptr, false);
    if (!j.is_object() || j.empty()) return "";
    std::string note = "emulated at reduced sizes:";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (!it.value().is_array() || it.value().size() != 2) continue;
        note += first ? " " : ", ";
        first = false;
        note += it.key() + " " + it.value()[0].dump() + " -> " + it.value()[1].dump();
    }
    return note;
}

std::string kernelbench_checked_status(const std::string& out, std::string* detail) {
    const std::string key = "cuset-kernelbench-status: ";
    std::vector<std::string> lines;
    for (size_t b = 0; b <= out.size();) {
        const size_t e = std::min(out.find('\n', b), out.size());
        lines.push_back(out.substr(b, e - b));
        b = e + 1;
    }
    for (size_t i = lines.size(); i-- > 0;)
        if (lines[i].rfind(key, 0) == 0) {
            if (detail) *detail = i > 0 ? lines[i - 1] : "";
            return lines[i].substr(key.size());
        }
    return "";
}

std::vector<KernelBenchCall> parse_kernelbench_calls(const std::string& text, std::string* error) {
    std::vector<KernelBenchCall> calls;
    const std::string depth = json_depth_problem(text);
    const nlohmann::json j = depth.empty() ? nlohmann::json::parse(text, nullptr, false) : nlohmann::json();
    auto fail = [&](const std::string& why) {
        *error = why;
        calls.clear();
        return calls;
    };
    if (!j.is_array()) return fail("build/calls.json is not a JSON list");
    for (const nlohmann::json& c : j) {
        if (!c.is_object() || !c.contains("main_cpp") || !c["main_cpp"].is_string() || !c.contains("cuda_cu") ||
            !c["cuda_cu"].is_string())
            return fail("build/calls.json holds an entry that is not {main_cpp, cuda_cu}");
        calls.push_back({c["main_cpp"].get<std::string>(), c["cuda_cu"].get<std::string>()});
    }
    error->clear();
    return calls;
}

std::string kernelbench_calls_json(const std::vector<KernelBenchCall>& calls) {
    nlohmann::json j = nlohmann::json::array();
    for (const KernelBenchCall& c : calls) j.push_back({{"main_cpp", c.main_cpp}, {"cuda_cu", c.cuda_cu}});
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TorchBuildInfo torch_build_info(const std::string& python) {
    TorchBuildInfo info;
    if (python.empty()) {
        info.error = "no Python was found (set eval.python)";
        return info;
    }
    ProcessOptions po;
    po.argv = {python, "-I", "-c",
               "import json, sysconfig, torch, torch.utils.cpp_extension as c\n"
               "print(json.dumps({'include': c.include_paths(), 'lib': c.library_paths(), "
               "'python': sysconfig.get_paths()['include'], 'abi': int(torch._C._GLIBCXX_USE_CXX11_ABI), "
               "'version': torch.__version__, 'root': __import__('os').path.dirname(torch.__file__)}))"};
    po.timeout_s = 120;
    ProcessResult r;
    try {
        r = process_run(po);
    } catch (const std::exception& e) {
        info.error = std::string("cannot run ") + python + ": " + e.what();
        return info;
    }
    if (!r.ok()) {
        info.error = python + " cannot import torch: " + last_output_line(r.err);
        return info;
    }
    // The last line, whole (torch may print warnings before it).
    std::string line = r.out.substr(0, r.out.find_last_not_of(" \r\n") + 1);
    line = line.substr(line.rfind('\n') == std::string::npos ? 0 : line.rfind('\n') + 1);
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    try {
        for (const auto& d : j.at("include")) info.include_dirs.push_back(d.get<std::string>());
        info.include_dirs.push_back(j.at("python").get<std::string>());
        for (const auto& d : j.at("lib")) info.library_dirs.push_back(d.get<std::string>());
        info.cxx11_abi = j.at("abi").get<int>();
        info.version = j.at("version").get<std::string>();
        info.root = j.at("root").get<std::string>();
    } catch (const std::exception&) {
        info.error = python + " did not say where torch's headers are: " + last_output_line(r.out);
    }
    return info;
}

KernelBenchToolchain prepare_kernelbench_toolchain(const std::string& cxx, const std::string& emu_dir,
                                                   const std::vector<std::string>& emu_flags, const TorchBuildInfo& torch,
                                                   const std::string& cache_root) {
    KernelBenchToolchain tc;
    if (!torch.error.empty()) {
        tc.error = torch.error;
        return tc;
    }
    // The emulator's flags, in C++20 (torch's headers need it) and position-independent; the
    // stand-in headers before torch's, which come after the toolkit's.
    std::vector<std::string> flags;
    for (const std::string& f : emu_flags) flags.push_back(f == "-std=gnu++17" ? "-std=gnu++20" : f);
    Hasher key;
    key.add(torch.version).add(emu_dir);
    for (const std::string& f : flags) key.add(f);
    for (const auto& [rel, text] : kernelbench_files()) key.add(rel).add(text);
    tc.dir = (fs::path(cache_root) / ("kernelbench-" + key.hex())).string();
    flags.insert(flags.end(), {"-fPIC", "-I", tc.dir + "/include"});
    for (const std::string& d : torch.include_dirs) flags.insert(flags.end(), {"-I", d});
    flags.push_back("-DTORCH_API_INCLUDE_EXTENSION_H");
    flags.push_back("-D_GLIBCXX_USE_CXX11_ABI=" + std::to_string(torch.cxx11_abi));
    const fs::path dir(tc.dir);
    tc.flags = flags;
    tc.flags.insert(tc.flags.end(), {"-include", tc.dir + "/prelude.h"});
    tc.link = {tc.dir + "/cuemu_pic.o"};
    for (const std::string& d : torch.library_dirs) tc.link.push_back("-L" + d);
    // Symbols bound inside the extension: the emulator's CUDA runtime, not the real one that
    // torch's CUDA libraries bring into the process.
    tc.link.insert(tc.link.end(), {"-lc10", "-ltorch", "-ltorch_cpu", "-ltorch_python", "-Wl,-Bsymbolic"});
    tc.device_library = tc.dir + "/device.so";
    std::vector<std::string> library = {"-shared", tc.dir + "/device.cpp", "-o", tc.device_library};
    for (const std::string& d : torch.library_dirs) library.push_back("-L" + d);
    library.push_back("-lc10");
    // torch/extension.h precompiled: a build reads it in about a second instead of parsing it
    // (a minute).
    tc.error = build_cached_runtime(
        cxx, flags, tc.dir,
        [&]() -> std::string {
            try {
                for (const auto& [rel, text] : kernelbench_files())
                    if (rel == "prelude.h" || rel == "device.cpp" || rel.rfind("include/", 0) == 0)
                        write_file(dir / rel, text);
            } catch (const std::exception& e) {
                return e.what();
            }
            return "";
        },
        {emu_dir + "/cuemu.cpp", tc.dir + "/cuemu_pic.o", tc.dir + "/prelude.h", library}, 900,
        "the emulated extensions'");
    return tc;
}

std::string torch_neutral(std::string arg, const TorchBuildInfo& torch) {
    if (torch.root.empty()) return arg;
    const std::string name = "<torch " + torch.version + ">";
    for (size_t at = arg.find(torch.root); at != std::string::npos; at = arg.find(torch.root, at + name.size()))
        arg.replace(at, torch.root.size(), name);
    return arg;
}

std::vector<std::string> kernelbench_cxx_flags(const TorchBuildInfo& torch) {
    std::vector<std::string> f = {"-std=c++20", "-fPIC", "-DTORCH_API_INCLUDE_EXTENSION_H",
                                  "-D_GLIBCXX_USE_CXX11_ABI=" + std::to_string(torch.cxx11_abi)};
    for (const std::string& d : torch.include_dirs) f.insert(f.end(), {"-I", d});
    return f;
}

std::vector<std::string> kernelbench_nvcc_flags(const TorchBuildInfo& torch) {
    std::vector<std::string> f = {"-std=c++20", "--expt-relaxed-constexpr", "-Xcompiler", "-fPIC",
                                  "-DTORCH_API_INCLUDE_EXTENSION_H",
                                  "-D_GLIBCXX_USE_CXX11_ABI=" + std::to_string(torch.cxx11_abi),
                                  "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                                  "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__"};
    for (const std::string& d : torch.include_dirs) f.insert(f.end(), {"-I", d});
    return f;
}

}  // namespace cuset::judge
