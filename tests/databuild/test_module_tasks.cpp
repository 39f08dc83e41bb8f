// Tasks from PyTorch modules (databuild/module_tasks.h), mostly through the real binary: the
// fixture modules of tests/fixtures/modules/good become tasks whose files, shapes and prompts are
// the modules'; what their gen.py writes equals an independent computation
// (tests/golden/module_tasks.py: torch's initialisation under the seed, the operation in numpy);
// under --judge emulate hand-written CUDA programs that are right pass and wrong ones (a
// transposed weight, an off-by-one bound, a short output file) end as mismatches, and `data
// build` keeps the right candidate of two; every module
// of tests/fixtures/modules/bad is refused with one line naming its file, exit 3, nothing written
// (one prints a forged manifest whose output name would be code in compare.py).
#include <filesystem>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/databuild/module_tasks.h"
#include "cuset/eval/cudabench.h"
#include "cuset/judge/task_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }
std::string fixtures() { return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/modules"; }

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
}

const char* kIo = R"(#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

template <class T>
static std::vector<T> load(const char* path, size_t n) {
    std::vector<T> v(n);
    FILE* f = std::fopen(path, "rb");
    if (!f || std::fread(v.data(), sizeof(T), n, f) != n) {
        std::fprintf(stderr, "cannot read %s\n", path);
        std::exit(1);
    }
    std::fclose(f);
    return v;
}

template <class T>
static void store(const char* path, const std::vector<T>& v, size_t n) {
    FILE* f = std::fopen(path, "wb");
    if (!f || std::fwrite(v.data(), sizeof(T), n, f) != n) std::exit(1);
    std::fclose(f);
}

template <class T>
static T* device(const std::vector<T>& v) {
    T* d = nullptr;
    cudaMalloc(&d, v.size() * sizeof(T));
    cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
    return d;
}
)";

// linear_relu: y = relu(x W^T + b), W as torch keeps it, (out_features, in_features).
const std::string kLinear = std::string(kIo) + R"(
constexpr int B = 12, IN = 48, OUT = 20;
__global__ void linear_relu(const float* x, const float* w, const float* b, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= B * OUT) return;
    int r = i / OUT, c = i % OUT;
    float acc = b[c];
    for (int k = 0; k < IN; ++k) acc += x[r * IN + k] * w[c * IN + k];
    y[i] = fmaxf(acc, 0.0f);
}
int main() {
    std::vector<float> x = load<float>("data/x.bin", B * IN), w = load<float>("data/fc_weight.bin", OUT * IN),
                       b = load<float>("data/fc_bias.bin", OUT), y(B * OUT);
    float *dx = device(x), *dw = device(w), *db = device(b), *dy = device(y);
    linear_relu<<<(B * OUT + 63) / 64, 64>>>(dx, dw, db, dy);
    cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost);
    store("data/output.bin", y, y.size());
    return 0;
}
)";

// scaled_add: a + alpha * b, alpha = 0.5 (a constant of forward).
const std::string kScaledAdd = std::string(kIo) + R"(
constexpr int N = 24 * 40;
__global__ void scaled_add(const float* a, const float* b, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = a[i] + 0.5f * b[i];
}
int main() {
    std::vector<float> a = load<float>("data/a.bin", N), b = load<float>("data/b.bin", N), y(N);
    float *da = device(a), *db = device(b), *dy = device(y);
    scaled_add<<<(N + 127) / 128, 128>>>(da, db, dy);
    cudaMemcpy(y.data(), dy, N * sizeof(float), cudaMemcpyDeviceToHost);
    store("data/output.bin", y, N);
    return 0;
}
)";

