// KernelBench's problems as tasks (databuild/kernelbench_tasks.h): the prompt cuset builds for
// each fixture module (tests/fixtures/kernelbench, KernelBench's layout) equals, byte for byte,
// the one KernelBench's own builder made for it (golden_prompts.jsonl; its README says how), for
// each prompt option and precision; the same check runs on a real checkout when
// CUSET_KERNELBENCH_DIR and CUSET_KERNELBENCH_PROMPTS name one and its prompts. Then the walk of
// the level folders (ids, names, what is not a problem), the records and their reading back, the
// errors, and `data tasks --from-kernelbench` through the binary.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/databuild/kernelbench_tasks.h"
#include "cuset/eval/cudabench.h"
#include "test_util.h"

namespace fs = std::filesystem;
using cuset::test::read_file;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;
using namespace cuset::databuild;

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }
std::string fixtures() { return std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/kernelbench"; }

std::vector<json> read_jsonl(const std::string& path) {
    std::vector<json> out;
    const std::string text = read_file(path);
    for (size_t b = 0; b < text.size();) {
        size_t e = text.find('\n', b);
        if (e == std::string::npos) e = text.size();
        if (e > b) out.push_back(json::parse(text.substr(b, e - b)));
        b = e + 1;
    }
    return out;
}

// Where two texts first differ, with a little of each around it.
std::string first_difference(const std::string& want, const std::string& got) {
    size_t i = 0;
    while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
    const size_t from = i < 40 ? 0 : i - 40;
    std::string msg = "first difference at byte ";
    msg += std::to_string(i);
    msg += "\n  KernelBench: ...";
    msg += json(want.substr(from, 80)).dump();
    msg += "\n  cuset:       ...";
    msg += json(got.substr(from, 80)).dump();
    return msg;
}

// Compares cuset's prompt of every problem under `dir` with each golden line; the number equal.
int expect_prompts_equal(const std::string& dir, const std::string& golden_path, int* n_lines) {
    std::map<std::pair<int, int64_t>, KernelBenchProblem> by;
    for (KernelBenchProblem& p : kernelbench_problems(dir)) by[{p.level, p.problem_id}] = std::move(p);
    int equal = 0;
    *n_lines = 0;
    for (const json& g : read_jsonl(golden_path)) {
        ++*n_lines;
        const auto it = by.find({g["level"].get<int>(), g["problem_id"].get<int64_t>()});
        if (it == by.end()) {
            ADD_FAILURE() << "no problem " << g["name"] << " of level " << g["level"] << " under " << dir;
            continue;
        }
        EXPECT_EQ(it->second.name, g["name"].get<std::string>());
        const auto option = kernelbench_option_named(g["option"].get<std::string>());
        const auto precision = kernelbench_precision_named(g["precision"].get<std::string>());
        if (!option || !precision) {
            ADD_FAILURE() << "golden line with option " << g["option"] << ", precision " << g["precision"];
            continue;
        }
        const std::string want = g["prompt"].get<std::string>();
        const std::string got = kernelbench_prompt(it->second.source, *option, *precision);
        if (got == want) {
            ++equal;
            continue;
        }
        ADD_FAILURE() << "level " << g["level"] << " " << g["name"].get<std::string>() << " ("
                      << g["option"].get<std::string>() << ", " << g["precision"].get<std::string>()
                      << "): " << first_difference(want, got);
    }
    return equal;
}

template <class F>
std::string input_error_of(F f) {
    try {
        f();
    } catch (const cuset::InputError& e) {
        return e.what();
    }
    return "(no InputError)";
}

void copy_fixtures_to(const std::string& dest) {
    fs::create_directories(dest);
    fs::copy(fixtures() + "/level1", dest + "/level1", fs::copy_options::recursive);
    fs::copy(fixtures() + "/level2", dest + "/level2", fs::copy_options::recursive);
}

}  // namespace

TEST(KernelBenchPrompt, EqualsKernelBenchsOwnBuilderOnEveryFixtureOptionAndPrecision) {
    int lines = 0;
    const int equal = expect_prompts_equal(fixtures(), fixtures() + "/golden_prompts.jsonl", &lines);
    EXPECT_EQ(lines, 20);  // 5 modules x (one_shot fp32, zero_shot fp32, one_shot fp16, zero_shot bf16)
    EXPECT_EQ(equal, lines);
}

