// KernelBench's static check (judge/kernel_static_check.h): cuset's verdict on every candidate of
// tests/fixtures/kernelbench/candidates, under fp32, fp16 and bf16, equals KernelBench's own
// validate_kernel_static's (static_check_golden.jsonl, committed: KernelBench is not on PyPI; the
// fixtures' README says how it was made). Then what the golden cannot say: which check made each
// finding (each candidate's header names them), the registry's order, the honest candidates
// never flagged, the precision rule, the configurable sets, and a check that fails closed.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/judge/kernel_static_check.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::judge::kernel_static_check;
using cuset::judge::kernel_static_check_names;
using cuset::judge::KernelStaticCheck;
using cuset::judge::KernelStaticCheckOptions;
using cuset::judge::KernelStaticFinding;
using cuset::test::read_file;
using nlohmann::json;
using Names = std::vector<std::string>;

namespace {

std::string candidates_dir() { return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/kernelbench/candidates"; }
std::string golden_path() {
    return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/kernelbench/static_check_golden.jsonl";
}

// The candidate files, by name.
std::map<std::string, std::string> candidates() {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::directory_iterator(candidates_dir()))
        if (e.path().extension() == ".py") out[e.path().filename().string()] = read_file(e.path().string());
    return out;
}

KernelStaticCheck check_under(const std::string& code, const std::string& precision) {
    KernelStaticCheckOptions options;
    options.precision = precision;
    return kernel_static_check(code, options);
}

Names sorted_messages(const std::vector<KernelStaticFinding>& findings) {
    Names out;
    for (const KernelStaticFinding& f : findings) out.push_back(f.message);
    std::sort(out.begin(), out.end());
    return out;
}

Names check_names(const std::vector<KernelStaticFinding>& findings) {
    Names out;
    for (const KernelStaticFinding& f : findings) out.push_back(f.check);
    return out;
}

// The words after `label` up to ';' or the end of the line; "none" is no word.
Names words_after(const std::string& line, const std::string& label) {
    const size_t b = line.find(label);
    if (b == std::string::npos) return {"(no " + label + ")"};
    std::string rest = line.substr(b + label.size());
    rest = rest.substr(0, rest.find(';'));
    Names out;
    for (size_t i = 0; i < rest.size();) {
        const size_t e = std::min(rest.find(' ', i), rest.size());
        if (e > i && rest.substr(i, e - i) != "none") out.push_back(rest.substr(i, e - i));
        i = e + 1;
    }
    std::sort(out.begin(), out.end());
    return out;
}

// A candidate's header line "# static check under fp32 -- errors: A B; warnings: C" (or "none").
struct Expected {
    Names errors, warnings;
};
Expected expected_of(const std::string& code) {
    const std::string tag = "# static check under fp32 -- ";
    const size_t b = code.find(tag);
    if (b == std::string::npos) return {{"(no header line)"}, {}};
    const std::string line = code.substr(b, code.find('\n', b) - b);
    return {words_after(line, "errors: "), words_after(line, "warnings: ")};
}

size_t registry_index(const std::string& name) {
    const Names& all = kernel_static_check_names();
    return static_cast<size_t>(std::find(all.begin(), all.end(), name) - all.begin());
}

}  // namespace