// sum_and_argmax: two outputs, a float32 row sum and an int64 row argmax.
const std::string kSumArgmax = std::string(kIo) + R"(
constexpr int M = 16, N = 33;
__global__ void sum_argmax(const float* x, float* s, long long* am) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M) return;
    float acc = 0.0f, best = x[r * N];
    long long at = 0;
    for (int c = 0; c < N; ++c) {
        float v = x[r * N + c];
        acc += v;
        if (v > best) { best = v; at = c; }
    }
    s[r] = acc;
    am[r] = at;
}
int main() {
    std::vector<float> x = load<float>("data/x.bin", M * N), s(M);
    std::vector<long long> am(M);
    float *dx = device(x), *ds = device(s);
    long long* dam = device(am);
    sum_argmax<<<1, 32>>>(dx, ds, dam);
    cudaMemcpy(s.data(), ds, M * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(am.data(), dam, M * sizeof(long long), cudaMemcpyDeviceToHost);
    store("data/output0.bin", s, M);
    store("data/output1.bin", am, M);
    return 0;
}
)";

json read_json(const std::string& path) { return json::parse(read_file(path)); }

}  // namespace

TEST(ModuleTasks, WhatTheTextLacksIsSeenWithoutRunningIt) {
    using cuset::databuild::module_static_problem;
    const std::string ok = read_file(fixtures() + "/good/linear_relu.py");
    EXPECT_EQ(module_static_problem(ok), "");
    EXPECT_EQ(module_static_problem(read_file(fixtures() + "/bad/no_get_inputs.py")), "no top-level `def get_inputs()`");
    EXPECT_EQ(module_static_problem(replaced(ok, "class Model(", "class Net(")), "no top-level `class Model(...)`");
    // Indented definitions (a method, a nested class) are not the module's.
    EXPECT_EQ(module_static_problem(replaced(ok, "def get_init_inputs(", "def helper():\n    def get_init_inputs(")),
              "no top-level `def get_init_inputs()`");
}

TEST(ModuleTasks, CompareNamesTheOutputsAndTheirReferencesSoTheJudgeTellsTheFilesApart) {
    const json outputs = json::parse(R"([{"name": "output0", "dtype": "float32", "shape": [16]},
                                         {"name": "output1", "dtype": "int64", "shape": [16]}])");
    const std::string cmp = cuset::databuild::module_compare_py("t", outputs);
    const cuset::judge::TaskFiles f = cuset::judge::classify_task_files(
        {"data/output0_ref.bin", "data/output1_ref.bin", "data/x.bin"}, "", {"x"}, cmp);
    EXPECT_EQ(f.problem, "");
    EXPECT_EQ(f.inputs, (std::vector<std::string>{"data/x.bin"}));
    EXPECT_EQ(f.withheld, (std::vector<std::string>{"data/output0_ref.bin", "data/output1_ref.bin"}));
    EXPECT_EQ(f.outputs, (std::vector<std::string>{"data/output0.bin", "data/output1.bin"}));
}