TEST(KernelBenchPrompt, LineEndsAreReadAsKernelBenchReadsThemAndTheSourceIsNotReformatted) {
    const std::string dir = scratch_dir("kernelbench_crlf");
    fs::create_directories(dir + "/level1");
    std::string crlf;
    for (char c : read_file(fixtures() + "/level1/23_Softmax.py")) {
        if (c == '\n') crlf += '\r';
        crlf += c;
    }
    write_file(dir + "/level1/23_Softmax.py", crlf);
    const std::vector<KernelBenchProblem> p = kernelbench_problems(dir);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].source, read_file(fixtures() + "/level1/23_Softmax.py"));
    std::string want;
    for (const json& g : read_jsonl(fixtures() + "/golden_prompts.jsonl"))
        if (g["name"] == "23_Softmax.py" && g["option"] == "one_shot" && g["precision"] == "fp32") want = g["prompt"];
    EXPECT_EQ(kernelbench_prompt(p[0].source, KernelBenchPromptOption::kOneShot, KernelBenchPrecision::kFp32), want);
    // Braces and placeholders of the module are text, not template fields.
    EXPECT_NE(want.find("Braces stay as written: {ref_arch_src}, {backend_display}, {{doubled}} and {}."), std::string::npos);
}

TEST(KernelBenchProblems, LevelsIdsAndNamesAsKernelBenchReadsThem) {
    const std::vector<KernelBenchProblem> p = kernelbench_problems(fixtures());
    std::vector<std::tuple<int, int64_t, std::string>> got;
    for (const KernelBenchProblem& x : p) got.emplace_back(x.level, x.problem_id, x.name);
    EXPECT_EQ(got, (std::vector<std::tuple<int, int64_t, std::string>>{
                       {1, 1, "1_Square_matrix_multiplication_.py"},
                       {1, 19, "19_ReLU.py"},
                       {1, 23, "23_Softmax.py"},
                       {2, 1, "1_Conv2D_ReLU_BiasAdd.py"},
                       {2, 12, "12_Gemm_Multiply_LeakyReLU.py"}}));
    EXPECT_EQ(p[1].path, fixtures() + "/level1/19_ReLU.py");
    EXPECT_EQ(p[1].source, read_file(p[1].path));
    EXPECT_EQ(kernelbench_problems(fixtures(), {2}).size(), 2u);

    // A checkout: DIR/KernelBench/level<N>. Files that are not problems are left out as
    // KernelBench leaves them out (no number and '_' first, not .py, a folder).
    const std::string checkout = scratch_dir("kernelbench_checkout");
    copy_fixtures_to(checkout + "/KernelBench");
    write_file(checkout + "/KernelBench/level1/helpers.py", "x = 1\n");
    write_file(checkout + "/KernelBench/level1/_7_private.py", "x = 1\n");
    write_file(checkout + "/KernelBench/level1/7.py", "x = 1\n");
    write_file(checkout + "/KernelBench/level1/8_Notes.txt", "x = 1\n");
    fs::create_directories(checkout + "/KernelBench/level1/9_folder.py");
    EXPECT_EQ(kernelbench_levels_dir(checkout), checkout + "/KernelBench");
    EXPECT_EQ(kernelbench_problems(checkout).size(), 5u);
    EXPECT_EQ(kernelbench_problems(checkout, {1}).size(), 3u);
}

TEST(KernelBenchProblems, ErrorsNameThePath) {
    const std::string root = scratch_dir("kernelbench_errors");
    EXPECT_EQ(input_error_of([&] { kernelbench_problems(root + "/none"); }),
              "--from-kernelbench: '" + root + "/none' does not exist");
    write_file(root + "/file.py", "x = 1\n");
    EXPECT_EQ(input_error_of([&] { kernelbench_problems(root + "/file.py"); }),
              "--from-kernelbench: '" + root + "/file.py' is not a folder; give a KernelBench checkout or its KernelBench folder");
    fs::create_directories(root + "/empty/KernelBench/level5");
    EXPECT_EQ(input_error_of([&] { kernelbench_problems(root + "/empty"); }),
              "--from-kernelbench: no level1 .. level4 folder in '" + root + "/empty' or '" + root +
                  "/empty/KernelBench'; give a KernelBench checkout or its KernelBench folder");

    const std::string dir = root + "/kb";
    copy_fixtures_to(dir);
    EXPECT_EQ(input_error_of([&] { kernelbench_problems(dir, {1, 3}); }),
              "--from-kernelbench: level 3 has no folder '" + dir + "/level3'");
    EXPECT_THROW(kernelbench_problems(dir, {5}), cuset::UsageError);
    fs::create_directories(dir + "/level4");
    EXPECT_EQ(input_error_of([&] { kernelbench_problems(dir); }),
              "--from-kernelbench: no problem (<id>_<name>.py) in '" + dir + "/level4'");
    fs::remove(dir + "/level4");
    write_file(dir + "/level1/019_Other.py", read_file(dir + "/level1/19_ReLU.py"));
    EXPECT_EQ(input_error_of([&] { kernelbench_problems(dir); }),
              "--from-kernelbench: two level 1 problems of id 19 in '" + dir + "/level1': 019_Other.py and 19_ReLU.py");
    fs::remove(dir + "/level1/019_Other.py");
    write_file(dir + "/level2/3_Latin1.py", "# caf\xe9\n");
    EXPECT_EQ(input_error_of([&] { kernelbench_problems(dir); }),
              "--from-kernelbench: '" + dir + "/level2/3_Latin1.py' is not UTF-8 text");
}

