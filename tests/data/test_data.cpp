// The data pipeline: the JSONL loader (every accepted form, every malformed class with file:line,
// skip_invalid counts), program extraction, tagging of tokenized samples, and `cuset-train data
// check` / `data show` through the real binary, including the issue's planted-fault scenario with
// real nvcc compiles (a program that does not compile, one whose compile hangs past the timeout).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cuset/data/data.h"
#include "cuset/data/data_check.h"
#include "cuset/core/error.h"
#include "test_util.h"

using cuset::Conversation;
using cuset::DataLoadOptions;
using cuset::InputError;
using cuset::LoadReport;
using cuset::test::read_file;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using json = nlohmann::json;

namespace {

std::string jsonl(const std::string& name, const std::string& text) {
    std::string path = scratch_dir("data-" + name) + "/" + name + ".jsonl";
    write_file(path, text);
    return path;
}

// The InputError message of loading `line` as line 2 of a file (line 1 is a good sample).
std::string load_error(const std::string& name, const std::string& line) {
    std::string path = jsonl(name, R"({"prompt": "p", "response": "r"})" "\n" + line + "\n");
    try {
        cuset::data_load_jsonl(path, DataLoadOptions{});
    } catch (const InputError& e) {
        std::string what = e.what();
        EXPECT_EQ(what.rfind(path + ":2: ", 0), 0u) << "no FILE:LINE prefix: " << what;
        return what.substr(std::min(what.size(), path.size() + 4));
    }
    ADD_FAILURE() << "no InputError for " << line;
    return "";
}

}  // namespace

// ---------------------------------------------------------------- loader: accepted forms

TEST(DataLoad, PromptResponseWithSystemAndId) {
    std::string path = jsonl("pair", R"({"prompt": "Add two vectors.", "response": "Here:", "system": "Be brief.", "id": "vec-1", "family": "elementwise"})" "\n"
                                     R"({"prompt": "p2", "response": "r2", "id": 17})" "\n"
                                     R"({"prompt": "p3", "response": "r3", "system": ""})" "\n");
    LoadReport rep;
    auto convs = cuset::data_load_jsonl(path, DataLoadOptions{}, &rep);
    ASSERT_EQ(convs.size(), 3u);
    EXPECT_EQ(rep.lines, 3);
    EXPECT_EQ(rep.loaded, 3);
    EXPECT_EQ(rep.skipped, 0);
    EXPECT_EQ(convs[0].id, "vec-1");
    ASSERT_EQ(convs[0].messages.size(), 3u);
    EXPECT_EQ(convs[0].messages[0].role, "system");
    EXPECT_EQ(convs[0].messages[0].content, "Be brief.");
    EXPECT_EQ(convs[0].messages[1].role, "user");
    EXPECT_EQ(convs[0].messages[1].content, "Add two vectors.");
    EXPECT_EQ(convs[0].messages[2].role, "assistant");
    EXPECT_EQ(convs[0].messages[2].content, "Here:");
    EXPECT_EQ(convs[1].id, "17");
    EXPECT_EQ(convs[2].id, "pair.jsonl:3");  // no id: file name and line
    ASSERT_EQ(convs[2].messages.size(), 2u);  // an empty system field adds no message
}

TEST(DataLoad, MessagesForm) {
    std::string path = jsonl("messages",
                             R"({"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U1"}, )"
                             R"({"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2"}, )"
                             R"({"role": "assistant", "content": "A2"}]})" "\n");
    auto convs = cuset::data_load_jsonl(path, DataLoadOptions{});
    ASSERT_EQ(convs.size(), 1u);
    ASSERT_EQ(convs[0].messages.size(), 5u);
    const char* roles[] = {"system", "user", "assistant", "user", "assistant"};
    const char* texts[] = {"S", "U1", "A1", "U2", "A2"};
    for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(convs[0].messages[i].role, roles[i]);
        EXPECT_EQ(convs[0].messages[i].content, texts[i]);
    }
}

// A content given as a list of text parts (vision models' form): the texts joined, each part's
// length kept (Message::parts); a string content has none.
TEST(DataLoad, MessagesWithListContent) {
    std::string path = jsonl("parts",
                             R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "Look: "}, )"
                             R"({"type": "text", "text": "k<<<1, 32>>>", "extra": 1}]}, )"
                             R"({"role": "assistant", "content": [{"type": "text", "text": "One block."}]}]})" "\n"
                             R"({"messages": [{"role": "user", "content": "U"}, {"role": "assistant", "content": "A"}]})" "\n");
    auto convs = cuset::data_load_jsonl(path, DataLoadOptions{});
    ASSERT_EQ(convs.size(), 2u);
    ASSERT_EQ(convs[0].messages.size(), 2u);
    EXPECT_EQ(convs[0].messages[0].content, "Look: k<<<1, 32>>>");
    EXPECT_EQ(convs[0].messages[0].parts, (std::vector<size_t>{6, 12}));
    EXPECT_EQ(convs[0].messages[1].content, "One block.");
    EXPECT_EQ(convs[0].messages[1].parts, (std::vector<size_t>{10}));
    EXPECT_TRUE(convs[1].messages[0].parts.empty());
    EXPECT_TRUE(convs[1].messages[1].parts.empty());
}

