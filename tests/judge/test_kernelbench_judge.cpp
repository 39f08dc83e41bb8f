// The pieces of the KernelBench judge that need no Python (judge/kernelbench_judge.h): the
// stages' scripts and the runner's file rule, what the reference and check stages print, the
// captured calls read as untrusted. The stages themselves run in tests/eval/test_kernelbench_eval.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cuset/judge/kernelbench_judge.h"
#include "cuset/judge/runner.h"
#include "cuset/judge/task_files.h"
#include "test_util.h"

using namespace cuset::judge;

namespace {

std::vector<std::string> named(const char* stem, int n) {
    std::vector<std::string> out;
    for (int k = 0; k < n; ++k) out.push_back(std::string("data/") + stem + std::to_string(k) + ".bin");
    return out;
}

}  // namespace

// What the reference stage writes is told apart by the runner's rule exactly as the stages need:
// the trials' inputs and their manifest reach the candidate, the reference outputs are withheld,
// and the candidate's outputs are what the check copies.
TEST(KernelBenchScripts, TheRunnersFileRuleSeparatesInputsReferencesAndOutputs) {
    KernelBenchProblemCheck p;
    p.source = "import torch\nclass Model(torch.nn.Module):\n    pass\n";
    p.trials = 3;
    // KernelBench's three trials and cuset's extra ones: one file each.
    const int n = p.trials + p.extra_trials;
    ASSERT_EQ(n, 5);
    const KernelBenchScripts s = kernelbench_scripts(p, 0);
    std::vector<std::string> produced = named("input_t", n);
    for (const std::string& f : named("ref_t", n)) produced.push_back(f);
    produced.push_back("data/inputs.json");
    produced.push_back("data/refs.json");
    std::sort(produced.begin(), produced.end());
    const TaskFiles tf = classify_task_files(produced, s.harness_py, {}, s.compare_py);
    ASSERT_EQ(tf.problem, "");
    std::vector<std::string> inputs = named("input_t", n);
    inputs.push_back("data/inputs.json");
    std::sort(inputs.begin(), inputs.end());
    EXPECT_EQ(tf.inputs, inputs);
    std::vector<std::string> withheld = named("ref_t", n);
    withheld.push_back("data/refs.json");
    std::sort(withheld.begin(), withheld.end());
    EXPECT_EQ(tf.withheld, withheld);
    std::vector<std::string> outputs = named("output_t", n);
    outputs.push_back("data/outputs.json");
    std::sort(outputs.begin(), outputs.end());
    EXPECT_EQ(tf.outputs, outputs);
    // The candidate's harness never names a reference output.
    for (const std::string& f : withheld) EXPECT_EQ(s.harness_py.find("\"" + f + "\""), std::string::npos) << f;
}

// The problem's text reaches every script as one Python string literal, whatever it holds; the
// settings as Python literals.
TEST(KernelBenchScripts, TheProblemIsOneStringLiteralAndTheSettingsArePython) {
    KernelBenchProblemCheck p;
    p.source = "s = \"quote\" + '\\\\' + \"\"\"triple\"\"\"\n# naïve\x01\n";
    p.precision = "bf16";
    p.tolerance = 0.01;
    p.seed = 7;
    const KernelBenchScripts s = kernelbench_scripts(p, 1234);
    const std::string literal = "KB_SOURCE = \"s = \\\"quote\\\" + '\\\\\\\\' + \\\"\\\"\\\"triple\\\"\\\"\\\"\\n# naïve\\u0001\\n\"\n";
    EXPECT_EQ(s.gen_py.rfind(literal, 0), 0u) << s.gen_py.substr(0, 200);
    EXPECT_EQ(s.harness_py.rfind(literal, 0), 0u);
    EXPECT_EQ(s.compare_py.find("KB_SOURCE = "), std::string::npos) << "the check needs no problem";
    EXPECT_NE(s.gen_py.find("\"precision\": \"bf16\", \"seed\": 7, \"kernelbench_trials\": 5, \"extra_seed\": "),
              std::string::npos);
    EXPECT_NE(s.gen_py.find(", \"max_input_elements\": 1234"), std::string::npos);
    // Only the reference stage knows which trials are cuset's and their seed.
    for (const char* key : {"kernelbench_trials", "extra_seed"}) {
        EXPECT_EQ(s.harness_py.find(key), std::string::npos) << key;
        EXPECT_EQ(s.compare_py.find(key), std::string::npos) << key;
    }
    EXPECT_NE(s.compare_py.find("KB = {\"tolerance\": 0.01, "), std::string::npos) << s.compare_py.substr(0, 120);
    EXPECT_EQ(kernelbench_scripts(p, -5).gen_py.find("\"max_input_elements\": -5"), std::string::npos);
}