TEST(KernelBenchTasks, RecordsCarryTheProblemAndLoadAsTasks) {
    KernelBenchOptions o;
    const KernelBenchTasks t = tasks_from_kernelbench(fixtures(), o);
    EXPECT_EQ(t.converted, 5);
    EXPECT_TRUE(t.problems.empty());
    const std::vector<cuset::eval::Task> tasks = cuset::eval::parse_tasks(t.jsonl, "kernelbench.jsonl");
    ASSERT_EQ(tasks.size(), 5u);
    EXPECT_EQ(tasks[1].id_text, "level1_19_ReLU");
    EXPECT_EQ(tasks[1].task_name, "19_ReLU");
    EXPECT_EQ(tasks[3].id_text, "level2_1_Conv2D_ReLU_BiasAdd");

    const std::vector<json> records = [&] {
        std::vector<json> r;
        for (size_t b = 0, e; (e = t.jsonl.find('\n', b)) != std::string::npos; b = e + 1)
            r.push_back(json::parse(t.jsonl.substr(b, e - b)));
        return r;
    }();
    const std::optional<KernelBenchTask> relu = kernelbench_task_of(records[1], "kernelbench.jsonl:2");
    ASSERT_TRUE(relu);
    EXPECT_EQ(relu->id, "level1_19_ReLU");
    EXPECT_EQ(relu->problem.level, 1);
    EXPECT_EQ(relu->problem.problem_id, 19);
    EXPECT_EQ(relu->problem.name, "19_ReLU.py");
    EXPECT_EQ(relu->problem.source, read_file(fixtures() + "/level1/19_ReLU.py"));
    EXPECT_EQ(relu->get_inputs, "def get_inputs():\n    x = torch.randn(batch_size, dim)\n    return [x]");
    EXPECT_EQ(relu->get_init_inputs, "def get_init_inputs():\n    return []  # No special initialization inputs needed");
    EXPECT_EQ(relu->precision, KernelBenchPrecision::kFp32);
    EXPECT_DOUBLE_EQ(relu->tolerance, 1e-4);
    EXPECT_EQ(relu->option, KernelBenchPromptOption::kOneShot);
    EXPECT_EQ(relu->prompt, kernelbench_prompt(relu->problem.source, KernelBenchPromptOption::kOneShot,
                                               KernelBenchPrecision::kFp32));
    EXPECT_EQ(records[1]["level1_prompt"], relu->prompt);
    EXPECT_EQ(records[1]["family"], "kernelbench");
    // Tabs, and a function that ends the file before blank lines and a line of spaces.
    const std::optional<KernelBenchTask> gemm = kernelbench_task_of(records[4], "kernelbench.jsonl:5");
    ASSERT_TRUE(gemm);
    EXPECT_EQ(gemm->get_init_inputs,
              "def get_init_inputs():\n\treturn [in_features, out_features, multiplier, negative_slope]");

    o.precision = KernelBenchPrecision::kBf16;
    o.option = KernelBenchPromptOption::kZeroShot;
    o.levels = {2};
    const KernelBenchTasks bf = tasks_from_kernelbench(fixtures(), o);
    ASSERT_EQ(bf.converted, 2);
    const std::optional<KernelBenchTask> conv = kernelbench_task_of(json::parse(bf.jsonl.substr(0, bf.jsonl.find('\n'))), "x");
    ASSERT_TRUE(conv);
    EXPECT_EQ(conv->precision, KernelBenchPrecision::kBf16);
    EXPECT_DOUBLE_EQ(conv->tolerance, 1e-2);
    EXPECT_EQ(conv->option, KernelBenchPromptOption::kZeroShot);
    EXPECT_EQ(conv->prompt.find("Here's an example"), std::string::npos);

    // Not a KernelBench record, and a KernelBench record with a field missing.
    EXPECT_FALSE(kernelbench_task_of(json{{"id", 1}, {"family", "pytorch-module"}}, "f:1"));
    json broken = records[0];
    broken.erase("kernelbench_source");
    EXPECT_EQ(input_error_of([&] { kernelbench_task_of(broken, "f:1"); }),
              "f:1: \"kernelbench_source\" must be a string");
    broken = records[0];
    broken["kernelbench_tolerance"] = "tight";
    EXPECT_EQ(input_error_of([&] { kernelbench_task_of(broken, "f:1"); }), "f:1: \"kernelbench_tolerance\" must be a number");
    broken = records[0];
    broken["kernelbench_precision"] = "fp64";
    EXPECT_EQ(input_error_of([&] { kernelbench_task_of(broken, "f:1"); }),
              "f:1: KernelBench task field \"kernelbench_precision\" is not fp32, fp16 or bf16");
}

