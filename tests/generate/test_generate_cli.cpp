// `cuset-train generate` through the real binary on demo-like settings (data/tiny-coder, chatml,
// CPU): one JSON line per sample with its fields, the reference copied, the same output from the
// same seed whatever the batch size, model.lora.path's adapter generating as the merged model,
// bad prompts named by line (exit 3) or skipped with the flag.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>

#include "cuset/model/lora.h"
#include "cuset/model/model.h"
#include "test_util.h"

using cuset::test::read_file;
using cuset::test::run_cuset;
using cuset::test::scratch_dir;
using cuset::test::write_file;

namespace {

// data/tiny-coder on the CPU with chatml, 16 new tokens, batches of 3.
std::string gen_config() {
    return cuset::test::yaml_of({{"model.path", "data/tiny-coder"},
                                 {"model.dtype", "float32"},
                                 {"data.chat_format", "chatml"},
                                 {"train.device", "cpu"},
                                 {"train.threads", "2"},
                                 {"log.progress", "never"},
                                 {"generate.max_new_tokens", "16"},
                                 {"generate.batch_size", "3"}});
}

const char* kPrompts =
    R"({"id": "a", "prompt": "Write a CUDA kernel that adds two float arrays.", "response": "__global__ void add() {}"})" "\n"
    R"({"id": "b", "system": "You are a CUDA expert.", "prompt": "Explain warp divergence in one sentence."})" "\n"
    "\n"
    R"({"id": "c", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Write a reduction kernel."}, {"role": "assistant", "content": "ref-c"}]})" "\n";

std::vector<nlohmann::json> read_lines(const std::string& path) {
    std::vector<nlohmann::json> out;
    std::istringstream in(read_file(path));
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
}

}  // namespace

TEST(GenerateCli, WritesOneLinePerSampleReproducibly) {
    const std::string dir = scratch_dir("generate-cli");
    write_file(dir + "/gen.yaml", gen_config());
    write_file(dir + "/prompts.jsonl", kPrompts);
    const std::string common = "generate --config " + dir + "/gen.yaml --prompts " + dir +
                               "/prompts.jsonl --n 2 --temperature 0.8 --top-p 0.95 --seed 3";
    auto r = run_cuset(common + " --out " + dir + "/out.jsonl");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto lines = read_lines(dir + "/out.jsonl");
    ASSERT_EQ(lines.size(), 6u);
    const char* ids[] = {"a", "a", "b", "b", "c", "c"};
    for (size_t i = 0; i < lines.size(); ++i) {
        const auto& j = lines[i];
        EXPECT_EQ(j["id"], ids[i]);
        EXPECT_EQ(j["sample"], static_cast<int>(i % 2));
        EXPECT_TRUE(j["response"].is_string());
        EXPECT_GT(j["prompt_tokens"].get<int>(), 10);
        EXPECT_GE(j["generated_tokens"].get<int>(), 1);
        EXPECT_LE(j["generated_tokens"].get<int>(), 16);
        const std::string why = j["finish_reason"];
        EXPECT_TRUE(why == "eos" || why == "stop" || why == "length") << why;
        if (why == "length") {
            EXPECT_EQ(j["generated_tokens"].get<int>(), 16);
        }
        EXPECT_GE(j["seconds"].get<double>(), 0.0);
    }
    EXPECT_EQ(lines[0]["reference"], "__global__ void add() {}");
    EXPECT_EQ(lines[4]["reference"], "ref-c");
    EXPECT_FALSE(lines[2].contains("reference"));
    for (const auto& e : std::filesystem::directory_iterator(dir))
        EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();

    // Same seed, batches of one, greedy batches of two: the sampled texts are the same.
    auto r1 = run_cuset(common + " --set generate.batch_size=1 --out " + dir + "/out1.jsonl");
    ASSERT_EQ(r1.exit_code, 0) << r1.err;
    auto lines1 = read_lines(dir + "/out1.jsonl");
    ASSERT_EQ(lines1.size(), lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
        EXPECT_EQ(lines1[i]["response"], lines[i]["response"]) << i;
        EXPECT_EQ(lines1[i]["finish_reason"], lines[i]["finish_reason"]) << i;
    }

    // Greedy: every sample of a prompt is the same.
    auto g = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + dir + "/prompts.jsonl --n 2 --out " +
                       dir + "/greedy.jsonl --max-new-tokens 5");
    ASSERT_EQ(g.exit_code, 0) << g.err;
    auto gl = read_lines(dir + "/greedy.jsonl");
    ASSERT_EQ(gl.size(), 6u);
    for (size_t i = 0; i < gl.size(); i += 2) {
        EXPECT_EQ(gl[i]["response"], gl[i + 1]["response"]);
        EXPECT_LE(gl[i]["generated_tokens"].get<int>(), 5);
    }
}