TEST(DataLoad, TextFormBlankLinesAndCrlf) {
    std::string path = jsonl("text", "\n" R"({"text": "__global__ void k() {}"})" "\r\n   \n"
                                     R"({"prompt": "p", "response": "r"})");  // no final newline
    LoadReport rep;
    auto convs = cuset::data_load_jsonl(path, DataLoadOptions{}, &rep);
    ASSERT_EQ(convs.size(), 2u);
    EXPECT_EQ(rep.lines, 4);
    ASSERT_EQ(convs[0].messages.size(), 1u);
    EXPECT_EQ(convs[0].messages[0].role, cuset::kTextRole);
    EXPECT_EQ(convs[0].messages[0].content, "__global__ void k() {}");
    EXPECT_EQ(convs[0].id, "text.jsonl:2");
    EXPECT_EQ(convs[1].id, "text.jsonl:4");
}

TEST(DataLoad, JsonEscapesAndUnicodeKeptExactly) {
    std::string path = jsonl("unicode", R"({"prompt": "caf\u00e9 \ud83d\ude80 tab\tq\"", "response": "naïve ✓"})" "\n");
    auto convs = cuset::data_load_jsonl(path, DataLoadOptions{});
    EXPECT_EQ(convs[0].messages[0].content, "caf\xC3\xA9 \xF0\x9F\x9A\x80 tab\tq\"");
    EXPECT_EQ(convs[0].messages[1].content, "na\xC3\xAFve \xE2\x9C\x93");
}

// ---------------------------------------------------------------- loader: malformed lines

TEST(DataLoad, EveryMalformedClassNamesFileAndLine) {
    struct Case {
        const char* name;
        std::string line;
        const char* expect;
    };
    const Case cases[] = {
        {"badjson", R"({"prompt": "p", "response": )", "invalid JSON: "},
        {"trailing", R"({"prompt": "p", "response": "r"} x)", "invalid JSON: "},
        {"notobject", R"(["p", "r"])", "expected a JSON object, got an array"},
        {"utf8", "{\"prompt\": \"p\xC3\x28\", \"response\": \"r\"}", "invalid UTF-8 at byte 14 (0xC3)"},
        {"noresponse", R"({"prompt": "p"})", "missing 'response'"},
        {"noprompt", R"({"response": "r"})", "missing 'prompt'"},
        {"wrongtype", R"({"prompt": "p", "response": 3})", "'response' must be a string, got a number"},
        {"emptyresp", R"({"prompt": "p", "response": "  \n "})", "empty 'response'"},
        {"emptyprompt", R"({"prompt": "", "response": "r"})", "empty 'prompt'"},
        {"systype", R"({"prompt": "p", "response": "r", "system": ["x"]})", "'system' must be a string, got an array"},
        {"idtype", R"({"prompt": "p", "response": "r", "id": 1.5})", "'id' must be a string or an integer, got a number"},
        {"noform", R"({"question": "p", "answer": "r"})", "no 'prompt'/'response', 'messages' or 'text' field"},
        {"mixed", R"({"prompt": "p", "response": "r", "messages": []})", "mixes the 'prompt'/'response', 'messages' and 'text' forms"},
        {"msgtype", R"({"messages": {"role": "user"}})", "'messages' must be an array, got an object"},
        {"msgempty", R"({"messages": []})", "empty 'messages'"},
        {"msgnotobj", R"({"messages": ["hi"]})", "messages[0] must be an object, got a string"},
        {"norole", R"({"messages": [{"content": "c"}]})", "missing 'messages[0].role'"},
        {"badrole", R"({"messages": [{"role": "user", "content": "u"}, {"role": "gpt", "content": "a"}]})",
         "'messages[1].role' is 'gpt' (expected system, user or assistant)"},
        {"sysnotfirst", R"({"messages": [{"role": "user", "content": "u"}, {"role": "system", "content": "s"}, {"role": "assistant", "content": "a"}]})",
         "'messages[1]' is a system message; only the first message may be one"},
        {"nocontent", R"({"messages": [{"role": "user"}]})", "missing 'messages[0].content'"},
        {"contenttype", R"({"messages": [{"role": "user", "content": null}]})",
         "'messages[0].content' must be a string or a list of text parts, got null"},
        {"partimage", R"({"messages": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "u"}]}]})",
         "'messages[0].content[0]' is not a text part (type 'image'); only {\"type\": \"text\", \"text\": ...} parts are read"},
        {"partnotype", R"({"messages": [{"role": "user", "content": [{"text": "u"}]}]})",
         "'messages[0].content[0]' is not a text part (no \"type\": \"text\")"},
        {"partnotobj", R"({"messages": [{"role": "user", "content": ["u"]}]})", "'messages[0].content[0]' must be an object, got a string"},
        {"partnotext", R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})", "missing 'messages[0].content[0].text'"},
        {"parttexttype", R"({"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]})",
         "'messages[0].content[0].text' must be a string, got a number"},
        {"partsempty", R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": [{"type": "text", "text": " "}]}]})",
         "empty 'messages[1].content'"},
        {"emptycontent", R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": ""}]})",
         "empty 'messages[1].content'"},
        {"noassistant", R"({"messages": [{"role": "user", "content": "u"}]})", "no assistant message (nothing to train on)"},
        {"lastuser", R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "u2"}]})",
         "the last message is from 'user', not the assistant"},
        {"emptytext", R"({"text": ""})", "empty 'text'"},
        {"texttype", R"({"text": 5})", "'text' must be a string, got a number"},
        {"toolstype", R"({"prompt": "p", "response": "r", "tools": {"type": "function"}})",
         "'tools' must be an array of JSON schemas (objects), got an object"},
        {"toolitem", R"({"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}], "tools": [{"type": "function"}, "f"]})",
         "'tools[1]' must be an object, got a string"},
        {"docstype", R"({"prompt": "p", "response": "r", "documents": "d"})", "'documents' must be an array of objects, got a string"},
        {"docitem", R"({"prompt": "p", "response": "r", "documents": [[1]]})", "'documents[0]' must be an object, got an array"},
        {"texttools", R"({"text": "t", "tools": []})", "a 'text' record has no chat template to render 'tools'; use the 'messages' form"},
    };
    for (const Case& c : cases) {
        std::string reason = load_error(c.name, c.line);
        EXPECT_EQ(reason.rfind(c.expect, 0), 0u) << c.name << ": got \"" << reason << "\", want \"" << c.expect << "...\"";
    }
}

