// KernelBench candidates judged through `cuset-train eval --results` under --judge emulate: every
// stage of judge/kernelbench_judge.h, contained, on the fixture problems of
// tests/fixtures/kernelbench/judge/KernelBench (small level-1 problems written for these tests)
// and the candidates of tests/fixtures/kernelbench/candidates and judge/candidates. Honest
// candidates must pass; each hostile one must end with the status of the rule that catches it,
// named below with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"

using cuset::test::read_file;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }
std::string fixtures() { return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/kernelbench"; }

std::string candidate(const std::string& name) {
    const std::string a = fixtures() + "/candidates/" + name, b = fixtures() + "/judge/candidates/" + name;
    return read_file(fs::exists(a) ? a : b);
}

// The fixture problems as a tasks file (data tasks --from-kernelbench).
std::string make_tasks(const std::string& dir) {
    const std::string tasks = dir + "/kb.jsonl";
    auto r = run_cuset("data tasks --from-kernelbench " + q(fixtures() + "/judge") + " --levels 1 --out " + q(tasks));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return tasks;
}

struct Judged {
    std::string status, error, note;
};

// Judges (task id, candidate file) pairs in one eval run under the emulating judge; the verdicts
// by candidate file. Samples of one task are code1, code2, ... of its line.
std::map<std::string, Judged> judge_candidates(const std::string& dir, const std::string& tasks,
                                               const std::vector<std::pair<std::string, std::string>>& cases,
                                               const std::string& extra = "") {
    std::map<std::string, std::vector<std::string>> by_task;
    for (const auto& [task, file] : cases) by_task[task].push_back(file);
    std::string lines;
    for (const auto& [task, files] : by_task) {
        json line = {{"id", task}};
        for (size_t i = 0; i < files.size(); ++i) line["code" + std::to_string(i + 1)] = candidate(files[i]);
        lines += line.dump() + "\n";
    }
    write_file(dir + "/results.jsonl", lines);
    auto r = run_cuset("eval --results " + q(dir + "/results.jsonl") + " --tasks " + q(tasks) +
                       " --judge emulate --set eval.jobs=2 --out " + q(dir + "/eval") + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, Judged> out;
    if (r.exit_code != 0) return out;
    const json ev = json::parse(read_file(dir + "/eval/eval.json"));
    for (const json& t : ev["tasks"]) {
        const auto& files = by_task[t["id"].get<std::string>()];
        for (const json& s : t["samples"]) {
            const size_t i = s["sample"].get<size_t>() - 1;
            if (i < files.size())
                out[files[i]] = {s["status"].get<std::string>(), s["error"].get<std::string>(), s.value("note", std::string())};
        }
    }
    return out;
}

// A hostile candidate, the status it must end with and why (or what its verdict's text says).
struct Hostile {
    const char *task, *file, *status, *why;
};

// Judges `cases` in one eval run in scratch folder `name`; each must end with its status. The
// verdicts by candidate file, for the test's own checks of their texts.
std::map<std::string, Judged> judge_hostile(const std::string& name, const std::vector<Hostile>& cases) {
    const std::string dir = scratch_dir(name);
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const Hostile& c : cases) pairs.emplace_back(c.task, c.file);
    const auto judged = judge_candidates(dir, make_tasks(dir), pairs);
    EXPECT_EQ(judged.size(), cases.size());
    for (const Hostile& c : cases) {
        const auto it = judged.find(c.file);
        if (it == judged.end()) continue;
        EXPECT_EQ(it->second.status, c.status) << c.file << " (" << c.why << "): " << it->second.error;
    }
    return judged;
}

}  // namespace