TEST(KernelBenchScripts, TheSizeNoteSaysWhatTheReferenceStageChanged) {
    EXPECT_EQ(kernelbench_size_note("nothing to say\n"), "");
    EXPECT_EQ(kernelbench_size_note("cuset-kernelbench-scaled: {\"batch_size\": [4096, 512], \"dim\": [393216, 48]}\n"),
              "emulated at reduced sizes: batch_size 4096 -> 512, dim 393216 -> 48");
    EXPECT_EQ(kernelbench_size_note("cuset-kernelbench-scaled: not json\n"), "");
}

TEST(KernelBenchScripts, TheCheckedStatusIsTheLineBeforeTheVerdict) {
    std::string detail;
    EXPECT_EQ(kernelbench_checked_status("T\n", &detail), "");
    EXPECT_EQ(kernelbench_checked_status("trial 2: forward changed its input argument(s) [0]\n"
                                         "cuset-kernelbench-status: input-mutated\nF\n",
                                         &detail),
              "input-mutated");
    EXPECT_EQ(detail, "trial 2: forward changed its input argument(s) [0]");
    EXPECT_EQ(kernelbench_checked_status("cuset-kernelbench-status: mismatch\nF", &detail), "mismatch");
    EXPECT_EQ(detail, "");
}

// build/calls.json is written by the candidate's process: anything but a list of {main_cpp,
// cuda_cu} strings is refused with a reason, and nothing of it is kept.
TEST(KernelBenchCalls, TheCapturedCallsAreReadAsUntrusted) {
    std::string error;
    const auto calls = parse_kernelbench_calls(R"([{"main_cpp": "a", "cuda_cu": ""}, {"main_cpp": "b", "cuda_cu": "c"}])", &error);
    EXPECT_EQ(error, "");
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[1].main_cpp, "b");
    EXPECT_EQ(calls[1].cuda_cu, "c");
    EXPECT_EQ(parse_kernelbench_calls(kernelbench_calls_json(calls), &error).size(), 2u);  // written back, read again
    EXPECT_EQ(parse_kernelbench_calls(kernelbench_calls_json(calls), &error)[1].cuda_cu, "c");
    EXPECT_TRUE(parse_kernelbench_calls("[]", &error).empty());
    EXPECT_EQ(error, "");
    for (const char* bad : {"{}", "[1]", R"([{"main_cpp": 1, "cuda_cu": ""}])", R"([{"main_cpp": "a"}])", "not json",
                            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}) {
        error.clear();
        EXPECT_TRUE(parse_kernelbench_calls(bad, &error).empty()) << bad;
        EXPECT_FALSE(error.empty()) << bad;
    }
}

// The embedded files are the folder's: the three scripts, the prelude and the stand-in headers.
TEST(KernelBenchFiles, TheScriptsAndHeadersAreEmbedded) {
    std::vector<std::string> paths;
    for (const auto& [path, text] : kernelbench_files()) {
        paths.push_back(path);
        EXPECT_FALSE(text.empty()) << path;
    }
    for (const char* want : {"common.py", "reference.py", "candidate.py", "compare.py", "prelude.h", "include/ATen/cuda/CUDAContext.h"})
        EXPECT_NE(std::find(paths.begin(), paths.end(), want), paths.end()) << want;
}

// An #include that names a file by an absolute path or climbs out of the folder is the
// candidate's error; headers by name (the toolkit's, torch's, the system's) are not.
TEST(KernelBenchIncludes, AnIncludeOutsideTheCandidatesSourcesIsFound) {
    EXPECT_EQ(kernelbench_foreign_include("#include <torch/extension.h>\n#include \"cuda_fp16.h\"\n#include <ATen/cuda/CUDAContext.h>\n"),
              "");
    EXPECT_EQ(kernelbench_foreign_include("#include \"/dev/zero\"\n"), "/dev/zero");
    EXPECT_EQ(kernelbench_foreign_include("int x;\n  #  include   </home/u/x.h>\n"), "/home/u/x.h");
    EXPECT_EQ(kernelbench_foreign_include("#include \"a/../../b.h\"\n"), "a/../../b.h");
    EXPECT_EQ(kernelbench_foreign_include("#include \"..\"\n"), "..");
    EXPECT_EQ(kernelbench_foreign_include("#include \"x..h\"\n#include \"..x/y.h\"\n"), "") << "a name holding dots";
    EXPECT_EQ(kernelbench_foreign_include("#define P \"/dev/zero\"\n#include P\n"), "") << "a macro is the compilers'";
    EXPECT_EQ(kernelbench_foreign_include("// #include is named in a comment: \"/x\"\n"), "");
}

// The include lines are read with where they lie (newline excluded) and the name between the
// quotes or brackets; a line that names no literal file is not one of them.
TEST(KernelBenchIncludes, TheLinesAreReadWithWhereTheyLie) {
    const std::string unit = "#include <torch/extension.h>\nint x;\n  #  include \"a.h\" // why\n#include P\n#include <b.h>";
    const std::vector<KernelBenchInclude> got = kernelbench_includes(unit);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].path, "torch/extension.h");
    EXPECT_EQ(unit.substr(got[0].begin, got[0].end - got[0].begin), "#include <torch/extension.h>");
    EXPECT_EQ(got[1].path, "a.h");
    EXPECT_EQ(unit.substr(got[1].begin, got[1].end - got[1].begin), "  #  include \"a.h\" // why");
    EXPECT_EQ(got[2].path, "b.h");
    EXPECT_EQ(got[2].end, unit.size()) << "the last line has no newline";
}

