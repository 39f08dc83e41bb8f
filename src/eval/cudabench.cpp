// CUDABench's tasks file, prompts, program extraction and results file (eval/cudabench.h).
#include "cuset/eval/cudabench.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include <utf8proc.h>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/utf8_text.h"

namespace cuset::eval {

namespace {

using ojson = nlohmann::ordered_json;

// CUDABench sends its system prompt unformatted: "{gpu}" and the doubled braces stay as written.
const char* const kSystemPrompt =
    "You are an expert CUDA High-Performance Computing (HPC) engineer.\n"
    "Your goal is to write a standalone, compilable, and highly efficient CUDA program based on the user's task description.\n"
    "\n"
    "### CRITICAL INSTRUCTIONS\n"
    "\n"
    "1. **Output Format**: \n"
    "   - You must output **ONLY** a single code block (starting with ```cpp and ending with ```). \n"
    "   - Do NOT include any introductory text, explanations, or concluding remarks. \n"
    "   - The content inside the block must be the complete C++ source code.\n"
    "\n"
    "2. **Mandatory Helper Functions & Headers**: \n"
    "   - You MUST start your code with the exact boilerplate provided below. \n"
    "   - **Do NOT add any other headers** (like <algorithm> or <cmath>) outside this block; they are already included.\n"
    "   - Do NOT modify the `read_binary` or `write_binary` functions.\n"
    "\n"
    "// --- BEGIN REQUIRED BOILERPLATE ---\n"
    "#include <iostream>\n"
    "#include <fstream>\n"
    "#include <string>\n"
    "#include <vector>\n"
    "#include <cmath>\n"
    "#include <algorithm>\n"
    "#include <cfloat>\n"
    "#include <cuda_runtime.h>\n"
    "\n"
    "void read_binary(const std::string& filename, float* data, size_t size) {{\n"
    "    std::ifstream in(filename, std::ios::binary);\n"
    "    if (!in) {{\n"
    "        std::cerr << \"Can not open: \" << filename << std::endl;\n"
    "        exit(1);\n"
    "    }}\n"
    "    in.read(reinterpret_cast<char*>(data), size * sizeof(float));\n"
    "    in.close();\n"
    "}}\n"
    "\n"
    "void write_binary(const std::string& filename, const float* data, size_t size) {{\n"
    "    std::ofstream out(filename, std::ios::binary);\n"
    "    if (!out) {{\n"
    "        std::cerr << \"Can not write: \" << filename << std::endl;\n"
    "        exit(1);\n"
    "    }}\n"
    "    out.write(reinterpret_cast<const char*>(data), size * sizeof(float));\n"
    "    out.close();\n"
    "}}\n"
    "// --- END REQUIRED BOILERPLATE ---\n"
    "\n"
    "3. **Implementation Rules**:\n"
    "   - **Single Kernel Entry**: Implement the main logic in a single `__global__` function. You may define `__device__` helper functions if needed.\n"
    "   - **Precision**: Use `float` (float32) for all data. \n"
    "   - **Math Functions**: Do NOT use `std::max`, `std::min`, or `std::abs` in device code. ALWAYS use intrinsics: `fmaxf`, `fminf`, `fabsf`, `sqrtf`, `expf`, etc.\n"
    "   - **Safety**: Always perform boundary checks.\n"
    "\n"
    "4. **Strict Data & Parameter Binding** (CRITICAL):\n"
    "   - **Variable Names**: You MUST match the variable names in the `main` function to the names provided in the Input/Output section (e.g., Input `matA` -> Host pointer `h_matA` / Device pointer `d_matA`).\n"
    "   - **Filenames**: You MUST assume all input and output files are located in the `data/` directory. Construct the file path by prepending `data/` and appending `.bin` to the variable name (e.g., Input `matA` -> read from `\"data/matA.bin\"`), unless a full path is explicitly provided.\n"
    "   - **Shapes & Sizes**: \n"
    "     - Respect the explicit shape given (e.g., `(1024, 4096)`). \n"
    "     - Calculate total elements as the product of dimensions.\n"
    "     - Hardcode these dimensions as `const int` or `#define` if they are fixed numbers in the prompt. Do NOT use arbitrary default sizes.\n"
    "   - **Data Types**: Even if the input says `int` or `double`, you must treat them as `float` to comply with the mandatory boilerplate, or cast them appropriately if logic requires.\n"
    "\n"
    "5. **Main Function Logic**:\n"
    "   - Define file paths based on the Rule #4.\n"
    "   - Allocate Host memory (`new float[...]`) and Device memory (`cudaMalloc`) using the EXACT sizes from the task description.\n"
    "   - Read input using `read_binary`.\n"
    "   - Copy Host -> Device (`cudaMemcpy`).\n"
    "   - **Launch Configuration**: Calculate grid and block dimensions dynamically based on input size. Optimize for the {gpu}.\n"
    "   - Launch the kernel.\n"
    "   - Copy Device -> Host.\n"
    "   - Write output using `write_binary`.\n"
    "   - Free all memory (`cudaFree`, `delete[]`).\n";

std::string where(const std::string& file, int64_t line) { return file + ":" + std::to_string(line); }

// Python's repr() of a string: single quotes unless it holds ' and no ".
std::string python_repr_string(const std::string& s) {
    char q = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
    std::string out(1, q);
    for (unsigned char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == static_cast<unsigned char>(q)) { out += '\\'; out += static_cast<char>(c); }
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else out += static_cast<char>(c);
    }
    out += q;
    return out;
}

// Python's repr() of a float: the shortest digits that round-trip, fixed notation for decimal
// exponents -4 <= e < 16 (with ".0" when integral), else d.ddde+XX.
std::string python_repr_float(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
    char buf[64];
    int prec = 1;
    for (; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (std::strtod(buf, nullptr) == x) break;
    }
    std::string sci = buf;  // d.ddde[+-]XX
    size_t e = sci.find('e');
    int exp10 = std::atoi(sci.c_str() + e + 1);
    std::string mant = sci.substr(0, e);
    bool neg = !mant.empty() && mant[0] == '-';
    if (neg) mant.erase(0, 1);
    std::string digits;
    for (char c : mant)
        if (c != '.') digits += c;
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    std::string out;
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 >= 0) {
            std::string ip = digits.substr(0, std::min(digits.size(), static_cast<size_t>(exp10 + 1)));
            while (ip.size() < static_cast<size_t>(exp10 + 1)) ip += '0';
            std::string fp = digits.size() > static_cast<size_t>(exp10 + 1) ? digits.substr(exp10 + 1) : "0";
            out = ip + "." + fp;
        } else {
            out = "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
        }
    } else {
        out = digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
        out += eb;
    }
    return neg ? "-" + out : out;
}