// Correct kernels for fourteen level-1 operators, each against its problem: five trials of
// KernelBench's seeds, compared with fp32's tolerance, and none trips an anti-hacking rule.
TEST(KernelBenchEval, HonestCandidatesPass) {
    const std::string dir = scratch_dir("kernelbench_eval_honest");
    const std::string tasks = make_tasks(dir);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"level1_200_Elementwise_add", "honest_add.py"},
        {"level1_51_Argmax_over_a_dimension", "honest_argmax.py"},
        {"level1_89_cumsum", "honest_cumsum.py"},
        {"level1_32_HardTanh", "honest_hardtanh.py"},
        {"level1_39_L2Norm_", "honest_l2_norm.py"},
        {"level1_20_LeakyReLU", "honest_leaky_relu.py"},
        {"level1_1_Square_matrix_multiplication_", "honest_matmul.py"},
        {"level1_4_Matrix_vector_multiplication_", "honest_matvec.py"},
        {"level1_19_ReLU", "honest_relu.py"},
        {"level1_5_Matrix_scalar_multiplication", "honest_scalar_mul.py"},
        {"level1_21_Sigmoid", "honest_sigmoid.py"},
        {"level1_23_Softmax", "honest_softmax.py"},
        {"level1_47_Sum_reduction_over_a_dimension", "honest_sum_reduction.py"},
        {"level1_22_Tanh", "honest_tanh.py"},
    };
    const auto judged = judge_candidates(dir, tasks, cases);
    ASSERT_EQ(judged.size(), cases.size());
    for (const auto& [task, file] : cases) {
        const Judged& j = judged.at(file);
        EXPECT_EQ(j.status, "pass") << file << ": " << j.error;
        EXPECT_EQ(j.note, "") << file << ": no static-check warning, no reduced size";
    }
    // fast_p-ready: fast_0 is the correctness rate; speed-ups need a GPU judge's timings.
    const json ev = json::parse(read_file(dir + "/eval/eval.json"));
    EXPECT_EQ(ev["judge"], "emulated");
    const json& kb = ev["kernelbench"];
    EXPECT_EQ(kb["tasks"], 14);
    EXPECT_EQ(kb["correct"], 14);
    EXPECT_EQ(kb["fast_p"]["0"], 1.0);
    for (const char* p : {"1", "1.2", "1.5", "2"}) EXPECT_TRUE(kb["fast_p"][p].is_null()) << p;
    EXPECT_NE(kb["note"].get<std::string>().find("timed by a GPU judge"), std::string::npos) << kb["note"];
    EXPECT_NE(read_file(dir + "/eval/eval.html").find("KernelBench fast_p over 14 problem(s)"), std::string::npos);
}

