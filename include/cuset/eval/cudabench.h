// CUDABench's data and formats (github.com/CUDA-Bench/CUDABench): the tasks file (one JSON object
// a line: id, task_name, task_description, inputs, outputs, gpu, bench.cu, gen.py, compare.py,
// level1_prompt .. level3_prompt), the two prompts it sends a model (the system prompt as it is
// sent, i.e. without formatting: its "{gpu}" and doubled braces reach the model verbatim; the
// user prompt from its template), the program taken from an answer (the first fenced block,
// stripped), and the results file its evaluator reads (id, task_name, prompt, run_id, then
// code1, response1, code2, response2, ... written the way Python's json.dumps(ensure_ascii=False)
// writes them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuset::eval {

// CUDABench's default GPU label (its Config.gpu_model); a task's own "gpu" field is used only
// when the label is empty, and "unknown" when the task has none either.
inline constexpr const char* kDefaultGpuName = "NVIDIA GeForce RTX 4090";

// One input or output of a task: the name, dtype and shape as written in the prompt
// (Python's str() of the JSON values: a string as is, a list as "[128, 4]").
struct TensorSpec {
    std::string name, dtype, shape;
};

struct Task {
    nlohmann::json id;        // as in the file (an integer in CUDABench)
    std::string id_text;      // id as text ("7")
    std::string task_name;    // also the task's family (CUDABench has five tasks per name)
    std::string task_description;
    std::vector<TensorSpec> inputs, outputs;
    std::string gpu;          // the task's "gpu" field ("" when absent)
    std::string family;       // the record's "family" ("" when absent; "kernelbench": data tasks --from-kernelbench)
    // A KernelBench problem (family "kernelbench"): candidates are Python files defining ModelNew
    // (judge/kernelbench_judge.h), the prompt is KernelBench's own.
    struct KernelBench {
        std::string source;     // kernelbench_source: the problem module
        std::string precision;  // kernelbench_precision: fp32 | fp16 | bf16
        double tolerance = 0;   // kernelbench_tolerance
        std::string prompt;     // kernelbench_prompt
    };
    std::optional<KernelBench> kernelbench;
    std::string bench_cu, gen_py, compare_py;
    std::string level_prompt[3];  // level1_prompt .. level3_prompt
    std::string file;         // where it was read
    int64_t line = 0;
};

// Reads a tasks file. Blank lines are skipped; anything else that is not a complete task (bad
// JSON, a missing or mistyped field, a duplicate id) is an InputError naming "<file>:<line>".
std::vector<Task> load_tasks(const std::string& path);
// The same checks on the text of a tasks file not yet written (`path` names it in messages): a
// command that makes a tasks file checks it so before writing it.
std::vector<Task> parse_tasks(const std::string& jsonl, const std::string& path);

// Python's str() of a JSON value (strings as is at top level and in single quotes inside lists
// and objects, True/False/None, ints, floats in repr form, "[a, b]", "{'k': v}").
std::string python_str(const nlohmann::ordered_json& v);

// The system prompt exactly as CUDABench sends it.
const std::string& system_prompt();
// The system prompt of a task: KernelBench's ("You are a helpful assistant", its query_server's
// default) for a KernelBench problem, else CUDABench's.
const std::string& system_prompt(const Task& task);

// The user prompt of `task` at description level 1..3 with the GPU label `gpu_name` (empty =
// the task's gpu field, else "unknown"), byte-identical to CUDABench's builder; for a KernelBench
// problem its own prompt (kernelbench_prompt, made by KernelBench's builder), whatever the level.
std::string build_user_prompt(const Task& task, int level, const std::string& gpu_name);

// The program in a model's answer by CUDABench's rule: the first ```[word] ... ``` block (the
// optional language word and the whitespace after it excluded), stripped of surrounding
// whitespace; nullopt when the answer has no closed fence.
std::optional<std::string> extract_code(const std::string& response);
// The program of an answer to `task`: for a KernelBench problem by KernelBench's rule
// (extract_first_code with ["python", "cpp"]: the first ``` ... ``` block, stripped, then a
// leading "python", then a leading "cpp", removed and stripped again), else extract_code's.
std::optional<std::string> extract_code(const Task& task, const std::string& response);

// A repair turn of a sample (eval --turns): the judge's finding sent as the user turn, and the
// answer and program that came back.
struct RepairAttempt {
    int64_t turn = 2;
    std::string feedback;
    std::optional<std::string> response, code;
};

// One line of a results file.
struct ResultRecord {
    nlohmann::json id;
    std::string task_name;
    std::string prompt;
    std::string run_id;  // CUDABench's 8-hex run id (not used by its evaluator)
    // code1..codeK and response1..responseK; nullopt = JSON null (no answer, or no fence).
    std::vector<std::optional<std::string>> codes, responses;
    // [sample]: its repair turns, written as "repairs<i>" (a list of {turn, feedback, response,
    // code}) after the samples; CUDABench's evaluator reads code<i> (turn 1) and passes them over.
    std::vector<std::vector<RepairAttempt>> repairs;
    int64_t line = 0;    // where it was read (0 = made in memory)
};

// The line as CUDABench writes it (no trailing newline).
std::string result_record_line(const ResultRecord& r);
// Writes the records atomically, one line each.
void write_results(const std::string& path, const std::vector<ResultRecord>& records);
// Reads a results file (CUDABench's own, or ours): code<i>/response<i> for i = 1, 2, ... while
// code<i> is present, plus a single unnumbered "code" as sample 1 when there is no code1.
// One line per task: an id on a second line is an error. Errors name "<file>:<line>".
std::vector<ResultRecord> load_results(const std::string& path);

// Python's json.dumps(value, ensure_ascii=False) of a string (with its quotes).
std::string python_json_string(const std::string& s);

// A fresh 8-hex-digit run id.
std::string new_run_id();

}  // namespace cuset::eval