// model.lora.path: the base with the adapter attached generates what the merged model (export
// --merge, fp32) does, greedy, and not what the base alone does. The two differ only by fp32
// reassociation (~1e-6 on the logits), so a token could differ only at a near-tie of the two best
// logits; the run is deterministic and has none.
TEST(GenerateCli, LoraPathGeneratesAsTheMergedModel) {
    const std::string dir = scratch_dir("generate-cli-lora");
    const std::string base = std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder";
    const std::string adapter = dir + "/adapter";
    std::filesystem::create_directories(adapter);
    {
        cuset::Decoder m = cuset::model_load(base, at::kFloat, at::kCPU);
        cuset::LoraOptions o;
        o.r = 4;
        o.alpha = 8.0;
        o.dropout = 0.3;  // never used in inference: a dropping generate would not match the merged model
        at::Generator gen = at::detail::createCPUGenerator(/*seed_in=*/5);
        cuset::lora_attach(m, o, gen);
        at::NoGradGuard no_grad;
        for (auto& [name, a] : cuset::lora_adapters(m)) a->B.normal_(0.0, 0.2, gen);  // B = 0 is the base
        cuset::lora_save(m, o, adapter, base);
    }
    ASSERT_EQ(run_cuset("export --merge --model " + adapter + " --out " + dir + "/merged --dtype float32").exit_code, 0);
    write_file(dir + "/gen.yaml", gen_config());
    write_file(dir + "/prompts.jsonl", kPrompts);
    auto generate = [&](const std::string& extra, const std::string& out) {
        auto r = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + dir + "/prompts.jsonl --out " + dir +
                           "/" + out + " " + extra);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return read_lines(dir + "/" + out);
    };
    const auto with_adapter = generate("--set model.lora.path=" + adapter, "lora.jsonl");
    const auto merged = generate("--model " + dir + "/merged", "merged.jsonl");
    const auto plain = generate("", "base.jsonl");
    ASSERT_EQ(with_adapter.size(), 3u);
    ASSERT_EQ(merged.size(), 3u);
    ASSERT_EQ(plain.size(), 3u);
    int differ_from_base = 0;
    for (size_t i = 0; i < with_adapter.size(); ++i) {
        EXPECT_EQ(with_adapter[i]["response"], merged[i]["response"]) << i;
        differ_from_base += with_adapter[i]["response"] != plain[i]["response"];
    }
    EXPECT_GT(differ_from_base, 0);
}

TEST(GenerateCli, BadPromptsNamedByLineOrSkipped) {
    const std::string dir = scratch_dir("generate-cli-bad");
    write_file(dir + "/gen.yaml", gen_config());
    write_file(dir + "/prompts.jsonl", std::string(R"({"prompt": "Write a kernel."})") + "\n" +
                                           R"({"prompt": "   "})" + "\n" + "{\"prompt\": \"bad \xff byte\"}\n");
    auto r = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + dir + "/prompts.jsonl --out " + dir +
                       "/out.jsonl --max-new-tokens 4");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("prompts.jsonl:2: empty prompt"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl"));

    auto s = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + dir + "/prompts.jsonl --out " + dir +
                       "/out.jsonl --max-new-tokens 4 --set generate.skip_invalid=true");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_NE(s.err.find("skipped 2 bad prompt(s)"), std::string::npos) << s.err;
    EXPECT_EQ(read_lines(dir + "/out.jsonl").size(), 1u);

    auto u = run_cuset("generate --config " + dir + "/gen.yaml --prompts " + dir + "/prompts.jsonl --out " + dir +
                       "/o.jsonl --top-p 1.5");
    EXPECT_EQ(u.exit_code, 2) << u.err;
    EXPECT_NE(u.err.find("generate.top_p"), std::string::npos) << u.err;
}