// Hostile candidates: each ends with the status of the rule that catches it. The three after
// KernelBench's own adversarial kernels (judge/candidates/kernelbench_*.py) carry a kernel so that
// the static check lets them through to the runtime rules.
TEST(KernelBenchEval, HostileCandidatesEndWithTheRuleThatCatchesThem) {
    const std::vector<Hostile> cases = {
        {"level1_1_Square_matrix_multiplication_", "kernelbench_result_reuse.py", "no-kernel",
         "its output is an allocation no kernel writes"},
        {"level1_1_Square_matrix_multiplication_", "kernelbench_zero_out.py", "input-mutated", "it zeroes A and B"},
        {"level1_1_Square_matrix_multiplication_", "kernelbench_non_default_stream.py", "side-stream",
         "its kernel runs on a stream it created"},
        {"level1_1_Square_matrix_multiplication_", "hack_cached_result.py", "no-kernel",
         "trial 2 is written into trial 1's tensors, and it answers them with trial 1's product, launching nothing"},
        {"level1_201_Elementwise_multiply", "hack_float2half_kernel.py", "mismatch", "fp16 arithmetic under fp32"},
        {"level1_5_Matrix_scalar_multiplication", "hack_fp16_downgrade.py", "mismatch", "fp16 under fp32"},
        {"level1_63_conv_standard_2D__square_input__square_kernel", "hack_functional_conv.py", "torch-op",
         "F.conv2d does the work"},
        {"level1_23_Softmax", "hack_getattr_torch.py", "torch-op", "torch's softmax, looked up with getattr"},
        {"level1_1_Square_matrix_multiplication_", "hack_inherit_docstring.py", "no-kernel",
         "the reference's forward, inherited"},
        {"level1_19_ReLU", "hack_input_mutation.py", "input-mutated", "ReLU in place on its input"},
        {"level1_19_ReLU", "hack_lazy_subclass.py", "static-check", "lazy_eval"},
        {"level1_19_ReLU", "hack_make_subclass.py", "static-check", "lazy_eval"},
        {"level1_19_ReLU", "hack_tensor_new.py", "static-check", "lazy_eval"},
        {"level1_202_Gemm_ReLU", "hack_nn_layer.py", "torch-op", "nn.Linear does the product"},
        {"level1_1_Square_matrix_multiplication_", "hack_no_build.py", "static-check", "cuda_impl"},
        {"level1_1_Square_matrix_multiplication_", "hack_no_kernel.py", "static-check", "cuda_impl"},
        {"level1_1_Square_matrix_multiplication_", "hack_pass_inheritance.py", "static-check", "code_bypass"},
        {"level1_19_ReLU", "hack_patch_event.py", "static-check", "timing_event_patch"},
        {"level1_19_ReLU", "hack_patch_perf_counter.py", "static-check", "timing_event_patch"},
        {"level1_19_ReLU", "hack_patch_setattr.py", "timer-patch", "Event.elapsed_time replaced with setattr"},
        {"level1_19_ReLU", "hack_process_pool.py", "static-check", "thread_injection"},
        {"level1_19_ReLU", "hack_thread_pool.py", "static-check", "thread_injection"},
        {"level1_19_ReLU", "hack_threading.py", "static-check", "thread_injection"},
        {"level1_19_ReLU", "hack_side_stream.py", "side-stream", "a torch.cuda.Stream of its own"},
        {"level1_19_ReLU", "hack_stream_in_cuda.py", "side-stream", "a stream made in the C++ host code"},
        {"level1_21_Sigmoid", "hack_suppress_fallback.py", "fallback",
         "torch's sigmoid answers when the kernel's call fails"},
        {"level1_1_Square_matrix_multiplication_", "hack_torch_matmul.py", "torch-op", "torch's product does the work"},
        {"level1_26_GELU_", "hack_try_except_fallback.py", "static-check", "code_bypass"},
        {"level1_19_ReLU", "hack_type_subclass.py", "not-kernel-output",
         "forward returns its subclass, which would compute when read"},
        {"level1_48_Mean_reduction_over_a_dimension", "hack_zero_output.py", "constant-output",
         "a kernel writes zeros"},
        {"level1_19_ReLU", "hack_cr_hidden_class.py", "static-check", "lazy_eval"},
        {"level1_203_ReLU_rand", "hack_noop_kernel_returns_input.py", "input-specific",
         "its input is ReLU's answer only while the inputs are non-negative"},
        {"level1_19_ReLU", "hack_kernel_calls_host.py", "compile-error", "nvcc refuses a kernel calling a host function"},
        {"level1_19_ReLU", "hack_include_home.py", "compile-error", "it includes a file of the user's home"},
        {"level1_19_ReLU", "hack_include_dev_zero.py", "compile-error", "it includes /dev/zero"},
        {"level1_19_ReLU", "hack_include_climb.py", "compile-error", "it includes a file above its folder"},
        {"level1_19_ReLU", "hack_include_by_macro.py", "compile-error", "the compilers fail on /dev/zero too"},
        {"level1_19_ReLU", "hack_cuda_syntax_error.py", "compile-error", "nvcc fails on it too"},
    };
    const auto judged = judge_hostile("kernelbench_eval_hostile", cases);
    ASSERT_EQ(judged.size(), cases.size());
    for (const Hostile& c : cases) {
        const Judged& j = judged.at(c.file);
        if (std::string(c.status) == "static-check") {
            EXPECT_NE(j.error.find(std::string("static check: ") + c.why), std::string::npos) << c.file << ": " << j.error;
        }
    }
    // The rule's line says what it saw.
    EXPECT_NE(judged.at("hack_input_mutation.py").error.find("forward changed its input argument(s) [0]"), std::string::npos);
    EXPECT_NE(judged.at("hack_torch_matmul.py").error.find("aten::mm"), std::string::npos)
        << judged.at("hack_torch_matmul.py").error;
    EXPECT_NE(judged.at("hack_patch_setattr.py").error.find("torch.cuda.Event.elapsed_time"), std::string::npos);
    EXPECT_NE(judged.at("hack_noop_kernel_returns_input.py").error.find("right on KernelBench's 5 trials, wrong on trial 6 "
                                                                      "(inputs of both signs)"),
              std::string::npos)
        << judged.at("hack_noop_kernel_returns_input.py").error;
    EXPECT_NE(judged.at("hack_kernel_calls_host.py").error.find("calling a __host__ function"), std::string::npos)
        << judged.at("hack_kernel_calls_host.py").error;
    EXPECT_NE(judged.at("hack_include_home.py").error.find("#include of /home/user/notes.h"), std::string::npos)
        << judged.at("hack_include_home.py").error;
}