TEST(KernelBenchTasks, AModuleWithoutModelOrItsInputsIsListedNotMadeATask) {
    const std::string dir = scratch_dir("kernelbench_static");
    copy_fixtures_to(dir);
    write_file(dir + "/level1/5_NoModel.py", "import torch\n\nclass Net(torch.nn.Module):\n    pass\n\n"
                                             "def get_inputs():\n    return []\n\ndef get_init_inputs():\n    return []\n");
    const KernelBenchTasks t = tasks_from_kernelbench(dir, {});
    EXPECT_EQ(t.converted, 5);
    EXPECT_EQ(t.problems, (std::vector<std::string>{dir + "/level1/5_NoModel.py: no top-level `class Model(...)`"}));
}

TEST(KernelBenchTopLevelFunction, FromItsDefToItsLastIndentedLine) {
    EXPECT_EQ(top_level_function("def get_inputs():\n    return [1]\n\n\nx = 2\n", "get_inputs"),
              "def get_inputs():\n    return [1]");
    EXPECT_EQ(top_level_function("class A:\n    def get_inputs(self):\n        pass\n", "get_inputs"), "");
    // The last definition is the one Python keeps.
    EXPECT_EQ(top_level_function("def get_inputs():\n    return [1]\ndef get_inputs():\n    return [2]", "get_inputs"),
              "def get_inputs():\n    return [2]");
}

TEST(KernelBenchTasksCli, DataTasksWritesTheRecordsAndRefusesWhatItCannotUse) {
    const std::string dir = scratch_dir("kernelbench_cli");
    auto r = run_cuset("data tasks --from-kernelbench " + q(fixtures()) + " --out " + q(dir + "/all.jsonl"));
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const std::vector<json> all = read_jsonl(dir + "/all.jsonl");
    ASSERT_EQ(all.size(), 5u);
    EXPECT_EQ(all[0]["id"], "level1_1_Square_matrix_multiplication_");
    EXPECT_EQ(all[0]["kernelbench_prompt_option"], "one_shot");
    EXPECT_EQ(all[0]["kernelbench_precision"], "fp32");

    r = run_cuset("data tasks --from-kernelbench " + q(fixtures()) + " --levels 2 --prompt-option zero_shot --precision bf16 --out " +
                  q(dir + "/l2.jsonl"));
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const std::vector<json> l2 = read_jsonl(dir + "/l2.jsonl");
    ASSERT_EQ(l2.size(), 2u);
    int compared = 0;
    for (const json& g : read_jsonl(fixtures() + "/golden_prompts.jsonl"))
        for (const json& rec : l2)
            if (g["level"] == 2 && g["name"] == rec["kernelbench_name"] && g["option"] == "zero_shot" && g["precision"] == "bf16") {
                EXPECT_EQ(rec["kernelbench_prompt"], g["prompt"]);
                ++compared;
            }
    EXPECT_EQ(compared, 2);

    r = run_cuset("data tasks --from-kernelbench " + q(dir + "/missing") + " --out " + q(dir + "/x.jsonl"));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("--from-kernelbench: '" + dir + "/missing' does not exist"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/x.jsonl"));

    const std::string bad = dir + "/bad";
    copy_fixtures_to(bad);
    write_file(bad + "/level2/7_NoInputs.py", "class Model(nn.Module):\n    pass\n\ndef get_init_inputs():\n    return []\n");
    r = run_cuset("data tasks --from-kernelbench " + q(bad) + " --out " + q(dir + "/x.jsonl"));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(bad + "/level2/7_NoInputs.py: no top-level `def get_inputs()`"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/x.jsonl"));

    for (const std::string& args :
         {"--from-kernelbench " + q(fixtures()) + " --from-modules " + q(fixtures()) + " --out " + q(dir + "/x.jsonl"),
          "--from-kernelbench " + q(fixtures()) + " --check --out " + q(dir + "/x.jsonl"),
          "--from-kernelbench " + q(fixtures()),
          "--from-modules " + q(fixtures() + "/level1") + " --levels 1 --out " + q(dir + "/x.jsonl")}) {
        r = run_cuset("data tasks " + args);
        EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    }
    EXPECT_FALSE(fs::exists(dir + "/x.jsonl"));
}