TEST(ModuleTasksCli, ModulesBecomeTasksWhoseFilesAreTheModulesAndTheJudgeTellsRightFromWrong) {
    const std::string dir = scratch_dir("module_tasks_cli");
    const std::string tasks_file = dir + "/tasks.jsonl";
    auto r = run_cuset("data tasks --from-modules " + q(fixtures() + "/good") + " --out " + q(tasks_file) +
                       " --check --judge emulate --config configs/demo.yaml --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("5 of 5 reference solution(s) pass (5 task(s) without one: checked by their gen.py and by their compare.py "
                         "on the reference outputs)"),
              std::string::npos) << r.out;

    const std::vector<cuset::eval::Task> tasks = cuset::eval::load_tasks(tasks_file);
    ASSERT_EQ(tasks.size(), 5u);
    std::map<std::string, const cuset::eval::Task*> by;
    for (const auto& t : tasks) by[t.id_text] = &t;
    ASSERT_EQ(by.size(), 5u);
    auto specs = [](const std::vector<cuset::eval::TensorSpec>& v) {
        std::string s;
        for (const auto& x : v) s += x.name + " " + x.dtype + " " + x.shape + "; ";
        return s;
    };
    const cuset::eval::Task& lin = *by.at("linear_relu");
    EXPECT_EQ(specs(lin.inputs), "x float32 (12, 48); fc_weight float32 (20, 48); fc_bias float32 (20,); ");
    EXPECT_EQ(specs(lin.outputs), "output float32 (12, 20); ");
    EXPECT_EQ(lin.bench_cu, "");
    EXPECT_NE(lin.task_description.find("`Model(48, 20)` and called as `forward(x)`"), std::string::npos)
        << lin.task_description;
    EXPECT_NE(lin.task_description.find("- `data/fc_weight.bin`: parameter `fc.weight` of the module (as torch initialised "
                                        "it), float32, shape (20, 48)"),
              std::string::npos) << lin.task_description;
    EXPECT_NE(lin.task_description.find(read_file(fixtures() + "/good/linear_relu.py").substr(0, 60)), std::string::npos);
    const std::string prompt = cuset::eval::build_user_prompt(lin, 3, "");
    EXPECT_NE(prompt.find("Input:\nx: float32, shape = (12, 48)\nfc_weight: float32, shape = (20, 48)\nfc_bias: float32, "
                          "shape = (20,)\n\nOutput:\noutput: float32, shape = (12, 20)"),
              std::string::npos) << prompt;
    const cuset::eval::Task& add = *by.at("scaled_add");
    EXPECT_EQ(specs(add.inputs), "a float32 (24, 40); b float32 (24, 40); ");
    EXPECT_NE(add.task_description.find("Constant arguments of forward (not files): `alpha` = 0.5."), std::string::npos)
        << add.task_description;
    EXPECT_NE(add.task_description.find("called as `forward(a, b, alpha)`"), std::string::npos);
    EXPECT_EQ(specs(by.at("sum_and_argmax")->outputs), "output0 float32 (16,); output1 int64 (16,); ");
    EXPECT_EQ(specs(by.at("row_softmax")->inputs), "x float32 (8, 100); ");
    // float16 and bool inputs keep their dtypes; the output takes the first floating input's.
    EXPECT_EQ(specs(by.at("masked_layernorm_half")->inputs),
              "x float16 (6, 32); mask bool (6, 32); norm_weight float32 (32,); norm_bias float32 (32,); ");
    EXPECT_EQ(specs(by.at("masked_layernorm_half")->outputs), "output float16 (6, 32); ");

    // What each gen.py writes (run here on the project's own fixtures) equals the independent computation.
    for (const auto& t : tasks) {
        const std::string g = dir + "/gen-" + t.id_text;
        fs::create_directories(g);
        write_file(g + "/gen.py", t.gen_py);
        auto gen = run_command("cd " + q(g) + " && " + q(CUSET_PYTHON) + " -I -B gen.py");
        ASSERT_EQ(gen.exit_code, 0) << gen.err;
        auto check = run_command(q(CUSET_PYTHON) + " " + q(std::string(CUSET_SOURCE_DIR) + "/tests/golden/module_tasks.py") +
                                 " " + t.id_text + " " + q(g));
        EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
        EXPECT_EQ(check.out, "ok " + t.id_text + "\n");
    }
    // The float16 checker: a missing output is F, the reference itself as the output is T, the
    // largest element off by 10% (beyond 1e-2 + 1e-2 relative) is F with its index.
    {
        const std::string g = dir + "/gen-masked_layernorm_half";
        write_file(g + "/compare.py", by.at("masked_layernorm_half")->compare_py);
        const std::string cmp = "cd " + q(g) + " && " + q(CUSET_PYTHON) + " -I -B compare.py";
        auto c = run_command(cmp);
        EXPECT_EQ(c.out, "data/output.bin: missing or unreadable\nF\n") << c.err;
        fs::copy_file(g + "/data/output_ref.bin", g + "/data/output.bin");
        c = run_command(cmp);
        EXPECT_EQ(c.out, "T\n") << c.err;
        c = run_command(q(CUSET_PYTHON) + " -c \"import numpy as np; p = '" + g + "/data/output.bin'; a = np.fromfile(p, "
                        "np.float16); i = int(np.argmax(np.abs(a))); a[i] = a[i] * np.float16(1.1); a.tofile(p); print(i)\"");
        ASSERT_EQ(c.exit_code, 0) << c.err;
        const int i = std::stoi(c.out);
        c = run_command(cmp);
        EXPECT_NE(c.out.find("data/output.bin: first mismatch at index (" + std::to_string(i / 32) + ", " +
                             std::to_string(i % 32) + ")"), std::string::npos) << c.out;
        EXPECT_EQ(c.out.substr(c.out.size() - 2), "F\n");
    }

    // --check runs every gen.py again and judges the reference outputs with the task's compare.py:
    // a broken gen.py and a checker that refuses its own references are named with their lines, exit 3.
    {
        std::vector<std::string> lines = cuset::test::lines_of(tasks_file);
        ASSERT_EQ(lines.size(), 5u);
        json rec = json::parse(lines[0]);
        ASSERT_EQ(rec["id"], "linear_relu");
        rec["gen.py"] = replaced(rec["gen.py"].get<std::string>(), "\nSEED = 42\n", "\nSEED = 42\nraise SystemExit('broken on purpose')\n");
        lines[0] = rec.dump();
        rec = json::parse(lines[1]);
        ASSERT_EQ(rec["id"], "masked_layernorm_half");
        rec["compare.py"] = replaced(rec["compare.py"].get<std::string>(), "\"float16\": 1e-2", "\"float16\": -1.0");
        lines[1] = rec.dump();
        std::string text;
        for (const std::string& l : lines) text += l + "\n";
        write_file(dir + "/broken.jsonl", text);
        auto c = run_cuset("data tasks " + q(dir + "/broken.jsonl") + " --check --judge compile --config configs/demo.yaml "
                           "--set log.progress=never");
        EXPECT_EQ(c.exit_code, 3) << c.err;
        EXPECT_NE(c.out.find(dir + "/broken.jsonl:1: task linear_relu: reference gen-failed: gen.py: broken on purpose"),
                  std::string::npos) << c.out;
        EXPECT_NE(c.out.find(dir + "/broken.jsonl:2: task masked_layernorm_half: reference mismatch: compare.py: F "
                                   "(data/output.bin: first mismatch at index (0, 0)"),
                  std::string::npos) << c.out;
        EXPECT_NE(c.out.find("3 of 5 reference solution(s) pass"), std::string::npos) << c.out;
    }

    // Hand-written programs under the emulated judge: right ones pass, wrong ones are mismatches.
    struct Program {
        std::string id, code, status, error;
    };
    const std::vector<Program> programs = {
        {"linear_relu", kLinear, "pass", ""},
        {"linear_relu", replaced(kLinear, "w[c * IN + k]", "w[k * OUT + c]"), "mismatch", "data/output.bin: first mismatch at index"},
        {"scaled_add", kScaledAdd, "pass", ""},
        {"scaled_add", replaced(kScaledAdd, "if (i < N)", "if (i < N - 1)"), "mismatch", "first mismatch at index (23, 39)"},
        {"scaled_add", replaced(kScaledAdd, "store(\"data/output.bin\", y, N)", "store(\"data/output.bin\", y, N - 1)"),
         "mismatch", "data/output.bin: holds 3836 bytes, expected 3840"},
        {"sum_and_argmax", kSumArgmax, "pass", ""},
        {"sum_and_argmax", replaced(kSumArgmax, "if (v > best)", "if (v < best)"), "mismatch",
         "data/output1.bin: first mismatch"},
    };
    std::map<std::string, cuset::eval::ResultRecord> records;
    for (const Program& p : programs) {
        cuset::eval::ResultRecord& rec = records[p.id];
        rec.id = p.id;
        rec.task_name = p.id;
        rec.codes.push_back(p.code);
        rec.responses.push_back("```cuda\n" + p.code + "\n```");
    }
    std::vector<cuset::eval::ResultRecord> recs;
    for (auto& [id, rec] : records) recs.push_back(rec);
    cuset::eval::write_results(dir + "/results.jsonl", recs);
    r = run_cuset("eval --results " + q(dir + "/results.jsonl") + " --tasks " + q(tasks_file) + " --judge emulate --out " +
                  q(dir + "/eval") + " --set eval.jobs=2 --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = read_json(dir + "/eval/eval.json");
    std::map<std::string, json> samples;
    for (const json& t : j["tasks"]) samples[t["id"].get<std::string>()] = t["samples"];
    std::map<std::string, size_t> seen;
    for (const Program& p : programs) {
        const size_t k = seen[p.id]++;
        ASSERT_TRUE(samples.count(p.id)) << p.id;
        const json& s = samples[p.id].at(k);
        EXPECT_EQ(s["status"], p.status) << p.id << " #" << k << ": " << s.dump();
        if (!p.error.empty()) {
            EXPECT_NE(s["error"].get<std::string>().find(p.error), std::string::npos) << s.dump();
        }
    }

    // `data build` takes the same tasks: of a right and a wrong candidate for scaled_add, the right one is kept.
    write_file(dir + "/cands.jsonl",
               json{{"id", "scaled_add"}, {"sample", 1}, {"round", 1}, {"response", "```cuda\n" + programs[3].code + "\n```"}}
                       .dump() + "\n" +
                   json{{"id", "scaled_add"}, {"sample", 2}, {"round", 1}, {"response", "```cuda\n" + programs[2].code + "\n```"}}
                       .dump() + "\n");
    r = run_cuset("data build --tasks " + q(tasks_file) + " --candidates " + q(dir + "/cands.jsonl") +
                  " --task-ids scaled_add --samples 2 --out " + q(dir + "/build") +
                  " --judge emulate --config configs/demo.yaml --set log.progress=never");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("data build [emulated]: 1 task(s), 2 attempt(s); tasks passed after each round: 1; 1 sample(s) kept"),
              std::string::npos) << r.out;
    const std::vector<std::string> kept = cuset::test::lines_of(dir + "/build/train.jsonl");
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_NE(kept[0].find("if (i < N) y[i] = a[i] + 0.5f * b[i];"), std::string::npos) << kept[0];
}