TEST(DataLoad, SkipInvalidCountsAndReports) {
    std::string path = jsonl("skip", R"({"prompt": "p1", "response": "r1"})" "\n"
                                     "not json\n"
                                     "\n"
                                     R"({"prompt": "p2", "response": ""})" "\n"
                                     R"({"prompt": "p3", "response": "r3"})" "\n");
    DataLoadOptions o;
    o.skip_invalid = true;
    LoadReport rep;
    auto convs = cuset::data_load_jsonl(path, o, &rep);
    ASSERT_EQ(convs.size(), 2u);
    EXPECT_EQ(convs[1].messages[0].content, "p3");
    EXPECT_EQ(rep.lines, 5);
    EXPECT_EQ(rep.loaded, 2);
    EXPECT_EQ(rep.skipped, 2);
    ASSERT_EQ(rep.problems.size(), 2u);
    EXPECT_EQ(rep.problems[0].rfind(path + ":2: invalid JSON", 0), 0u) << rep.problems[0];
    EXPECT_EQ(rep.problems[1], path + ":4: empty 'response'");
    // Without the switch the first bad line stops the load.
    EXPECT_THROW(cuset::data_load_jsonl(path, DataLoadOptions{}), InputError);
}

TEST(DataLoad, ReplaceInvalidUtf8) {
    std::string path = jsonl("replace", "{\"prompt\": \"a\xFF" "b\", \"response\": \"r\xE2\x9C\"}\n");
    EXPECT_THROW(cuset::data_load_jsonl(path, DataLoadOptions{}), InputError);
    DataLoadOptions o;
    o.replace_invalid_utf8 = true;
    auto convs = cuset::data_load_jsonl(path, o);
    ASSERT_EQ(convs.size(), 1u);
    EXPECT_EQ(convs[0].messages[0].content, "a\xEF\xBF\xBD" "b");
    // A truncated 3-byte sequence is one maximal invalid subpart: one U+FFFD (Python's "replace").
    EXPECT_EQ(convs[0].messages[1].content, "r\xEF\xBF\xBD");
}

TEST(DataLoad, NoSampleOrNoFileIsAnError) {
    DataLoadOptions o;
    o.skip_invalid = true;
    std::string path = jsonl("allbad", "x\ny\n");
    try {
        cuset::data_load_jsonl(path, o);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), path + ": no valid sample in 2 line(s)");
    }
    try {
        cuset::data_load_jsonl(path + ".missing", o);
        ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), "cannot open data file " + path + ".missing");
    }
}

// ---------------------------------------------------------------- program extraction

TEST(DataExtract, PicksTheCudaBlockWithMain) {
    std::string program;
    std::string r = "Explanation.\n```bash\nnvcc a.cu\n```\n```cuda\n__global__ void k() {}\n```\n"
                    "And the program:\n```cuda\nint main() { return 0; }\n```\n";
    ASSERT_TRUE(cuset::data_extract_program(r, &program));
    EXPECT_EQ(program, "int main() { return 0; }\n");
    // No block with main: the first cuda block.
    ASSERT_TRUE(cuset::data_extract_program("```cu\n__global__ void k() {}\n```", &program));
    EXPECT_EQ(program, "__global__ void k() {}\n");
    // Untagged or C++ blocks count only when they hold a kernel; an unclosed block runs to the end.
    ASSERT_TRUE(cuset::data_extract_program("```cpp\nint x;\n```\n~~~\n__global__ void g() {}\nint main (void) {", &program));
    EXPECT_EQ(program, "__global__ void g() {}\nint main (void) {\n");
    EXPECT_FALSE(cuset::data_extract_program("```python\nprint(1)\n```\nno code here", &program));
    EXPECT_FALSE(cuset::data_extract_program("__global__ void k() {} int main() {}", &program));
}

// ---------------------------------------------------------------- data check (real binary)

namespace {

std::string sample(const std::string& prompt, const std::string& program, const std::string& id) {
    json j = {{"id", id}, {"prompt", prompt}, {"response", "The kernel and a checking main():\n\n```cuda\n" + program + "```\n"}};
    return j.dump();
}

// Small complete programs: a kernel, its launch, a CPU check, exit code.
const char* kScale = R"(#include <cstdio>
__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
int main() {
    const int n = 1000;
    float h[n];
    for (int i = 0; i < n; ++i) h[i] = float(i);
    float* d = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    int block = 128, grid = (n + block - 1) / block;
    scale<<<grid, block>>>(d, 2.0f, n);
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d);
    for (int i = 0; i < n; ++i)
        if (h[i] != 2.0f * i) { std::printf("mismatch at %d\n", i); return 1; }
    return 0;
}
)";