std::string python_str_inner(const ojson& v, bool top) {
    switch (v.type()) {
        case ojson::value_t::string: return top ? v.get<std::string>() : python_repr_string(v.get<std::string>());
        case ojson::value_t::boolean: return v.get<bool>() ? "True" : "False";
        case ojson::value_t::null: return "None";
        case ojson::value_t::number_integer:
        case ojson::value_t::number_unsigned: return v.dump();
        case ojson::value_t::number_float: return python_repr_float(v.get<double>());
        case ojson::value_t::array: {
            std::string out = "[";
            for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + python_str_inner(v[i], false);
            return out + "]";
        }
        case ojson::value_t::object: {
            std::string out = "{";
            bool first = true;
            for (auto it = v.begin(); it != v.end(); ++it) {
                out += (first ? "" : ", ") + python_repr_string(it.key()) + ": " + python_str_inner(it.value(), false);
                first = false;
            }
            return out + "}";
        }
        default: return v.dump();
    }
}

const ojson& need_field(const ojson& rec, const char* key, const std::string& at) {
    if (!rec.contains(key)) throw InputError(at + ": task has no \"" + key + "\" field");
    return rec[key];
}

std::string need_string(const ojson& rec, const char* key, const std::string& at) {
    const ojson& v = need_field(rec, key, at);
    if (!v.is_string()) throw InputError(at + ": task field \"" + std::string(key) + "\" must be a string, got " + v.type_name());
    return v.get<std::string>();
}

std::vector<TensorSpec> need_specs(const ojson& rec, const char* key, const std::string& at) {
    const ojson& v = need_field(rec, key, at);
    if (!v.is_array()) throw InputError(at + ": task field \"" + std::string(key) + "\" must be a list");
    std::vector<TensorSpec> out;
    for (size_t i = 0; i < v.size(); ++i) {
        const ojson& s = v[i];
        std::string what = std::string(key) + "[" + std::to_string(i) + "]";
        if (!s.is_object() || !s.contains("name") || !s.contains("dtype") || !s.contains("shape"))
            throw InputError(at + ": " + what + " must be an object with name, dtype and shape");
        out.push_back({python_str_inner(s["name"], true), python_str_inner(s["dtype"], true),
                       python_str_inner(s["shape"], true)});
    }
    return out;
}