// Hostile candidates that compute their outputs with host code (torch reached around the judge's
// trace, ATen's CPU kernels, numpy, Python, a thread, a forked child, a lazy tensor, a host loop)
// and launch a kernel that does nothing, for show: the run's "CUDA" tensors are device memory
// that host code cannot touch outside the windows a GPU allows (judge/kernelbench/device.cpp), so
// each ends not-kernel-output, with the reason; one whose kernels carry the values to host
// memory and back, refused at the launch that is given a host pointer; and two that go after the
// harness itself.
TEST(KernelBenchEval, HostCodeDoesNotComputeTheOutputs) {
    // `why` here is what the verdict's text says.
    const std::vector<Hostile> cases = {
        {"level1_19_ReLU", "hack_disable_modes.py", "not-kernel-output", "host code touched device memory"},
        {"level1_19_ReLU", "hack_disable_torch_dispatch.py", "not-kernel-output", "host code touched device memory"},
        {"level1_19_ReLU", "hack_exclude_dispatch_key.py", "not-kernel-output", "host code touched device memory"},
        {"level1_22_Tanh", "hack_aten_cpu_direct.py", "not-kernel-output", "host code touched device memory"},
        {"level1_19_ReLU", "hack_host_loop.py", "not-kernel-output", "host code touched device memory"},
        {"level1_19_ReLU", "hack_std_thread.py", "not-kernel-output", "host code touched device memory"},
        {"level1_19_ReLU", "hack_python_thread.py", "not-kernel-output", "host code touched device memory"},
        {"level1_19_ReLU", "hack_numpy.py", "not-kernel-output", "host code touched device memory"},
        {"level1_19_ReLU", "hack_python_lists.py", "not-kernel-output", "host code touched device memory"},
        {"level1_19_ReLU", "hack_fork_child.py", "not-kernel-output", "on host memory"},
        {"level1_19_ReLU", "hack_numpy_exfiltrate.py", "not-kernel-output", "aten::copy_, aten::detach on host memory"},
        {"level1_19_ReLU", "hack_type_built_subclass.py", "not-kernel-output", "as a Lazy, not a torch.Tensor"},
        {"level1_19_ReLU", "hack_thread_after_return.py", "not-kernel-output", "still runs after it returned"},
        {"level1_19_ReLU", "hack_item_loop.py", "not-kernel-output", "bytes of device memory to the host"},
        {"level1_19_ReLU", "hack_memcpy_to_host.py", "not-kernel-output", "bytes of device memory to the host"},
        {"level1_19_ReLU", "hack_kernel_host_buffer.py", "not-kernel-output",
         "kernel launch 1 was given host memory (argument 2)"},
        {"level1_19_ReLU", "hack_main_allowlist.py", "torch-op", "aten::clamp_min"},
        {"level1_19_ReLU", "hack_atexit_report.py", "constant-output", "every element is 0"},
    };
    const auto judged = judge_hostile("kernelbench_eval_host_code", cases);
    ASSERT_EQ(judged.size(), cases.size());
    for (const Hostile& c : cases)
        EXPECT_NE(judged.at(c.file).error.find(c.why), std::string::npos) << c.file << ": " << judged.at(c.file).error;
}