const char* kFill = R"(#include <cstdio>
__global__ void fill(int* x, int v, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = v;
}
int main() {
    const int n = 4096;
    int* d = nullptr;
    cudaMalloc(&d, n * sizeof(int));
    fill<<<8, 256>>>(d, 7, n);
    static int h[n];
    cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    for (int i = 0; i < n; ++i)
        if (h[i] != 7) { std::printf("mismatch at %d\n", i); return 1; }
    return 0;
}
)";

// Does not compile: `scale_factor` is not declared.
const char* kBroken = R"(__global__ void twice(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= scale_factor;
}
int main() { float* d; cudaMalloc(&d, 4); twice<<<1, 1>>>(d, 1); return 0; }
)";

// The file includes itself twice per nesting level, 2^40 times in all: the preprocessor runs
// far past any timeout, deterministically, in constant memory.
const char* kHang = R"(#if __INCLUDE_LEVEL__ < 40
#include __FILE__
#include __FILE__
#endif
#if __INCLUDE_LEVEL__ == 0
__global__ void k(int* out) { *out = 1; }
int main() { int* d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); return 0; }
#endif
)";

json by_line(const json& report, int line) {
    for (const json& r : report["per_sample"])
        if (r["line"] == line) return r;
    return nullptr;
}

}  // namespace