// One UTF-8 code point at s[i]: its value and length (an invalid byte is U+FFFD, length 1).
char32_t decode_at(const std::string& s, size_t i, size_t* len) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) {
        *len = 1;
        return 0xFFFD;
    }
    char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k < n; ++k) {
        unsigned char d = static_cast<unsigned char>(s[i + k]);
        if ((d >> 6) != 2) {
            *len = 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (d & 0x3F);
    }
    *len = static_cast<size_t>(n);
    return cp;
}

// Python's str.isspace() (what \s and str.strip() use).
bool is_space_cp(char32_t c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

// Python's \w on str: letters and numbers (Unicode categories L*, N*) and '_'.
bool is_word_cp(char32_t c) {
    if (c < 0x80) return std::isalnum(static_cast<int>(c)) || c == '_';
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
        case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_ND:
        case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO: return true;
        default: return false;
    }
}

// Advances over the code points `pred` accepts.
template <class Pred>
size_t skip_while(const std::string& s, size_t i, Pred pred) {
    while (i < s.size()) {
        size_t len = 1;
        if (!pred(decode_at(s, i, &len))) break;
        i += len;
    }
    return i;
}

std::string strip(const std::string& s) {
    size_t b = skip_while(s, 0, is_space_cp);
    // From the end: the last code point that is not whitespace.
    size_t e = b, i = b;
    while (i < s.size()) {
        size_t len = 1;
        char32_t c = decode_at(s, i, &len);
        i += len;
        if (!is_space_cp(c)) e = i;
    }
    return s.substr(b, e - b);
}

std::string json_scalar_python(const nlohmann::json& v) {
    if (v.is_string()) return python_json_string(v.get<std::string>());
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    return v.dump();
}

}  // namespace

std::string python_str(const ojson& v) { return python_str_inner(v, true); }

namespace {

// One line of a tasks file (`text`, without its newline) as a task, or nothing for a blank line;
// `ids` collects the ids seen so far.
std::optional<Task> task_of_line(std::string text, const std::string& path, int64_t line, std::set<std::string>& ids) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) return std::nullopt;
    std::string at = where(path, line);
    const ojson rec = json_parse<ojson>(text, at);
    if (!rec.is_object()) throw InputError(at + ": a task must be a JSON object");
    Task t;
    const ojson& id = need_field(rec, "id", at);
    if (!id.is_number_integer() && !id.is_string()) throw InputError(at + ": task id must be an integer or a string");
    t.id = json_parse(id.dump(), at);
    t.id_text = id.is_string() ? id.get<std::string>() : id.dump();
    if (!ids.insert(t.id_text).second) throw InputError(at + ": duplicate task id " + t.id_text);
    t.task_name = need_string(rec, "task_name", at);
    t.task_description = rec.contains("task_description") && rec["task_description"].is_string()
                             ? rec["task_description"].get<std::string>() : "";
    t.inputs = need_specs(rec, "inputs", at);
    t.outputs = need_specs(rec, "outputs", at);
    if (rec.contains("gpu") && !rec["gpu"].is_null()) t.gpu = python_str_inner(rec["gpu"], true);
    if (rec.contains("family") && rec["family"].is_string()) t.family = rec["family"].get<std::string>();
    if (t.family == "kernelbench") {
        Task::KernelBench kb;
        kb.source = need_string(rec, "kernelbench_source", at);
        kb.precision = need_string(rec, "kernelbench_precision", at);
        if (kb.precision != "fp32" && kb.precision != "fp16" && kb.precision != "bf16")
            throw InputError(at + ": kernelbench_precision must be fp32, fp16 or bf16, got '" + kb.precision + "'");
        if (!rec.contains("kernelbench_tolerance") || !rec["kernelbench_tolerance"].is_number() ||
            !(rec["kernelbench_tolerance"].get<double>() >= 0))
            throw InputError(at + ": kernelbench_tolerance must be a number of at least 0");
        kb.tolerance = rec["kernelbench_tolerance"].get<double>();
        kb.prompt = need_string(rec, "kernelbench_prompt", at);
        t.kernelbench = std::move(kb);
    }
    t.bench_cu = need_string(rec, "bench.cu", at);
    t.gen_py = need_string(rec, "gen.py", at);
    t.compare_py = need_string(rec, "compare.py", at);
    for (int l = 0; l < 3; ++l) {
        std::string key = "level" + std::to_string(l + 1) + "_prompt";
        t.level_prompt[l] = need_string(rec, key.c_str(), at);
    }
    t.file = path;
    t.line = line;
    return t;
}

}  // namespace