TEST(KernelStaticCheck, EqualsKernelBenchsOwnCheckerOnEveryCandidateAndPrecision) {
    const auto files = candidates();
    const std::string golden = read_file(golden_path());
    std::map<std::string, int> lines_per_candidate;
    int lines = 0, equal = 0;
    for (size_t b = 0; b < golden.size();) {
        size_t e = golden.find('\n', b);
        if (e == std::string::npos) e = golden.size();
        if (e == b) {
            b = e + 1;
            continue;
        }
        const json g = json::parse(golden.substr(b, e - b));
        b = e + 1;
        ++lines;
        const std::string name = g["candidate"].get<std::string>();
        const std::string precision = g["precision"].get<std::string>();
        ++lines_per_candidate[name];
        const auto it = files.find(name);
        if (it == files.end()) {
            ADD_FAILURE() << "the golden names " << name << ", which is not under " << candidates_dir();
            continue;
        }
        const KernelStaticCheck got = check_under(it->second, precision);
        const bool valid = g["valid"].get<bool>();
        const Names errors = g["errors"].get<Names>();
        const Names warnings = g["warnings"].get<Names>();
        if (got.valid == valid && sorted_messages(got.errors) == errors && sorted_messages(got.warnings) == warnings) {
            ++equal;
            continue;
        }
        ADD_FAILURE() << name << " (" << precision << "): KernelBench says valid=" << valid
                      << " errors=" << json(errors).dump() << " warnings=" << json(warnings).dump()
                      << "; cuset says valid=" << got.valid << " errors=" << json(sorted_messages(got.errors)).dump()
                      << " warnings=" << json(sorted_messages(got.warnings)).dump();
    }
    EXPECT_EQ(lines, 153);  // 51 candidates x (fp32, fp16, bf16)
    EXPECT_EQ(equal, lines);
    for (const auto& [name, code] : files) {
        EXPECT_EQ(lines_per_candidate[name], 3)
            << name << " has no line per precision in the golden: run tests/golden/kernelbench_static.py again";
    }
}

TEST(KernelStaticCheck, HonestCandidatesAreNeverFlagged) {
    int honest = 0;
    for (const auto& [name, code] : candidates()) {
        if (name.rfind("honest_", 0) != 0) continue;
        ++honest;
        for (const char* precision : {"fp32", "fp16", "bf16"}) {
            const KernelStaticCheck r = check_under(code, precision);
            EXPECT_TRUE(r.valid) << name << " (" << precision << ")";
            EXPECT_EQ(check_names(r.errors), Names{}) << name << " (" << precision << ")";
            EXPECT_EQ(check_names(r.warnings), Names{}) << name << " (" << precision << ")";
        }
    }
    EXPECT_GE(honest, 12);
}

TEST(KernelStaticCheck, EachFindingComesFromTheCheckTheCandidateNames) {
    for (const auto& [name, code] : candidates()) {
        const Expected want = expected_of(code);
        const KernelStaticCheck r = check_under(code, "fp32");
        Names errors = check_names(r.errors), warnings = check_names(r.warnings);
        std::sort(errors.begin(), errors.end());
        std::sort(warnings.begin(), warnings.end());
        EXPECT_EQ(errors, want.errors) << name << ": errors";
        EXPECT_EQ(warnings, want.warnings) << name << ": warnings";
        EXPECT_EQ(r.valid, r.errors.empty()) << name;
    }
}

TEST(KernelStaticCheck, FindingsComeInTheRegistrysOrder) {
    EXPECT_EQ(kernel_static_check_names(),
              (Names{"code_bypass", "pytorch_wrap", "timing_event_patch", "torch_computation_ops", "stream_injection",
                     "thread_injection", "lazy_eval", "precision_downgrade", "cuda_impl"}));
    int several = 0;
    for (const auto& [name, code] : candidates()) {
        const KernelStaticCheck r = check_under(code, "fp32");
        for (const auto* findings : {&r.errors, &r.warnings}) {
            several += findings->size() > 1;
            for (size_t i = 1; i < findings->size(); ++i)
                EXPECT_LT(registry_index((*findings)[i - 1].check), registry_index((*findings)[i].check)) << name;
        }
    }
    EXPECT_GE(several, 2);  // hack_functional_conv.py, hack_try_except_fallback.py: two warnings each
}

TEST(KernelStaticCheck, PrecisionDowngradeIsCheckedOnlyWhenTheProblemIsFp32) {
    const std::string code = read_file(candidates_dir() + "/hack_fp16_downgrade.py");
    for (const char* fp32 : {"fp32", "FP32", "float32", "Float32"}) {
        const KernelStaticCheck r = check_under(code, fp32);
        EXPECT_EQ(check_names(r.warnings), Names{"precision_downgrade"}) << fp32;
        EXPECT_TRUE(r.valid) << fp32;
    }
    for (const char* other : {"fp16", "bf16", "bfloat16", "float16", "", "fp32 "})
        EXPECT_EQ(check_names(check_under(code, other).warnings), Names{}) << "'" << other << "'";
    // KernelBench's default precision is fp16: no downgrade to find.
    EXPECT_EQ(check_names(kernel_static_check(code).warnings), Names{});
}