// Every status's name reads back as the status, and the kinds are what eval's rates, data build
// and GRPO count by: pass and compiled succeeded; gen-failed, task-error and unjudged judged
// nothing.
TEST(JudgeStatuses, EachNameReadsBackAsItsStatus) {
    for (int i = 0; i < kStatusCount; ++i) {
        const Status s = static_cast<Status>(i);
        const std::optional<Status> back = status_from_name(status_name(s));
        ASSERT_TRUE(back.has_value()) << status_name(s);
        EXPECT_EQ(*back, s) << status_name(s);
        EXPECT_EQ(status_rule(s) != nullptr, status_kind(s) == StatusKind::kRule) << status_name(s);
    }
    EXPECT_FALSE(status_from_name("passed").has_value());
    EXPECT_FALSE(status_from_name("").has_value());
    std::vector<std::string> passed, unjudged;
    for (int i = 0; i < kStatusCount; ++i) {
        if (status_passed(static_cast<Status>(i))) passed.push_back(status_name(static_cast<Status>(i)));
        if (status_unjudged(static_cast<Status>(i))) unjudged.push_back(status_name(static_cast<Status>(i)));
    }
    EXPECT_EQ(passed, (std::vector<std::string>{"compiled", "pass"}));
    EXPECT_EQ(unjudged, (std::vector<std::string>{"gen-failed", "task-error", "unjudged"}));
}

// The KernelBench rules of the status list are the ones the stages decide (compare.py prints each
// but static-check, which the judge's C++ decides) and the ones docs/evaluation.md's table lists.
TEST(JudgeStatuses, TheKernelBenchRulesAreTheChecksAndTheDocsTable) {
    std::string compare;
    for (const auto& [rel, text] : kernelbench_files())
        if (rel == "compare.py") compare = text;
    const std::string docs = cuset::test::read_file(std::string(CUSET_SOURCE_DIR) + "/docs/evaluation.md");
    int rules = 0;
    for (int i = 0; i < kStatusCount; ++i) {
        const Status s = static_cast<Status>(i);
        if (status_kind(s) != StatusKind::kRule) continue;
        ++rules;
        const std::string name = status_name(s);
        EXPECT_NE(docs.find("| `" + name + "` |"), std::string::npos) << name << " has no row in docs/evaluation.md";
        if (s != Status::kStaticCheck) {
            EXPECT_NE(compare.find("\"" + name + "\""), std::string::npos) << name << " is printed by no check of compare.py";
        }
    }
    EXPECT_EQ(rules, 10);
}

// The judge's caches key a compiler argument with torch's package folder named by its version:
// two checkouts whose virtual environments hold the same torch key an extension's build alike,
// another torch keys it apart, and Python's own headers (outside torch's folder) stay as they are.
TEST(KernelBenchCacheKeys, TorchsFolderIsNamedByItsVersion) {
    auto torch_at = [](const std::string& checkout, const std::string& version) {
        cuset::judge::TorchBuildInfo t;
        t.root = checkout + "/.venv/lib/python3.11/site-packages/torch";
        t.include_dirs = {t.root + "/include", t.root + "/include/torch/csrc/api/include", "/usr/include/python3.11"};
        t.library_dirs = {t.root + "/lib"};
        t.version = version;
        return t;
    };
    auto keyed = [](const cuset::judge::TorchBuildInfo& t) {
        std::vector<std::string> args = cuset::judge::kernelbench_cxx_flags(t);
        args.push_back("-L" + t.library_dirs[0]);
        for (std::string& a : args) a = cuset::judge::torch_neutral(a, t);
        return args;
    };
    const auto a = torch_at("/home/u/cuset", "2.5.1+cpu"), b = torch_at("/tmp/clone-7", "2.5.1+cpu");
    EXPECT_NE(cuset::judge::kernelbench_cxx_flags(a), cuset::judge::kernelbench_cxx_flags(b));
    EXPECT_EQ(keyed(a), keyed(b));
    EXPECT_NE(keyed(a), keyed(torch_at("/home/u/cuset", "2.6.0+cpu")));
    const std::vector<std::string> k = keyed(a);
    EXPECT_NE(std::find(k.begin(), k.end(), "<torch 2.5.1+cpu>/include"), k.end());
    EXPECT_NE(std::find(k.begin(), k.end(), "-L<torch 2.5.1+cpu>/lib"), k.end());
    EXPECT_NE(std::find(k.begin(), k.end(), "/usr/include/python3.11"), k.end());
    cuset::judge::TorchBuildInfo unread = a;
    unread.root.clear();
    EXPECT_EQ(cuset::judge::torch_neutral("-I" + a.root, unread), "-I" + a.root);
}