// Tasks and results files are read line by line from a regular file only (a FIFO would block, a
// device never end), each line at most kMaxRecordBytes (core/input_file.h).
std::vector<Task> load_tasks(const std::string& path) {
    LineReader in(path, "tasks file");
    std::vector<Task> tasks;
    std::set<std::string> ids;
    std::string text;
    while (in.next(text))
        if (std::optional<Task> t = task_of_line(std::move(text), path, in.line_no(), ids)) tasks.push_back(std::move(*t));
    if (tasks.empty()) throw InputError(path + ": no tasks");
    return tasks;
}

std::vector<Task> parse_tasks(const std::string& jsonl, const std::string& path) {
    std::vector<Task> tasks;
    std::set<std::string> ids;
    int64_t line = 0;
    for (size_t pos = 0; pos < jsonl.size();) {
        size_t end = jsonl.find('\n', pos);
        if (end == std::string::npos) end = jsonl.size();
        ++line;
        if (end - pos > kMaxRecordBytes)
            throw InputError(where(path, line) + ": a line longer than " + std::to_string(kMaxRecordBytes) +
                             " bytes (the most one record may have)");
        if (std::optional<Task> t = task_of_line(jsonl.substr(pos, end - pos), path, line, ids))
            tasks.push_back(std::move(*t));
        pos = end + 1;
    }
    if (tasks.empty()) throw InputError(path + ": no tasks");
    return tasks;
}

const std::string& system_prompt() {
    static const std::string s = kSystemPrompt;
    return s;
}

const std::string& system_prompt(const Task& task) {
    static const std::string kernelbench = "You are a helpful assistant";
    return task.kernelbench ? kernelbench : system_prompt();
}

std::string build_user_prompt(const Task& task, int level, const std::string& gpu_name) {
    if (level < 1 || level > 3) throw UsageError("prompt level must be 1, 2 or 3, got " + std::to_string(level));
    if (task.kernelbench) return task.kernelbench->prompt;
    auto specs = [](const std::vector<TensorSpec>& v) {
        std::string out;
        for (size_t i = 0; i < v.size(); ++i)
            out += (i ? "\n" : "") + v[i].name + ": " + v[i].dtype + ", shape = " + v[i].shape;
        return out;
    };
    std::string gpu = !gpu_name.empty() ? gpu_name : (!task.gpu.empty() ? task.gpu : "unknown");
    std::string p;
    p += "\n### TASK SPECIFICATION\n\nTask Name:\n" + task.task_name;
    p += "\n\nTask Description:\n" + task.level_prompt[level - 1];
    p += "\n\nInput:\n" + specs(task.inputs);
    p += "\n\nOutput:\n" + specs(task.outputs);
    p += "\n\nGPU:\n" + gpu;
    p += "\n\nCUDA program:\n";
    return p;
}

std::optional<std::string> extract_code(const Task& task, const std::string& response) {
    if (!task.kernelbench) return extract_code(response);
    // KernelBench's extract_first_code(response, ["python", "cpp"]).
    const std::string r = strip(response);
    const size_t open = r.find("```");
    if (open == std::string::npos) return std::nullopt;
    const size_t close = r.find("```", open + 3);
    if (close == std::string::npos) return std::nullopt;
    std::string code = strip(r.substr(open + 3, close - open - 3));
    for (const std::string type : {"python", "cpp"})
        if (code.rfind(type, 0) == 0) code = strip(code.substr(type.size()));
    return code;
}

std::optional<std::string> extract_code(const std::string& r) {
    size_t open = r.find("```");
    while (open != std::string::npos) {
        size_t i = open + 3;
        i = skip_while(r, i, is_word_cp);
        i = skip_while(r, i, is_space_cp);
        size_t close = r.find("```", i);
        if (close != std::string::npos) return strip(r.substr(i, close - i));
        open = r.find("```", open + 1);
    }
    return std::nullopt;
}