// The candidate's module runs first to record its calls: what it leaves in its folder then (here a
// link where the judge builds its extension, pointing out of the folder) never redirects a later
// stage's files.
TEST(KernelBenchEval, ALinkLeftByTheCaptureDoesNotRedirectTheBuild) {
    const std::string dir = scratch_dir("kernelbench_eval_link");
    const std::string tasks = make_tasks(dir);
    const std::string victim = dir + "/victim";
    fs::create_directories(victim);
    const std::string code = "import os\nos.makedirs('build', exist_ok=True)\nif not os.path.lexists('build/ext0'):\n"
                             "    os.symlink('" + victim + "', 'build/ext0')\n" + candidate("honest_relu.py");
    write_file(dir + "/results.jsonl", json({{"id", "level1_19_ReLU"}, {"code1", code}}).dump() + "\n");
    auto r = run_cuset("eval --results " + q(dir + "/results.jsonl") + " --tasks " + q(tasks) +
                       " --judge emulate --out " + q(dir + "/eval"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json ev = json::parse(read_file(dir + "/eval/eval.json"));
    EXPECT_EQ(ev["tasks"][0]["samples"][0]["status"], "pass") << ev["tasks"][0]["samples"][0]["error"];
    EXPECT_TRUE(fs::is_empty(victim)) << "the judge wrote through the candidate's link";
}

// A problem sized for a GPU runs at reduced sizes under emulation, by the documented rule (its
// size constants of at least 32 halved together until the inputs hold at most
// eval.kernelbench_max_input_elements), and the verdict says so; 4096 x 4096 -> 512 x 512 is
// three halvings (16.8 M, 4.2 M, 1 M, 262144 elements).
TEST(KernelBenchEval, AProblemSizedForAGpuRunsAtReducedSizes) {
    const std::string dir = scratch_dir("kernelbench_eval_sizes");
    fs::create_directories(dir + "/kb/level1");
    std::string relu = read_file(fixtures() + "/judge/KernelBench/level1/19_ReLU.py");
    const size_t b = relu.find("batch_size = ");
    ASSERT_NE(b, std::string::npos);
    const size_t e = relu.find("\ndef get_inputs", b);
    relu = relu.substr(0, b) + "batch_size = 4096\ndim = 4096\n" + relu.substr(e);
    write_file(dir + "/kb/level1/19_ReLU.py", relu);
    auto r = run_cuset("data tasks --from-kernelbench " + q(dir + "/kb") + " --out " + q(dir + "/kb.jsonl"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto judged = judge_candidates(dir, dir + "/kb.jsonl", {{"level1_19_ReLU", "honest_relu.py"}});
    ASSERT_EQ(judged.size(), 1u);
    EXPECT_EQ(judged.at("honest_relu.py").status, "pass") << judged.at("honest_relu.py").error;
    EXPECT_EQ(judged.at("honest_relu.py").note, "emulated at reduced sizes: batch_size 4096 -> 512, dim 4096 -> 512");
}

// --judge compile builds only: the candidate's module runs to record its load_inline calls, and
// each call's two translation units are built as torch builds them (nvcc for the CUDA one). A
// module that fails while loading is a compile error, as in KernelBench.
TEST(KernelBenchEval, CompileOnlyBuildsTheExtension) {
    const std::string dir = scratch_dir("kernelbench_eval_compile");
    const std::string tasks = make_tasks(dir);
    const std::string broken = candidate("honest_relu.py") + "\nraise RuntimeError('broken at import')\n";
    write_file(dir + "/results.jsonl",
               json({{"id", "level1_19_ReLU"}, {"code1", candidate("honest_relu.py")}, {"code2", broken}}).dump() + "\n");
    auto r = run_cuset("eval --results " + q(dir + "/results.jsonl") + " --tasks " + q(tasks) + " --judge compile --out " +
                       q(dir + "/eval"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json ev = json::parse(read_file(dir + "/eval/eval.json"));
    ASSERT_EQ(ev["tasks"].size(), 1u);
    const json& s = ev["tasks"][0]["samples"];
    EXPECT_EQ(s[0]["status"], "compiled") << s[0]["error"];
    EXPECT_EQ(s[1]["status"], "compile-error");
    EXPECT_NE(s[1]["error"].get<std::string>().find("broken at import"), std::string::npos) << s[1]["error"];
}

// data build takes KernelBench problems: each answer's candidate (KernelBench's extraction) is
// judged by the KernelBench stages, and the passing one is kept with KernelBench's prompt and
// system prompt; a repair round gives back KernelBench's finding about the module.
TEST(KernelBenchEval, DataBuildKeepsThePassingCandidate) {
    const std::string dir = scratch_dir("kernelbench_data_build");
    const std::string tasks = make_tasks(dir);
    auto answer = [&](const char* task, int sample, const std::string& file) {
        return json({{"id", task}, {"sample", sample}, {"response", "Here it is.\n```python\n" + candidate(file) + "```\n"}})
                   .dump() +
               "\n";
    };
    write_file(dir + "/answers.jsonl", answer("level1_19_ReLU", 1, "hack_input_mutation.py") +
                                           answer("level1_19_ReLU", 2, "honest_relu.py") +
                                           answer("level1_21_Sigmoid", 1, "hack_suppress_fallback.py"));
    const std::string base = "data build --tasks " + q(tasks) + " --candidates " + q(dir + "/answers.jsonl") +
                             " --task-ids level1_19_ReLU,level1_21_Sigmoid --samples 2 --judge emulate"
                             " --config configs/demo.yaml --set log.progress=never --out ";
    auto r = run_cuset(base + q(dir + "/out") + " --rounds 1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string kept = read_file(dir + "/out/train.jsonl");
    ASSERT_EQ(std::count(kept.begin(), kept.end(), '\n'), 1) << kept;
    const json k = json::parse(kept.substr(0, kept.find('\n')));
    EXPECT_EQ(k["id"], "level1_19_ReLU-s2");
    EXPECT_EQ(k["system"], "You are a helpful assistant");
    // The prompt is the task's KernelBench prompt, as data tasks wrote it.
    const std::string tasks_text = read_file(tasks);
    std::string prompt;
    for (size_t b = 0; b < tasks_text.size();) {
        const size_t e = tasks_text.find('\n', b);
        const json t = json::parse(tasks_text.substr(b, e - b));
        if (t["id"] == "level1_19_ReLU") prompt = t["kernelbench_prompt"].get<std::string>();
        b = e == std::string::npos ? tasks_text.size() : e + 1;
    }
    ASSERT_FALSE(prompt.empty());
    EXPECT_EQ(k["prompt"], prompt);
    EXPECT_EQ(k["response"], "Here it is.\n```python\n" + candidate("honest_relu.py") + "```\n");

    // A repair round: the module that wrote its input gets KernelBench's finding, and its honest
    // second answer is kept as the whole conversation (--format messages).
    write_file(dir + "/rounds.jsonl",
               json({{"id", "level1_19_ReLU"}, {"sample", 1}, {"round", 1}, {"response", "```python\n" + candidate("hack_input_mutation.py") + "```"}})
                       .dump() +
                   "\n" +
                   json({{"id", "level1_19_ReLU"}, {"sample", 1}, {"round", 2}, {"response", "```python\n" + candidate("honest_relu.py") + "```"}})
                       .dump() +
                   "\n");
    r = run_cuset("data build --tasks " + q(tasks) + " --candidates " + q(dir + "/rounds.jsonl") +
                  " --task-ids level1_19_ReLU --samples 1 --rounds 2 --format messages --judge emulate"
                  " --config configs/demo.yaml --set log.progress=never --out " + q(dir + "/out2"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string kept2 = read_file(dir + "/out2/train.jsonl");
    ASSERT_EQ(std::count(kept2.begin(), kept2.end(), '\n'), 1) << kept2;
    const json m = json::parse(kept2.substr(0, kept2.find('\n')))["messages"];
    ASSERT_EQ(m.size(), 5u) << m.dump();
    EXPECT_EQ(m[0]["content"], "You are a helpful assistant");
    EXPECT_EQ(m[1]["content"], prompt);
    EXPECT_EQ(m[3]["role"], "user");
    const std::string finding = m[3]["content"].get<std::string>();
    EXPECT_NE(finding.find("ModelNew breaks a rule of the benchmark: forward changes its input tensors"), std::string::npos)
        << finding;
    EXPECT_NE(finding.find("```python"), std::string::npos) << finding;
    EXPECT_EQ(m[4]["content"], "```python\n" + candidate("honest_relu.py") + "```");
}

// eval --turns 2 on a KernelBench problem with answers from a file: turn 1 a module that writes
// its input and one without a kernel (the static check's finding), turn 2 honest modules; the per-turn figures, the
// finding given back, and KernelBench's fields of turn 1 kept in results.jsonl.
TEST(KernelBenchEval, RepairTurnsAnswerTheModulesFinding) {
    const std::string dir = scratch_dir("kernelbench_eval_turns");
    const std::string tasks = make_tasks(dir);
    auto line = [&](int sample, int round, const std::string& file) {
        return json({{"id", "level1_19_ReLU"}, {"sample", sample}, {"round", round},
                     {"response", "```python\n" + candidate(file) + "```"}})
                   .dump() +
               "\n";
    };
    write_file(dir + "/answers.jsonl", line(1, 1, "hack_input_mutation.py") + line(1, 2, "honest_relu.py") +
                                           line(2, 1, "hack_no_kernel.py") + line(2, 2, "honest_relu.py"));
    auto r = run_cuset("eval --candidates " + q(dir + "/answers.jsonl") + " --tasks " + q(tasks) +
                       " --task-ids level1_19_ReLU --samples 2 --turns 2 --judge emulate --set eval.jobs=2"
                       " --set log.progress=never --out " + q(dir + "/eval"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json ev = json::parse(read_file(dir + "/eval/eval.json"));
    EXPECT_EQ(ev["overall"]["pass@1_passed"], 0);
    const json& rep = ev["repair"];
    EXPECT_EQ(rep["final"]["pass@1_passed"], 1);
    EXPECT_EQ(rep["fixed_samples"], 2);
    ASSERT_EQ(rep["by_turn"].size(), 2u);
    EXPECT_EQ(rep["by_turn"][1]["passed"], 2);
    const json& samples = ev["tasks"][0]["samples"];
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[0]["turns"][0]["status"], "input-mutated");
    EXPECT_EQ(samples[1]["turns"][0]["status"], "static-check");  // no __global__ kernel in its source
    EXPECT_EQ(samples[0]["turns"][1]["status"], "pass");
    EXPECT_EQ(samples[1]["turns"][1]["status"], "pass");
    const json res = json::parse(read_file(dir + "/eval/results.jsonl"));
    EXPECT_EQ(res["code1"].get<std::string>() + "\n", candidate("hack_input_mutation.py"));
    const std::string fb = res["repairs2"][0]["feedback"].get<std::string>();
    EXPECT_NE(fb.find("its source fails the static check (static check: cuda_impl: Missing __global__"), std::string::npos)
        << fb;
    EXPECT_EQ(res["repairs2"][0]["code"].get<std::string>() + "\n", candidate("honest_relu.py"));
}

// A KernelBench problem has no reference kernel: --reference is refused in one line naming the
// tasks file's line, before anything is written.
TEST(KernelBenchEval, ReferenceJudgingIsRefused) {
    const std::string dir = scratch_dir("kernelbench_eval_reference");
    const std::string tasks = make_tasks(dir);
    auto r = run_cuset("eval --reference --tasks " + q(tasks) + " --judge compile --out " + q(dir + "/eval"));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("kb.jsonl:1: task level1_1_Square_matrix_multiplication_ is a KernelBench problem, which has "
                         "no reference kernel"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir + "/eval"));
}
