// KernelBench's problems as task records, with the prompt its builder sends
// (databuild/kernelbench_tasks.h).
//
// The prompt text here is KernelBench's (github.com/ScalingIntelligence/KernelBench, MIT License,
// Copyright (c) 2023 Anne Ouyang, Simon Guo, Azalia Mirhoseini): the wording of its
// src/kernelbench/prompts/prompts.toml for backend cuda and its one-shot example files, as of commit
// 423217d9fda91e0c2d67e4a43bf62f96f6d104f1, reproduced as data because the prompt cuset sends must
// be KernelBench's byte for byte (tests/fixtures/kernelbench/README.md: how that is checked).
#include "cuset/databuild/kernelbench_tasks.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <system_error>
#include <utility>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/utf8_text.h"
#include "cuset/databuild/module_tasks.h"

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

namespace cuset::databuild {

namespace {

// KernelBench's wording (prompts.toml, backend cuda: {backend_display} is "CUDA operators").
// Its builder composes a prompt of blocks, each ending in one '\n', joined by '\n'.
const char* const kProblemStatement =
    "You write custom CUDA operators to replace the pytorch operators in the given architecture to get speedups.\n"
    "\n"
    "You have complete freedom to choose the set of operators you want to replace. You may make the decision to "
    "replace some operators with custom CUDA operators and leave others unchanged. You may replace multiple "
    "operators with custom implementations, consider operator fusion opportunities (combining multiple operators "
    "into a single kernel, for example, combining matmul+relu), or algorithmic changes (such as online softmax). You "
    "are only limited by your imagination.\n";
const char* const kExampleIntro =
    "Here's an example to show you the syntax of inline embedding custom CUDA operators in PyTorch:";
const char* const kExampleInput = "Example:\n\nInput architecture:\n\n";
const char* const kExampleOutput = "\n\nOptimized with CUDA operators:\n\n";
const char* const kArchitectureLead = "You are given the following architecture:\n\n\n";
const char* const kPrecisionLead = "Note: The kernels should be optimized for ";
const char* const kPrecisionTail = " precision.\n";
const char* const kInstruction =
    "Optimize the architecture named Model with custom CUDA operators! Name your optimized output architecture "
    "ModelNew. Output the new code in codeblocks. Please generate real code, NOT pseudocode, make sure the code "
    "compiles and is fully functional. Just output the new model code, no other text, and NO testing code!\n";

// KernelBench's one-shot example: src/kernelbench/prompts/model_ex_add.py (the input
// architecture) and model_new_ex_add.py (its version with an inline CUDA kernel), byte for byte.
const char* const kExampleArch = R"KB(import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    # randomly generate input tensors based on the model architecture
    a = torch.randn(1, 128).cuda()
    b = torch.randn(1, 128).cuda()
    return [a, b]


def get_init_inputs():
    # randomly generate tensors required for initialization based on the model architecture
    return []
)KB";

const char* const kExampleNew = R"KB(import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

# Define the custom CUDA kernel for element-wise addition
elementwise_add_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void elementwise_add_kernel(const float* a, const float* b, float* out, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) {
        out[idx] = a[idx] + b[idx];
    }
}