std::string python_json_string(const std::string& text) {
    // A model's text may end inside a character or hold invalid bytes (a byte-level tokenizer
    // decodes whatever it sampled): written as Python's decode(errors="replace") would hold it.
    const std::string s = utf8_valid(text) ? text : utf8_sanitize(text);
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

std::string result_record_line(const ResultRecord& r) {
    auto opt = [](const std::optional<std::string>& s) { return s ? python_json_string(*s) : std::string("null"); };
    std::string out = "{\"id\": " + json_scalar_python(r.id);
    out += ", \"task_name\": " + python_json_string(r.task_name);
    out += ", \"prompt\": " + python_json_string(r.prompt);
    out += ", \"run_id\": " + python_json_string(r.run_id);
    size_t k = std::max(r.codes.size(), r.responses.size());
    for (size_t i = 0; i < k; ++i) {
        std::string n = std::to_string(i + 1);
        out += ", \"code" + n + "\": " + opt(i < r.codes.size() ? r.codes[i] : std::nullopt);
        out += ", \"response" + n + "\": " + opt(i < r.responses.size() ? r.responses[i] : std::nullopt);
    }
    for (size_t i = 0; i < r.repairs.size(); ++i) {
        if (r.repairs[i].empty()) continue;
        out += ", \"repairs" + std::to_string(i + 1) + "\": [";
        for (size_t t = 0; t < r.repairs[i].size(); ++t) {
            const RepairAttempt& a = r.repairs[i][t];
            if (t) out += ", ";
            out += "{\"turn\": " + std::to_string(a.turn);
            out += ", \"feedback\": " + python_json_string(a.feedback);
            out += ", \"response\": " + opt(a.response);
            out += ", \"code\": " + opt(a.code);
            out += "}";
        }
        out += "]";
    }
    return out + "}";
}

void write_results(const std::string& path, const std::vector<ResultRecord>& records) {
    std::string text;
    for (const ResultRecord& r : records) text += result_record_line(r) + "\n";
    atomic_write(path, text, "results file");
}

std::vector<ResultRecord> load_results(const std::string& path) {
    LineReader in(path, "results file");
    std::vector<ResultRecord> out;
    std::map<std::string, int64_t> first_line_of;  // id -> its line
    std::string text;
    int64_t line = 0;
    auto opt_string = [](const nlohmann::json& j, const std::string& key, const std::string& at) -> std::optional<std::string> {
        if (!j.contains(key) || j[key].is_null()) return std::nullopt;
        if (!j[key].is_string()) throw InputError(at + ": \"" + key + "\" must be a string or null");
        return j[key].get<std::string>();
    };
    while (in.next(text)) {
        line = in.line_no();
        if (!text.empty() && text.back() == '\r') text.pop_back();
        if (text.find_first_not_of(" \t") == std::string::npos) continue;
        std::string at = where(path, line);
        const nlohmann::json j = json_parse(text, at);
        if (!j.is_object()) throw InputError(at + ": a result must be a JSON object");
        if (!j.contains("id") || !(j["id"].is_number_integer() || j["id"].is_string()))
            throw InputError(at + ": result has no integer or string \"id\"");
        ResultRecord r;
        r.id = j["id"];
        r.task_name = j.contains("task_name") && j["task_name"].is_string() ? j["task_name"].get<std::string>() : "Unknown";
        r.prompt = j.contains("prompt") && j["prompt"].is_string() ? j["prompt"].get<std::string>() : "";
        r.run_id = j.contains("run_id") && j["run_id"].is_string() ? j["run_id"].get<std::string>() : "";
        if (!j.contains("code1") && j.contains("code")) {
            r.codes.push_back(opt_string(j, "code", at));
            r.responses.push_back(opt_string(j, "response", at));
        }
        for (int i = 1; j.contains("code" + std::to_string(i)); ++i) {
            r.codes.push_back(opt_string(j, "code" + std::to_string(i), at));
            r.responses.push_back(opt_string(j, "response" + std::to_string(i), at));
        }
        r.line = line;
        // One line per task: a second line for an id would count the task twice in every rate.
        const std::string id = r.id.is_string() ? r.id.get<std::string>() : r.id.dump();
        if (auto [it, fresh] = first_line_of.emplace(id, line); !fresh)
            throw InputError(at + ": id " + quote_bounded(id) + " again (first at line " + std::to_string(it->second) +
                             "); a results file holds one line per task, its samples as code1, code2, ...");
        out.push_back(std::move(r));
    }
    return out;
}

std::string new_run_id() {
    std::random_device rd;
    std::mt19937_64 g((static_cast<uint64_t>(rd()) << 32) ^ rd());
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08llx", static_cast<unsigned long long>(g() & 0xffffffffULL));
    return buf;
}

}  // namespace cuset::eval