TEST(ModuleTasksCli, ABadModuleIsOneLineNamingItsFileExitThreeAndNothingIsWritten) {
    const std::string dir = scratch_dir("module_tasks_bad");
    const std::string bad = fixtures() + "/bad";
    const std::map<std::string, std::string> why = {
        {"no_get_inputs", "no top-level `def get_inputs()`"},
        {"syntax_error", "syntax error at line 7: invalid syntax"},
        {"string_output", "forward returns a str, not a tensor or a tuple of tensors"},
        {"list_input", "get_inputs()[1] (sizes) is a list: an input must be a tensor, an int or a float"},
        {"double_input", "get_inputs()[0] (x) is float64: only float32, float16, bfloat16, integer and bool tensors can be files"},
        {"forged_manifest", "its gen.py printed a malformed manifest (a name in outputs that is not an identifier)"},
    };
    for (const auto& [name, message] : why) {
        const std::string out = dir + "/" + name + ".jsonl";
        auto r = run_cuset("data tasks --from-modules " + q(bad + "/" + name + ".py") + " --out " + q(out) +
                           " --config configs/demo.yaml --set log.progress=never");
        EXPECT_EQ(r.exit_code, 3) << name << "\n" << r.err;
        EXPECT_NE(r.err.find(bad + "/" + name + ".py: " + message + "\n"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(out)) << name;
    }
    // The folder: every bad module listed, then one line for the whole.
    auto r = run_cuset("data tasks --from-modules " + q(bad) + " --out " + q(dir + "/all.jsonl") +
                       " --config configs/demo.yaml --set log.progress=never");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    for (const auto& [name, message] : why) EXPECT_NE(r.err.find(bad + "/" + name + ".py: " + message), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(bad + ": 6 module(s) cannot be made into tasks (listed above); " + dir + "/all.jsonl not written"),
              std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/all.jsonl"));
    // Usage: --out is needed; --from-sft and --from-modules exclude each other.
    r = run_cuset("data tasks --from-modules " + q(bad));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--from-modules needs --out TASKS.jsonl"), std::string::npos) << r.err;
    r = run_cuset("data tasks --from-modules " + q(bad) + " --from-sft x.jsonl --out " + q(dir + "/x.jsonl"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("give either --from-sft or --from-modules, not both"), std::string::npos) << r.err;
}