torch::Tensor elementwise_add_cuda(torch::Tensor a, torch::Tensor b) {
    auto size = a.numel();
    auto out = torch::zeros_like(a);

    const int block_size = 256;
    const int num_blocks = (size + block_size - 1) / block_size;

    elementwise_add_kernel<<<num_blocks, block_size>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), size);

    return out;
}
"""

elementwise_add_cpp_source = (
    "torch::Tensor elementwise_add_cuda(torch::Tensor a, torch::Tensor b);"
)

# Compile the inline CUDA code for element-wise addition
elementwise_add = load_inline(
    name="elementwise_add",
    cpp_sources=elementwise_add_cpp_source,
    cuda_sources=elementwise_add_source,
    functions=["elementwise_add_cuda"],
    verbose=True,
    extra_cflags=[""],
    extra_ldflags=[""],
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.elementwise_add = elementwise_add

    def forward(self, a, b):
        return self.elementwise_add.elementwise_add_cuda(a, b)
)KB";

// KernelBench's precision_display of each precision.
const char* precision_display(KernelBenchPrecision p) {
    switch (p) {
        case KernelBenchPrecision::kFp16: return "FP16 (16-bit floating point)";
        case KernelBenchPrecision::kBf16: return "BF16 (bfloat16)";
        case KernelBenchPrecision::kFp32: break;
    }
    return "FP32 (32-bit floating point)";
}

std::string rstripped(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' || s.back() == '\r' ||
                          s.back() == '\f' || s.back() == '\v'))
        s.pop_back();
    return s;
}

// Python's text-mode read: "\r\n" and a lone "\r" become "\n".
std::string universal_newlines(const std::string& bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] != '\r') {
            out += bytes[i];
            continue;
        }
        out += '\n';
        if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
    }
    return out;
}

std::string level_folder(int level) {
    std::string s = "level";
    s += std::to_string(level);
    return s;
}

bool has_level_folder(const fs::path& dir) {
    std::error_code ec;
    for (int level = 1; level <= 4; ++level)
        if (fs::is_directory(dir / level_folder(level), ec)) return true;
    return false;
}

// The problem id of a file name as KernelBench takes it (the number before the first '_');
// nullopt when the name does not start with digits and '_'.
std::optional<int64_t> problem_id_of(const std::string& file_name) {
    size_t n = 0;
    while (n < file_name.size() && file_name[n] >= '0' && file_name[n] <= '9') ++n;
    if (n == 0 || n >= file_name.size() || file_name[n] != '_') return std::nullopt;
    if (n > 9) throw InputError("--from-kernelbench: the problem id of '" + file_name + "' has more than 9 digits");
    return std::stoll(file_name.substr(0, n));
}

}  // namespace

const char* kernelbench_option_name(KernelBenchPromptOption option) {
    return option == KernelBenchPromptOption::kZeroShot ? "zero_shot" : "one_shot";
}

const char* kernelbench_precision_name(KernelBenchPrecision precision) {
    switch (precision) {
        case KernelBenchPrecision::kFp16: return "fp16";
        case KernelBenchPrecision::kBf16: return "bf16";
        case KernelBenchPrecision::kFp32: break;
    }
    return "fp32";
}

std::optional<KernelBenchPromptOption> kernelbench_option_named(const std::string& name) {
    for (KernelBenchPromptOption o : {KernelBenchPromptOption::kZeroShot, KernelBenchPromptOption::kOneShot})
        if (name == kernelbench_option_name(o)) return o;
    return std::nullopt;
}

std::optional<KernelBenchPrecision> kernelbench_precision_named(const std::string& name) {
    for (KernelBenchPrecision p : {KernelBenchPrecision::kFp32, KernelBenchPrecision::kFp16, KernelBenchPrecision::kBf16})
        if (name == kernelbench_precision_name(p)) return p;
    return std::nullopt;
}

double kernelbench_tolerance(KernelBenchPrecision precision) {
    return precision == KernelBenchPrecision::kFp32 ? 1e-4 : 1e-2;
}

std::string kernelbench_prompt(const std::string& ref_arch_src, KernelBenchPromptOption option,
                               KernelBenchPrecision precision) {
    std::vector<std::string> blocks;
    blocks.emplace_back(kProblemStatement);
    if (option == KernelBenchPromptOption::kOneShot) {
        // The example entry is stripped as a whole: the output file loses its final newline.
        std::string examples = kExampleIntro;
        examples += "\n\n";
        examples += kExampleInput;
        examples += kExampleArch;
        examples += kExampleOutput;
        examples += rstripped(kExampleNew);
        examples += '\n';
        blocks.push_back(std::move(examples));
    }
    // The module's text goes in as it is: the blocks are stripped before it is put in.
    std::string architecture = kArchitectureLead;
    architecture += ref_arch_src;
    architecture += '\n';
    blocks.push_back(std::move(architecture));
    std::string note = kPrecisionLead;
    note += precision_display(precision);
    note += kPrecisionTail;
    blocks.push_back(std::move(note));
    blocks.emplace_back(kInstruction);

    std::string prompt;
    for (const std::string& b : blocks) {
        if (!prompt.empty()) prompt += '\n';
        prompt += b;
    }
    return prompt;
}

std::string kernelbench_levels_dir(const std::string& dir) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) throw InputError("--from-kernelbench: '" + dir + "' does not exist");
    if (!fs::is_directory(dir, ec))
        throw InputError("--from-kernelbench: '" + dir + "' is not a folder; give a KernelBench checkout or its KernelBench folder");
    if (has_level_folder(dir)) return dir;
    const std::string nested = (fs::path(dir) / "KernelBench").string();
    if (has_level_folder(nested)) return nested;
    throw InputError("--from-kernelbench: no level1 .. level4 folder in '" + dir + "' or '" + nested +
                     "'; give a KernelBench checkout or its KernelBench folder");
}

std::vector<KernelBenchProblem> kernelbench_problems(const std::string& dir, const std::vector<int>& levels) {
    const fs::path root = kernelbench_levels_dir(dir);
    std::vector<int> wanted = levels.empty() ? std::vector<int>{1, 2, 3, 4} : levels;
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    std::vector<KernelBenchProblem> out;
    for (int level : wanted) {
        if (level < 1 || level > 4) throw UsageError("--levels: KernelBench has levels 1 to 4, not " + std::to_string(level));
        const fs::path folder = root / level_folder(level);
        std::error_code ec;
        if (!fs::is_directory(folder, ec)) {
            if (levels.empty()) continue;
            throw InputError("--from-kernelbench: level " + std::to_string(level) + " has no folder '" + folder.string() + "'");
        }
        std::map<int64_t, KernelBenchProblem> by_id;
        for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
            const std::string name = e.path().filename().string();
            if (e.path().extension() != ".py" || !e.is_regular_file(ec)) continue;
            const std::optional<int64_t> id = problem_id_of(name);
            if (!id) continue;
            KernelBenchProblem p;
            p.level = level;
            p.problem_id = *id;
            p.name = name;
            p.path = e.path().string();
            const std::string bytes = read_input_file(p.path, "KernelBench problem");
            if (!utf8_valid(bytes)) throw InputError("--from-kernelbench: '" + p.path + "' is not UTF-8 text");
            p.source = universal_newlines(bytes);
            auto [at, fresh] = by_id.emplace(*id, p);
            if (!fresh) {
                const auto [first, second] = std::minmax(at->second.name, name);
                throw InputError("--from-kernelbench: two level " + std::to_string(level) + " problems of id " +
                                 std::to_string(*id) + " in '" + folder.string() + "': " + first + " and " + second);
            }
        }
        if (ec) throw InputError("--from-kernelbench: cannot list '" + folder.string() + "': " + ec.message());
        if (by_id.empty())
            throw InputError("--from-kernelbench: no problem (<id>_<name>.py) in '" + folder.string() + "'");
        for (auto& [id, p] : by_id) out.push_back(std::move(p));
    }
    return out;
}

std::string top_level_function(const std::string& source, const std::string& name) {
    std::vector<std::string> lines;
    for (size_t b = 0; b <= source.size();) {
        const size_t e = source.find('\n', b);
        lines.push_back(source.substr(b, e == std::string::npos ? std::string::npos : e - b));
        if (e == std::string::npos) break;
        b = e + 1;
    }
    std::string pattern = "def[ \t]+";
    pattern += name;
    pattern += "[ \t]*\\(.*";
    const std::regex def(pattern);
    std::optional<size_t> start;  // the last definition is the one Python keeps
    for (size_t i = 0; i < lines.size(); ++i)
        if (std::regex_match(lines[i], def)) start = i;
    if (!start) return "";
    size_t last = *start;
    for (size_t i = *start + 1; i < lines.size(); ++i) {
        const std::string& l = lines[i];
        if (l.find_first_not_of(" \t\r\f\v") == std::string::npos) continue;  // blank
        if (l[0] != ' ' && l[0] != '\t') break;
        last = i;
    }
    std::string out;
    for (size_t i = *start; i <= last; ++i) {
        out += lines[i];
        if (i < last) out += '\n';
    }
    return out;
}

std::string kernelbench_task_record(const KernelBenchProblem& p, const KernelBenchOptions& o) {
    const std::string stem = fs::path(p.name).stem().string();
    std::string id = level_folder(p.level);
    id += '_';
    id += stem;
    const std::string prompt = kernelbench_prompt(p.source, o.option, o.precision);
    ordered_json t;
    t["id"] = id;
    t["task_name"] = stem;
    t["task_description"] = prompt;
    t["inputs"] = ordered_json::array();
    t["outputs"] = ordered_json::array();
    t["gpu"] = "unknown";
    t["bench.cu"] = "";
    t["gen.py"] = "";
    t["compare.py"] = "";
    for (const char* k : {"level1_prompt", "level2_prompt", "level3_prompt"}) t[k] = prompt;
    t["family"] = "kernelbench";
    t["kernelbench_level"] = p.level;
    t["kernelbench_problem_id"] = p.problem_id;
    t["kernelbench_name"] = p.name;
    t["kernelbench_source"] = p.source;
    t["kernelbench_get_inputs"] = top_level_function(p.source, "get_inputs");
    t["kernelbench_get_init_inputs"] = top_level_function(p.source, "get_init_inputs");
    t["kernelbench_precision"] = kernelbench_precision_name(o.precision);
    t["kernelbench_tolerance"] = kernelbench_tolerance(o.precision);
    t["kernelbench_prompt_option"] = kernelbench_option_name(o.option);
    t["kernelbench_prompt"] = prompt;
    return t.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

std::optional<KernelBenchTask> kernelbench_task_of(const json& record, const std::string& where) {
    if (!record.is_object() || !record.contains("family") || record["family"] != "kernelbench") return std::nullopt;
    const JsonFields f(record, where);
    auto text = [&](const char* key) { return f.string(key); };
    KernelBenchTask t;
    t.id = f.id("id");
    const int64_t level = f.integer("kernelbench_level");
    if (level < 1 || level > 4) throw InputError(where + ": KernelBench task field \"kernelbench_level\" is not 1 to 4");
    t.problem.level = static_cast<int>(level);
    t.problem.problem_id = f.integer("kernelbench_problem_id");
    t.problem.name = text("kernelbench_name");
    t.problem.source = text("kernelbench_source");
    t.get_inputs = text("kernelbench_get_inputs");
    t.get_init_inputs = text("kernelbench_get_init_inputs");
    const std::optional<KernelBenchPrecision> precision = kernelbench_precision_named(text("kernelbench_precision"));
    if (!precision) throw InputError(where + ": KernelBench task field \"kernelbench_precision\" is not fp32, fp16 or bf16");
    t.precision = *precision;
    t.tolerance = f.number("kernelbench_tolerance");
    const std::optional<KernelBenchPromptOption> option = kernelbench_option_named(text("kernelbench_prompt_option"));
    if (!option) throw InputError(where + ": KernelBench task field \"kernelbench_prompt_option\" is not zero_shot or one_shot");
    t.option = *option;
    t.prompt = text("kernelbench_prompt");
    return t;
}

KernelBenchTasks tasks_from_kernelbench(const std::string& dir, const KernelBenchOptions& options) {
    KernelBenchTasks out;
    for (const KernelBenchProblem& p : kernelbench_problems(dir, options.levels)) {
        if (const std::string why = module_static_problem(p.source); !why.empty()) {
            out.problems.push_back(p.path + ": " + why);
            continue;
        }
        out.jsonl += kernelbench_task_record(p, options);
        out.jsonl += '\n';
        ++out.converted;
    }
    return out;
}

}  // namespace cuset::databuild