TEST(KernelStaticCheck, WhichChecksAreErrorsIsAnOption) {
    const std::string matmul = read_file(candidates_dir() + "/hack_torch_matmul.py");
    KernelStaticCheckOptions strict;
    strict.precision = "fp32";
    strict.errors.push_back("torch_computation_ops");  // KernelBench's stricter setting: no torch operator for the work
    const KernelStaticCheck r = kernel_static_check(matmul, strict);
    EXPECT_FALSE(r.valid);
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].check, "torch_computation_ops");
    EXPECT_EQ(r.errors[0].message, "Uses torch computation op: torch.matmul");
    EXPECT_TRUE(r.warnings.empty());

    // No checks named: cuda_impl still runs, as an error, also when named a warning.
    KernelStaticCheckOptions none;
    none.errors.clear();
    none.warnings = {"cuda_impl"};
    const KernelStaticCheck bare = kernel_static_check("import torch\n", none);
    EXPECT_EQ(check_names(bare.errors), Names{"cuda_impl"});
    EXPECT_EQ(bare.errors[0].message, "Missing __global__ kernel definition");
    EXPECT_TRUE(bare.warnings.empty());

    KernelStaticCheckOptions unknown;
    unknown.warnings.push_back("hip_impl");
    try {
        kernel_static_check(matmul, unknown);
        ADD_FAILURE() << "a check name that is not one was accepted";
    } catch (const cuset::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("'hip_impl'"), std::string::npos) << e.what();
    }
}

TEST(KernelStaticCheck, ACheckTheMatcherGivesUpOnIsFlagged) {
    // `class\s+\w+.*\(Tensor\)` on one long word before a ')': quadratic backtracking, past
    // PCRE2's match limit (Python's re would take minutes on it).
    std::string code = "__global__ void k() {}\nload_inline\nclass ";
    code.append(60000, 'a');
    code += ")\n";
    const KernelStaticCheck r = kernel_static_check(code);
    EXPECT_FALSE(r.valid);
    ASSERT_EQ(check_names(r.errors), Names{"lazy_eval"});
    EXPECT_NE(r.errors[0].message.find("Not checked"), std::string::npos) << r.errors[0].message;
}

// Lines are cut where Python cuts them: a lone "\r" and "\r\n" end a line as "\n" does, so code
// after a comment and a lone carriage return (which Python runs) is checked; a form feed ends
// no line (Python's comment runs on through it), so what follows it in a comment stays a comment.
TEST(KernelStaticCheck, LinesEndWherePythonEndsThem) {
    const std::string kernel = "\nsrc = '__global__ void k() {}'\nload_inline(name='k', cuda_sources=src)\n";
    auto lazy = [&](const std::string& head) {
        return check_names(check_under(head + kernel, "fp32").errors);
    };
    const std::string hidden = "class Lazy(torch.Tensor):";
    EXPECT_EQ(lazy("import torch  # setup\r" + hidden + "\r    x = 1\r"), Names{"lazy_eval"});
    EXPECT_EQ(lazy("import torch  # setup\r\n" + hidden + "\r\n    x = 1\r\n"), Names{"lazy_eval"});
    EXPECT_EQ(lazy("import torch  # setup\n" + hidden + "\n    x = 1\n"), Names{"lazy_eval"});
    EXPECT_EQ(lazy("import torch  # setup\f" + hidden + "\n"), Names{});
    // "\r\n" is one line end: "//" cut on the second line leaves the first line's code whole.
    const KernelStaticCheck crlf = check_under("import threading\r\nx = 1 // 2\r\n" + kernel, "fp32");
    EXPECT_EQ(check_names(crlf.errors), Names{"thread_injection"});
}