// The issue's acceptance scenario: each planted fault is reported on its own line with its
// reason, and the filtered file holds exactly the good samples, byte for byte.
TEST(DataCheck, PlantedFaultsCompileAndTimeout) {
    std::string dir = scratch_dir("data-check-faults");
    std::string good1 = sample("Scale a float array by a constant.", kScale, "good-scale");
    std::string good2 = sample("Fill an int array with a value using a grid-stride loop.", kFill, "good-fill");
    json ws_dup = json::parse(good1);
    ws_dup["prompt"] = "Scale  a float array\tby a constant. ";
    ws_dup["id"] = "ws-dup";
    std::vector<std::string> lines = {
        good1,                                                                          // 1 good
        R"({"prompt": "Write a kernel", "response": "```cuda\n__global__)",             // 2 bad JSON
        R"({"id": "empty", "prompt": "Write a reduction kernel.", "response": "  "})",  // 3 empty response
        good1,                                                                          // 4 exact duplicate
        ws_dup.dump(),                                                                  // 5 whitespace duplicate
        sample("Double an array.", kBroken, "broken"),                                  // 6 does not compile
        sample("Write a kernel that sets one value.", kHang, "hang"),                   // 7 compile hangs
        "",                                                                             // 8 blank: ignored
        good2,                                                                          // 9 good
        "{\"prompt\": \"p\xFF\", \"response\": \"r\"}",                                 // 10 invalid UTF-8
        R"({"id": "prose", "prompt": "Explain warps.", "response": "A warp is 32 threads."})",  // 11 nothing to compile
    };
    std::string input_text;
    for (const std::string& l : lines) input_text += l + "\n";
    std::string input = dir + "/faults.jsonl";
    write_file(input, input_text);

    // TMPDIR: the per-sample build folders go under this test's scratch folder, where the
    // process check below can find them.
    auto r = cuset::test::run_command("TMPDIR='" + dir + "' '" CUSET_BINARY "' data check '" + input +
                                      "' --compile --jobs 2 --timeout 20 --progress never --out '" + dir +
                                      "/kept.jsonl' --report '" + dir + "/report.json'");
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // samples were rejected
    EXPECT_EQ(read_file(input), input_text) << "the input was modified";
    EXPECT_EQ(read_file(dir + "/kept.jsonl"), good1 + "\n" + good2 + "\n");

    json rep = json::parse(read_file(dir + "/report.json"));
    EXPECT_EQ(rep["lines"], 11);
    EXPECT_EQ(rep["samples"], 10);
    EXPECT_EQ(rep["kept"], 2);
    EXPECT_EQ(rep["rejected"], 8);
    const std::pair<int, const char*> expected[] = {
        {2, "invalid_json"}, {3, "empty_field"}, {4, "duplicate"}, {5, "whitespace_duplicate"},
        {6, "compile_error"}, {7, "compile_timeout"}, {10, "invalid_utf8"}, {11, "no_program"}};
    for (auto [line, code] : expected) {
        json row = by_line(rep, line);
        ASSERT_FALSE(row.is_null()) << "line " << line;
        EXPECT_EQ(row["status"], "rejected") << row.dump();
        ASSERT_EQ(row["reasons"].size(), 1u) << row.dump();
        EXPECT_EQ(row["reasons"][0]["code"], code) << row.dump();
        EXPECT_NE(r.out.find("line " + std::to_string(line) + " "), std::string::npos) << r.out;
    }
    for (int line : {1, 9}) {
        json row = by_line(rep, line);
        EXPECT_EQ(row["status"], "ok") << row.dump();
        EXPECT_EQ(row["compile"]["status"], "pass") << row.dump();
        EXPECT_EQ(row["tags"]["kernel"], true);
        EXPECT_EQ(row["tags"]["launch"], true);
    }
    EXPECT_EQ(by_line(rep, 4)["reasons"][0]["message"], "duplicate of line 1");
    EXPECT_EQ(by_line(rep, 5)["reasons"][0]["message"], "same as line 1 up to whitespace");
    EXPECT_EQ(by_line(rep, 3)["reasons"][0]["message"], "empty 'response'");
    // The compiler's own first error line, naming the undeclared identifier.
    std::string err = by_line(rep, 6)["compile"]["message"];
    EXPECT_NE(err.find("program.cu(3): error"), std::string::npos) << err;
    EXPECT_NE(err.find("scale_factor"), std::string::npos) << err;
    EXPECT_EQ(by_line(rep, 7)["compile"]["status"], "timeout");
    EXPECT_EQ(rep["compile"]["passed"], 2);
    EXPECT_EQ(rep["compile"]["failed"], 1);
    EXPECT_EQ(rep["compile"]["timed_out"], 1);
    EXPECT_EQ(rep["warned"], 0);
    EXPECT_EQ(rep["tagger"]["no_kernel"], 0);  // the prose sample was rejected: no count
    EXPECT_EQ(rep["warnings_by_code"].size(), 0u);
    EXPECT_NE(r.out.find("2 kept (0 with warnings), 8 rejected"), std::string::npos) << r.out;
    // The timed-out compile's process group is gone (no preprocessor left spinning), and so is
    // the build folder.
    auto ps = cuset::test::run_command("ps -eo args | grep -c '[d]ata-check-faults/cuset-check-' || true");
    EXPECT_EQ(ps.out, "0\n") << "leftover compiler processes";
    for (const auto& e : std::filesystem::directory_iterator(dir))
        EXPECT_EQ(e.path().filename().string().rfind("cuset-check-", 0), std::string::npos) << e.path();
}

TEST(DataCheck, TaggerCoverageWarnsButKeeps) {
    std::string dir = scratch_dir("data-check-tags");
    std::string input = dir + "/in.jsonl";
    std::string no_launch = R"({"prompt": "p1", "response": "```cuda\n__global__ void k(float* x) { x[threadIdx.x] = 0; }\n```"})";
    std::string neither = R"({"prompt": "p2", "response": "Use cudaMemcpy for that."})";
    write_file(input, no_launch + "\n" + neither + "\n");
    auto r = run_cuset("data check '" + input + "' --progress never --report '" + dir + "/rep.json' --out '" + dir + "/out.jsonl'");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    json rep = json::parse(read_file(dir + "/rep.json"));
    EXPECT_EQ(rep["kept"], 2);
    EXPECT_EQ(rep["warned"], 2);
    EXPECT_EQ(rep["tagger"]["no_kernel"], 1);
    EXPECT_EQ(rep["tagger"]["no_launch"], 2);
    EXPECT_EQ(by_line(rep, 1)["warnings"][0]["code"], "no_launch");
    EXPECT_EQ(by_line(rep, 2)["warnings"].size(), 2u);
    EXPECT_EQ(read_file(dir + "/out.jsonl"), no_launch + "\n" + neither + "\n");
    EXPECT_NE(r.out.find("line 2 warning: no_kernel"), std::string::npos) << r.out;
}

TEST(DataCheck, RefusesToOverwriteItsInput) {
    std::string dir = scratch_dir("data-check-self");
    std::string input = dir + "/in.jsonl";
    std::string text = R"({"prompt": "p", "response": "r"})" "\n";
    write_file(input, text);
    auto r = run_cuset("data check '" + input + "' --out '" + dir + "/./in.jsonl'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("never modifies its input"), std::string::npos) << r.err;
    r = run_cuset("data check '" + input + "' --report '" + input + "'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(read_file(input), text);
}

TEST(DataCheck, MissingNvccAndMissingGpuAreClear) {
    std::string dir = scratch_dir("data-check-tools");
    std::string input = dir + "/in.jsonl";
    write_file(input, R"({"prompt": "Explain warps.", "response": "A warp is 32 threads."})" "\n");
    auto r = run_cuset("data check '" + input + "' --compile --nvcc /nonexistent/nvcc");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("nvcc '/nonexistent/nvcc' not found"), std::string::npos) << r.err;
    // Without a GPU (forced here, so a GPU machine sees the same): a notice, and only compiles.
    // The sample has no program, so nothing is compiled.
    r = cuset::test::run_command("CUSET_ASSUME_GPU=0 '" CUSET_BINARY "' data check '" + input + "' --run --progress never");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.out.find("notice: --run skipped: no GPU found (CUSET_ASSUME_GPU=0); programs are only compiled"),
              std::string::npos) << r.out;
}

TEST(DataCheck, MissingInputIsBadInput) {
    auto r = run_cuset("data check /nonexistent/x.jsonl");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("cannot open data file /nonexistent/x.jsonl"), std::string::npos) << r.err;
    r = run_cuset("data");
    EXPECT_EQ(r.exit_code, 2) << r.err;
}

// ---------------------------------------------------------------- tokenized samples (golden tokenizer)

namespace {

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/data";

Conversation golden_conversation(json* ref = nullptr) {
    json r = json::parse(read_file(kGolden + "/sample.json"));
    Conversation c;
    c.id = "golden";
    for (const json& m : r["messages"]) c.messages.push_back({m["role"], m["content"]});
    if (ref) *ref = r;
    return c;
}

cuset::ChatFormatOptions chatml() {
    cuset::ChatFormatOptions o;
    o.format = "chatml";
    return o;
}

// Index of the token whose span in message `m` covers byte `at`, or -1.
int token_at(const cuset::FormattedSample& f, int m, size_t at) {
    for (size_t t = 0; t < f.ids.size(); ++t)
        if (f.message[t] == m && f.spans[t].first <= int(at) && int(at) < f.spans[t].second) return int(t);
    return -1;
}

// A config file for the binary: the golden tokenizer, chatml, `data` as the train split.
std::string golden_config(const std::string& dir, const std::string& data) {
    std::string path = dir + "/config.yaml";
    write_file(path, "model:\n  tokenizer: \"" + kGolden + "/tokenizer\"\ndata:\n  train: \"" + data +
                         "\"\n  eval: \"\"\n  chat_format: chatml\n  max_seq_len: 200\n");
    return path;
}

}  // namespace

TEST(DataTokenize, ReferenceIdsAndTagsOnResponseTokensOnly) {
    json ref;
    Conversation conv = golden_conversation(&ref);
    auto tok = cuset::tokenizer_load(kGolden + "/tokenizer");
    cuset::ChatFormatter fmt(*tok, chatml(), kGolden + "/tokenizer");
    cuset::TokenizedSample s = cuset::data_tokenize(conv, fmt, cuset::TaggerOptions{});
    // The ids are the reference's (transformers apply_chat_template with the same tokenizer).
    EXPECT_EQ(s.ids, ref["ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(s.id, "golden");
    cuset::FormattedSample f = fmt.format(conv);
    const size_t T = s.ids.size();
    ASSERT_EQ(s.roles.size(), T);
    ASSERT_EQ(s.trainable.size(), T);
    ASSERT_EQ(s.tag_bits.size(), T);

    // Each response token carries the OR of the tagger spans its byte span overlaps (brute
    // force here); every other token carries nothing, although the prompt names a kernel too.
    const std::string& response = conv.messages[2].content;
    std::vector<cuset::TagSpan> spans = cuset::tag_text(response);
    int n_sensitive = 0;
    for (size_t t = 0; t < T; ++t) {
        EXPECT_EQ(s.roles[t], static_cast<uint8_t>(f.roles[t])) << t;
        EXPECT_EQ(s.trainable[t], f.trainable[t]) << t;
        uint32_t want = 0;
        if (f.roles[t] == cuset::Role::kResponse && f.message[t] == 2)
            for (const cuset::TagSpan& sp : spans)
                if (int(sp.begin) < f.spans[t].second && f.spans[t].first < int(sp.end)) want |= sp.bits;
        EXPECT_EQ(s.tag_bits[t], want) << "token " << t;
        n_sensitive += s.tag_bits[t] != 0;
    }
    int kernel_tok = token_at(f, 2, response.find("threadIdx"));
    int launch_tok = token_at(f, 2, response.find("<<<"));
    int prompt_tok = token_at(f, 1, conv.messages[1].content.find("__global__"));
    ASSERT_GE(kernel_tok, 0);
    ASSERT_GE(launch_tok, 0);
    ASSERT_GE(prompt_tok, 0);
    EXPECT_TRUE(s.tag_bits[kernel_tok] & cuset::kTagKernel);
    EXPECT_TRUE(s.tag_bits[kernel_tok] & cuset::kTagIndexing);
    EXPECT_TRUE(s.tag_bits[launch_tok] & cuset::kTagLaunch);
    EXPECT_EQ(s.tag_bits[prompt_tok], 0u);
    EXPECT_GT(n_sensitive, 20);
    EXPECT_LT(n_sensitive, int(T));
}

TEST(DataTokenize, PlainTextIsAllTrainableAndTagged) {
    auto tok = cuset::tokenizer_load(kGolden + "/tokenizer");
    cuset::ChatFormatter fmt(*tok, chatml(), kGolden + "/tokenizer");
    Conversation c;
    c.id = "raw";
    c.messages.push_back({cuset::kTextRole, "A kernel:\n__global__ void k(int* x) { x[threadIdx.x] = 1; }\n"});
    cuset::TokenizedSample s = cuset::data_tokenize(c, fmt, cuset::TaggerOptions{});
    cuset::FormattedSample f = fmt.format(c);
    ASSERT_FALSE(s.ids.empty());
    int n_kernel = 0;
    for (size_t t = 0; t < s.ids.size(); ++t) {
        EXPECT_EQ(s.trainable[t], 1) << t;
        if (f.message[t] == 0) {
            EXPECT_EQ(s.roles[t], static_cast<uint8_t>(cuset::Role::kResponse)) << t;
            n_kernel += (s.tag_bits[t] & cuset::kTagKernel) != 0;
        } else {
            EXPECT_EQ(s.tag_bits[t], 0u) << t;  // an appended EOS has no source text
        }
    }
    int in_kernel = token_at(f, 0, c.messages[0].content.find("threadIdx"));
    ASSERT_GE(in_kernel, 0);
    EXPECT_TRUE(s.tag_bits[in_kernel] & cuset::kTagKernel);
    EXPECT_EQ(s.tag_bits[token_at(f, 0, 0)], 0u);  // "A kernel:" is prose
    EXPECT_GT(n_kernel, 5);
}

TEST(DataShow, MarksRolesTrainableAndSensitiveWithCounts) {
    std::string dir = scratch_dir("data-show");
    Conversation conv = golden_conversation();
    json rec = {{"messages", json::array()}, {"id", "golden"}};
    for (const auto& m : conv.messages) rec["messages"].push_back({{"role", m.role}, {"content", m.content}});
    std::string data = dir + "/train.jsonl";
    write_file(data, R"({"prompt": "first", "response": "sample"})" "\n" + rec.dump() + "\n");
    std::string cfg = golden_config(dir, data);

    auto r = run_cuset("data show --config '" + cfg + "' --index 1 --color never --tokens");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto tok = cuset::tokenizer_load(kGolden + "/tokenizer");
    cuset::ChatFormatter fmt(*tok, chatml(), kGolden + "/tokenizer");
    cuset::TokenizedSample s = cuset::data_tokenize(conv, fmt, cuset::TaggerOptions{});
    int64_t by_role[4] = {0, 0, 0, 0}, train_by_role[4] = {0, 0, 0, 0}, n_train = 0, n_sens = 0;
    for (size_t t = 0; t < s.ids.size(); ++t) {
        ++by_role[s.roles[t]];
        train_by_role[s.roles[t]] += s.trainable[t];
        n_train += s.trainable[t];
        n_sens += s.tag_bits[t] != 0;
    }
    auto counts = [](const int64_t* c) {
        return "template " + std::to_string(c[0]) + ", system " + std::to_string(c[1]) + ", prompt " +
               std::to_string(c[2]) + ", response " + std::to_string(c[3]);
    };
    EXPECT_NE(r.out.find("sample 1 of " + data + " (id golden) | chat format chatml"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\ntokens " + std::to_string(s.ids.size()) + ": " + counts(by_role) + "\n"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\ntrainable " + std::to_string(n_train) + ": " + counts(train_by_role) + "\n"),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nsensitive " + std::to_string(n_sens) + " (kernel "), std::string::npos) << r.out;
    EXPECT_EQ(train_by_role[1] + train_by_role[2], 0);  // the defence: prompt and system never trained
    EXPECT_GT(train_by_role[3], 0);
    // The text view: a marker opens each run; the prompt's text follows a prompt marker.
    EXPECT_NE(r.out.find("[[template]]<|im_start|>"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[[system]]You write correct CUDA."), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[[response T S]]"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("[[prompt T"), std::string::npos) << r.out;
    // The sample is longer than max_seq_len 200: the cut is shown where the trainer makes it.
    EXPECT_NE(r.out.find("[[cut: the trainer sees only the first data.max_seq_len = 200 tokens]]"),
              std::string::npos) << r.out;
    // --tokens: a header and one line per token.
    size_t table = r.out.find("index       id role");
    ASSERT_NE(table, std::string::npos) << r.out;
    EXPECT_EQ(cuset::test::count_of(r.out.substr(table), "\n"), int(s.ids.size()) + 1);

    r = run_cuset("data show --config '" + cfg + "' --index 2");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--index 2 is out of range: " + data + " has 2 samples (0..1)"), std::string::npos) << r.err;
}

TEST(DataCheck, TokenStatisticsWithTheConfiguredTokenizer) {
    std::string dir = scratch_dir("data-check-tokens");
    Conversation conv = golden_conversation();
    json ref = json::parse(read_file(kGolden + "/sample.json"));
    json rec = {{"messages", ref["messages"]}};
    std::string data = dir + "/in.jsonl";
    write_file(data, rec.dump() + "\n" + R"({"prompt": "Say hi.", "response": "hi"})" "\n");
    auto r = run_cuset("data check '" + data + "' --config '" + golden_config(dir, data) + "' --report '" + dir + "/rep.json'");
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    json rep = json::parse(read_file(dir + "/rep.json"));
    const int64_t n = static_cast<int64_t>(ref["ids"].size());
    EXPECT_EQ(rep["tokens"]["chat_format"], "chatml");
    EXPECT_EQ(rep["tokens"]["total"]["max"], n);
    EXPECT_EQ(rep["per_sample"][0]["tokens"]["total"], n);
    EXPECT_EQ(rep["tokens"]["over_max_seq_len"], 1);  // 285 > 200
    EXPECT_EQ(rep["per_sample"][0]["warnings"][0]["code"], "too_long");
    EXPECT_EQ(rep["per_sample"][1]["status"], "warning");  // "hi": no kernel, no launch
}

// ---------------------------------------------------------------- the bundled data set

namespace {

// `data check` over one bundled split: every sample kept, the tagger finding a kernel body and
// a launch in each, and with `compile` every program built by nvcc.
void check_bundled(const std::string& split, bool compile) {
    std::string dir = scratch_dir("data-bundled-" + split + (compile ? "-nvcc" : ""));
    std::string input = std::string(CUSET_SOURCE_DIR) + "/data/cuda-sft/" + split + ".jsonl";
    ASSERT_TRUE(std::filesystem::exists(input)) << input;
    auto r = run_cuset("data check '" + input + "' --progress never --jobs 2 --timeout 300 --report '" + dir +
                       "/report.json'" + (compile ? " --compile" : ""));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    json rep = json::parse(read_file(dir + "/report.json"));
    EXPECT_GT(rep["samples"].get<int>(), 0);
    EXPECT_EQ(rep["kept"], rep["samples"]) << r.out;
    // (A too_long warning would depend on the default tokenizer present, so it is not checked.)
    EXPECT_EQ(rep["tagger"]["no_kernel"], 0) << r.out;
    EXPECT_EQ(rep["tagger"]["no_launch"], 0) << r.out;
    if (compile) {
        EXPECT_EQ(rep["compile"]["passed"], rep["samples"]) << r.out;
    }
}

}  // namespace

TEST(DataBundled, TrainSamplesValidAndTagged) { check_bundled("train", /*compile=*/false); }
TEST(DataBundled, EvalSamplesValidAndTagged) { check_bundled("eval", /*compile=*/false); }
// Every bundled program compiles and links with nvcc (the slowest test here: one nvcc run per
// sample, two at a time).
TEST(DataBundled, TrainProgramsCompile) { check_bundled("train", /*compile=*/true); }
TEST(DataBundled, EvalProgramsCompile) { check_bundled("eval", /*compile=*/true); }

// The run step's verdicts. CUSET_ASSUME_GPU=1 makes the check run the programs on this GPU-less
// machine; these programs decide their exit code without touching the device.
TEST(DataCheck, RunUsesTheExitCodeAndTheTimeout) {
    std::string dir = scratch_dir("data-check-run");
    const char* pass = "#include <cstdio>\n__global__ void k(int* x) { x[threadIdx.x] = 1; }\n"
                       "int main() { if (false) k<<<1, 32>>>(nullptr); std::printf(\"ok\\n\"); return 0; }\n";
    const char* fail = "#include <cstdio>\n__global__ void k(int* x) { x[threadIdx.x] = 1; }\n"
                       "int main() { if (false) k<<<1, 32>>>(nullptr); std::printf(\"mismatch at 3: 1 != 2\\n\"); return 1; }\n";
    const char* hang = "#include <unistd.h>\n__global__ void k(int* x) { x[threadIdx.x] = 1; }\n"
                       "int main() { if (false) k<<<1, 32>>>(nullptr); sleep(1000); return 0; }\n";
    std::string input = dir + "/in.jsonl";
    write_file(input, sample("a", pass, "pass") + "\n" + sample("b", fail, "fail") + "\n" + sample("c", hang, "hang") + "\n");
    auto r = cuset::test::run_command("CUSET_ASSUME_GPU=1 '" CUSET_BINARY "' data check '" + input +
                                      "' --run --jobs 3 --timeout 15 --progress never --out '" + dir +
                                      "/out.jsonl' --report '" + dir + "/rep.json'");
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    json rep = json::parse(read_file(dir + "/rep.json"));
    EXPECT_EQ(rep["run"]["gpu"], true);
    EXPECT_EQ(by_line(rep, 1)["run"]["status"], "pass") << rep.dump(1);
    EXPECT_EQ(by_line(rep, 2)["run"]["status"], "fail");
    EXPECT_EQ(by_line(rep, 2)["reasons"][0]["code"], "run_failed");
    EXPECT_EQ(by_line(rep, 2)["reasons"][0]["message"], "exit status 1: mismatch at 3: 1 != 2");
    EXPECT_EQ(by_line(rep, 3)["run"]["status"], "timeout");
    EXPECT_EQ(by_line(rep, 3)["reasons"][0]["code"], "run_timeout");
    EXPECT_EQ(read_file(dir + "/out.jsonl"), sample("a", pass, "pass") + "\n");
}

// A record with "tools" (tests/golden/data.py): the tools reach Qwen2.5's real template in their
// key order, so ids equal transformers' apply_chat_template(messages, tools=...); the rendered
// tools are template tokens, not trained; the trainable tokens are exactly those over the
// assistant content and its <|im_end|>. The same record as a generation prompt keeps its tools.
TEST(DataTokenize, ToolsAreRenderedIntoThePromptAndNotTrained) {
    const json ref = json::parse(read_file(kGolden + "/tools_sample.json"));
    const std::string line = ref["line"].get<std::string>();
    const std::string path = jsonl("tools", R"({"prompt": "p", "response": "r"})" "\n" + line + "\n");
    std::vector<Conversation> convs = cuset::data_load_jsonl(path, DataLoadOptions{});
    ASSERT_EQ(convs.size(), 2u);
    EXPECT_TRUE(convs[0].tools.is_null());
    const Conversation& conv = convs[1];
    EXPECT_EQ(conv.id, "tools-1");
    EXPECT_EQ(conv.tools, nlohmann::ordered_json::parse(line)["tools"]);  // ordered_json: the key order too
    EXPECT_EQ(conv.tools[0]["function"].begin().key(), "name");
    EXPECT_TRUE(conv.documents.is_null());

    auto tok = cuset::tokenizer_load(kGolden + "/tools");
    cuset::ChatFormatOptions o;
    o.format = "template";
    cuset::ChatFormatter fmt(*tok, o, kGolden + "/tools");
    cuset::TokenizedSample s = cuset::data_tokenize(conv, fmt, cuset::TaggerOptions{});
    EXPECT_EQ(s.ids, ref["ids"].get<std::vector<int32_t>>());
    const auto roles = ref["roles"].get<std::vector<std::string>>();
    const auto trainable = ref["trainable"].get<std::vector<int>>();
    ASSERT_EQ(s.ids.size(), roles.size());
    size_t template_before_prompt = 0;
    bool seen_prompt = false;
    for (size_t t = 0; t < roles.size(); ++t) {
        EXPECT_EQ(cuset::role_name(static_cast<cuset::Role>(s.roles[t])), roles[t]) << "token " << t;
        EXPECT_EQ(s.trainable[t], trainable[t]) << "token " << t << " '" << tok->id_to_token(s.ids[t]) << "'";
        seen_prompt = seen_prompt || roles[t] == "prompt";
        if (!seen_prompt) template_before_prompt += roles[t] == "template" && !s.trainable[t];
    }
    EXPECT_GT(template_before_prompt, 100u);  // the system turn with the tools' schemas

    cuset::Record rec;
    cuset::RecordProblem why;
    ASSERT_TRUE(cuset::data_parse_record(line, {cuset::RecordUse::kPrompt, false}, &rec, &why)) << why.message;
    EXPECT_EQ(rec.conversation.tools, conv.tools);
    ASSERT_TRUE(rec.reference.has_value());
    EXPECT_EQ(*rec.reference, conv.messages[1].content);
    EXPECT_EQ(fmt.generation_prompt(rec.conversation), ref["prompt_ids"].get<std::vector<int32_t>>());
}
