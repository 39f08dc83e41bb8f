// Generation (generate/) against transformers: greedy decoding equals generate(do_sample=False)
// token for token for 64 new tokens on the golden random Llama / Qwen2 / Qwen3 models and on
// data/tiny-coder, for a batch of prompts of different lengths (tests/golden/generate.py); the
// generation prompt equals apply_chat_template(add_generation_prompt=True); every logits
// processor equals transformers' on the same logits; a sampled run is reproducible from its seed
// and independent of the batch; EOS, stop strings and max_new_tokens end a sample with the right
// finish reason; prompt records parse as documented.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/data/dataset.h"
#include "cuset/generate/generate_run.h"
#include "cuset/generate/generator.h"
#include "cuset/generate/sampling.h"
#include "cuset/model/model.h"
#include "cuset/model/safetensors_torch.h"
#include "cuset/text/chat_format.h"
#include "cuset/text/tokenizer.h"
#include "../../src/generate/generate_output.h"  // the writer both backends share
#include "model/model_rounding.h"
#include "tensor_check.h"
#include "test_util.h"

using cuset::test::lines_of;

namespace {

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/generate";
const std::string kModels = std::string(CUSET_TEST_WORK) + "/golden/model";
const std::string kTiny = std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder";

std::string model_dir_of(const std::string& c) { return c == "tiny_coder" ? kTiny : kModels + "/" + c + "/model"; }

// The real (unpadded) ids of each left-padded row.
std::vector<std::vector<int32_t>> rows_of(const at::Tensor& ids, const at::Tensor& mask) {
    std::vector<std::vector<int32_t>> out;
    for (int64_t b = 0; b < ids.size(0); ++b) {
        std::vector<int32_t> row;
        for (int64_t t = 0; t < ids.size(1); ++t)
            if (mask[b][t].item<int64_t>() != 0) row.push_back(static_cast<int32_t>(ids[b][t].item<int64_t>()));
        out.push_back(row);
    }
    return out;
}

// A tokenizer for Generator's decoding: the model's own (tiny-coder) or tiny-coder's for the
// random models (their ids < 160 decode to something; only stop strings would need meaning).
std::unique_ptr<cuset::Tokenizer> tokenizer_for(const std::string&) { return cuset::tokenizer_load(kTiny); }

// tiny-coder's tokenizer with the chatml format, as a configuration with model.path = tiny-coder
// and data.chat_format = chatml gives it.
cuset::TextOptions tiny_text() {
    cuset::TextOptions t;
    t.tokenizer = kTiny;
    t.chat_format.format = "chatml";
    return t;
}

}  // namespace

// fp32 on both sides, different kernels (our cached SDPA path vs transformers' attention): each
// logit within the model parity bound of test_model.cpp (model_rounding.h: the two
// implementations' reordered reductions, relative to the row's largest |z|), so argmax can only
// differ where the reference's two best logits are closer than twice that (each may move by it).
// A divergence is accepted only at such a near-tie (and ends the comparison of that row, whose
// later tokens then legitimately differ); anywhere else it fails.
TEST(GenerateGreedy, EqualsTransformersTokenForToken) {
    auto cases = lines_of(kGolden + "/greedy_cases.txt");
    ASSERT_EQ(cases.size(), 5u) << "golden fixture missing: " << kGolden;
    at::NoGradGuard no_grad;
    int64_t compared = 0, ties = 0;
    for (const std::string& c : cases) {
        SCOPED_TRACE(c);
        auto ref = cuset::safetensors_load(kGolden + "/greedy_" + c + ".safetensors", at::kCPU);
        at::Tensor tokens = ref.at("tokens"), logits = ref.at("logits");  // [B, 64], [64, B, V]
        auto prompts = rows_of(ref.at("prompt_ids"), ref.at("prompt_mask"));
        cuset::Decoder model = cuset::model_load(model_dir_of(c), at::kFloat, at::kCPU);
        auto tok = tokenizer_for(c);
        cuset::GenerateOptions go;
        go.max_new_tokens = tokens.size(1);  // no EOS: all 64 tokens, as the reference (eos_token_id=None)
        cuset::Generator gen(model, *tok, go, at::kCPU);
        std::vector<cuset::GenerationInput> batch;
        for (const auto& p : prompts) batch.push_back({p, 0});
        auto outs = gen.generate(batch);
        ASSERT_EQ(outs.size(), prompts.size());
        for (size_t b = 0; b < outs.size(); ++b) {
            ASSERT_EQ(static_cast<int64_t>(outs[b].tokens.size()), tokens.size(1)) << "row " << b;
            EXPECT_EQ(outs[b].finish, cuset::FinishReason::kLength);
            for (int64_t s = 0; s < tokens.size(1); ++s) {
                const int64_t want = tokens[static_cast<int64_t>(b)][s].item<int64_t>();
                const int64_t got = outs[b].tokens[static_cast<size_t>(s)];
                if (got == want) {
                    ++compared;
                    continue;
                }
                at::Tensor row = logits[s][static_cast<int64_t>(b)].to(at::kDouble);  // [V]
                const double top = row[want].item<double>(), ours = row[got].item<double>();
                const int64_t positions = ref.at("prompt_ids").size(1) + tokens.size(1);
                const double tie = 2 * cuset::test::logits_rel_of_max(model->config(), positions) *
                                   row.abs().max().item<double>();
                CUSET_EXPECT_WITHIN(top - ours, tie)
                    << "row " << b << " step " << s << ": ours " << got << ", transformers " << want;
                ++ties;
                break;
            }
        }
    }
    std::printf("greedy: %lld tokens equal to transformers, %lld near-tie divergences\n",
                static_cast<long long>(compared), static_cast<long long>(ties));
    EXPECT_GE(compared, 5 * 3 * 64 - 64 * ties * 2);  // nearly all of them
}

// Rows finishing early (an EOS hit by one row) leave the batch; the others go on exactly as in
// the reference, and the finished row is the reference cut at its EOS.
TEST(GenerateGreedy, RowsLeavingTheBatchKeepTheOthersExact) {
    at::NoGradGuard no_grad;
    auto ref = cuset::safetensors_load(kGolden + "/greedy_tiny_coder.safetensors", at::kCPU);
    at::Tensor tokens = ref.at("tokens");  // [B, 64]
    auto prompts = rows_of(ref.at("prompt_ids"), ref.at("prompt_mask"));
    cuset::Decoder model = cuset::model_load(kTiny, at::kFloat, at::kCPU);
    auto tok = cuset::tokenizer_load(kTiny);
    // EOS = row 1's 10th token (the first place it occurs in that row).
    const auto eos = static_cast<int32_t>(tokens[1][9].item<int64_t>());
    cuset::GenerateOptions go;
    go.max_new_tokens = 64;
    go.eos_ids = {eos};
    cuset::Generator gen(model, *tok, go, at::kCPU);
    std::vector<cuset::GenerationInput> batch;
    for (const auto& p : prompts) batch.push_back({p, 0});
    auto outs = gen.generate(batch);
    for (size_t b = 0; b < outs.size(); ++b) {
        std::vector<int32_t> want;
        cuset::FinishReason why = cuset::FinishReason::kLength;
        for (int64_t s = 0; s < 64; ++s) {
            want.push_back(static_cast<int32_t>(tokens[static_cast<int64_t>(b)][s].item<int64_t>()));
            if (want.back() == eos) {
                why = cuset::FinishReason::kEos;
                break;
            }
        }
        EXPECT_EQ(outs[b].tokens, want) << "row " << b;
        EXPECT_EQ(outs[b].finish, why) << "row " << b;
        if (why == cuset::FinishReason::kEos) {
            want.pop_back();
            EXPECT_EQ(outs[b].text, tok->decode(want)) << "the response text leaves the EOS out";
        }
    }
    EXPECT_EQ(outs[1].finish, cuset::FinishReason::kEos);
}

// cuset's chatml generation prompt of the tiny-coder prompts equals the ids of tiny-coder's own
// chat template with add_generation_prompt=True.
TEST(GeneratePrompt, EqualsApplyChatTemplate) {
    auto ref = cuset::safetensors_load(kGolden + "/greedy_tiny_coder.safetensors", at::kCPU);
    auto want = rows_of(ref.at("prompt_ids"), ref.at("prompt_mask"));
    cuset::TextPipeline pipe = cuset::text_pipeline_from(tiny_text());
    auto lines = lines_of(kGolden + "/tiny_coder_prompts.jsonl");
    ASSERT_EQ(lines.size(), want.size());
    for (size_t i = 0; i < lines.size(); ++i) {
        cuset::PromptRecord rec;
        std::string problem;
        ASSERT_TRUE(cuset::prompt_parse(lines[i], &rec, &problem)) << problem;
        EXPECT_EQ(pipe.formatter->generation_prompt(rec.prompt), want[i]) << lines[i];
    }
}

// The Qwen3 generation prompt carries the empty think block unless thinking is on; a prompt
// must end with a user turn.
TEST(GeneratePrompt, Qwen3ThinkBlockAndErrors) {
    auto tok = cuset::tokenizer_load(kTiny);
    cuset::ChatFormatOptions fo;
    fo.format = "qwen3";
    cuset::ChatFormatter q3(*tok, fo, kTiny);
    cuset::Conversation c{"x", {{"user", "hi"}}};
    EXPECT_EQ(tok->decode(q3.generation_prompt(c)),
              "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    EXPECT_EQ(tok->decode(q3.generation_prompt(c, true)), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    EXPECT_EQ(q3.end_of_turn(), "<|im_end|>");
    cuset::Conversation bad{"b", {{"user", "hi"}, {"assistant", "yo"}}};
    EXPECT_THROW(q3.generation_prompt(bad), cuset::InputError);
}

// Each processor setting on the same logits (with ties, zeros, a flat row, left-padded ids):
// softmax of our processed scores equals transformers'. Same fp32 tensor operations on the same
// LibTorch: the filtered sets must be identical (exact zeros) and the kept probabilities agree to
// the fp32 softmax's rounding of probabilities <= 1 (p_tol below).
TEST(Sampling, ProcessorsEqualTransformers) {
    auto ref = cuset::safetensors_load(kGolden + "/processors.safetensors", at::kCPU);
    std::ifstream in(kGolden + "/processors.json");
    ASSERT_TRUE(in.good());
    nlohmann::json settings = nlohmann::json::parse(in);
    at::Tensor logits = ref.at("logits"), ids = ref.at("ids"), mask = ref.at("mask");
    at::Tensor seen = cuset::seen_tokens(at::where(mask != 0, ids, -1), logits.size(1));
    int n = 0;
    for (auto& [name, s] : settings.items()) {
        SCOPED_TRACE(name);
        cuset::SamplingOptions o;
        o.repetition_penalty = s.value("repetition_penalty", 1.0);
        o.temperature = s.value("temperature", 0.0);
        o.top_k = s.value("top_k", 0);
        o.top_p = s.value("top_p", 1.0);
        o.min_p = s.value("min_p", 0.0);
        at::Tensor want = ref.at("probs." + name);
        at::Tensor got = at::softmax(cuset::logits_process(logits, seen, o), -1);
        EXPECT_TRUE(at::equal(got == 0, want == 0)) << "filtered sets differ";
        // fp32 on both sides, the same filter: each processor rounds a logit once (u |z|), and a
        // probability p = exp(z - lse) <= 1 moves by (log2(V) + 2) u relative (the sum's vectorised
        // levels, the subtraction, exp): two computations, 2 (log2 V + 2 + max|z|) u (~2e-6 here;
        // seen: identical). A wrong penalty, temperature or cut-off moves p by > 1e-3.
        const double u = std::ldexp(1.0, -24), v = static_cast<double>(logits.size(-1));
        const double z_max = logits.masked_select(at::isfinite(logits)).abs().max().item<double>();
        const double p_tol = 2 * (std::log2(v) + 2 + z_max) * u;
        CUSET_EXPECT_WITHIN(cuset::test::max_abs_diff(got, want), p_tol);
        ++n;
    }
    EXPECT_EQ(n, 14);
}

TEST(Sampling, FilteredTokensAreNeverDrawnAndFrequenciesFollowTheProbabilities) {
    at::Tensor scores = at::tensor({std::log(0.2), std::log(0.8), -INFINITY, -INFINITY}, at::kFloat).unsqueeze(0);
    cuset::SampleStream stream(cuset::sample_seed(1, "p", 0));
    std::vector<cuset::SampleStream*> rows{&stream};
    int64_t ones = 0;
    const int64_t n = 4000;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t t = cuset::sample_select(scores, rows).item<int64_t>();
        ASSERT_LE(t, 1);
        ones += t;
    }
    // Binomial(4000, 0.8): sd 25; 5 sd. A statistical bound on a seeded stream, not a rounding one:
    // no numeric variant moves it, so it is not measured.
    EXPECT_NEAR(static_cast<double>(ones), 0.8 * n, 5 * 25.3);
    EXPECT_NE(cuset::sample_seed(1, "p", 0), cuset::sample_seed(1, "p", 1));
    EXPECT_NE(cuset::sample_seed(1, "p", 0), cuset::sample_seed(2, "p", 0));
    EXPECT_NE(cuset::sample_seed(1, "p", 0), cuset::sample_seed(1, "q", 0));
}

// A sampled sequence's tokens come from its own seed only: decoding it alone, in a batch of
// eight, or again gives the same tokens; another seed gives others.
TEST(Sampling, SeededRunIsReproducibleAndIndependentOfTheBatch) {
    at::NoGradGuard no_grad;
    auto ref = cuset::safetensors_load(kGolden + "/greedy_tiny_coder.safetensors", at::kCPU);
    auto prompts = rows_of(ref.at("prompt_ids"), ref.at("prompt_mask"));
    cuset::Decoder model = cuset::model_load(kTiny, at::kFloat, at::kCPU);
    auto tok = cuset::tokenizer_load(kTiny);
    cuset::GenerateOptions go;
    go.max_new_tokens = 24;
    go.sampling.temperature = 0.9;
    go.sampling.top_p = 0.95;
    go.sampling.top_k = 50;
    go.sampling.repetition_penalty = 1.1;
    go.eos_ids = {tok->eos_id()};
    cuset::Generator gen(model, *tok, go, at::kCPU);
    std::vector<cuset::GenerationInput> batch;
    for (size_t p = 0; p < prompts.size(); ++p)
        for (int64_t k = 0; k < 2; ++k) batch.push_back({prompts[p], cuset::sample_seed(7, std::to_string(p), k)});
    auto together = gen.generate(batch);
    auto again = gen.generate(batch);
    bool samples_differ = false;
    for (size_t i = 0; i < batch.size(); ++i) {
        auto alone = gen.generate({batch[i]});
        EXPECT_EQ(alone[0].tokens, together[i].tokens) << "sequence " << i << " alone vs in a batch of 8";
        EXPECT_EQ(again[i].tokens, together[i].tokens) << "sequence " << i << " rerun";
        if (i % 2 == 1) samples_differ = samples_differ || together[i].tokens != together[i - 1].tokens;
    }
    EXPECT_TRUE(samples_differ) << "two samples of one prompt should differ";
    batch[0].seed = cuset::sample_seed(8, "0", 0);
    EXPECT_NE(gen.generate({batch[0]})[0].tokens, together[0].tokens);
}

// EOS, stop strings and max_new_tokens each end a sample with their finish reason.
TEST(GenerateStop, FinishReasons) {
    at::NoGradGuard no_grad;
    auto ref = cuset::safetensors_load(kGolden + "/greedy_tiny_coder.safetensors", at::kCPU);
    auto prompts = rows_of(ref.at("prompt_ids"), ref.at("prompt_mask"));
    cuset::Decoder model = cuset::model_load(kTiny, at::kFloat, at::kCPU);
    auto tok = cuset::tokenizer_load(kTiny);
    cuset::GenerateOptions go;
    go.max_new_tokens = 40;
    cuset::Generator free_run(model, *tok, go, at::kCPU);
    auto base = free_run.generate({{prompts[0], 0}})[0];
    ASSERT_EQ(base.tokens.size(), 40u);
    EXPECT_EQ(base.finish, cuset::FinishReason::kLength);
    EXPECT_EQ(base.text, tok->decode(base.tokens));

    go.max_new_tokens = 7;
    auto len = cuset::Generator(model, *tok, go, at::kCPU).generate({{prompts[0], 0}})[0];
    EXPECT_EQ(len.finish, cuset::FinishReason::kLength);
    EXPECT_EQ(len.tokens, std::vector<int32_t>(base.tokens.begin(), base.tokens.begin() + 7));

    // A stop string: a piece of the free run's text from its 12th token on.
    const std::string head = tok->decode(std::vector<int32_t>(base.tokens.begin(), base.tokens.begin() + 12));
    ASSERT_GT(base.text.size(), head.size() + 3);
    const std::string stop = base.text.substr(head.size(), 3);
    const size_t at = base.text.find(stop);
    go.max_new_tokens = 40;
    go.stop_strings = {stop};
    auto st = cuset::Generator(model, *tok, go, at::kCPU).generate({{prompts[0], 0}})[0];
    EXPECT_EQ(st.finish, cuset::FinishReason::kStop);
    EXPECT_EQ(st.text, base.text.substr(0, at)) << "the text ends before the stop string";
    EXPECT_LT(st.tokens.size(), base.tokens.size());
    EXPECT_TRUE(std::equal(st.tokens.begin(), st.tokens.end(), base.tokens.begin()));
    EXPECT_NE(tok->decode(st.tokens).find(stop), std::string::npos);

    go.stop_strings.clear();
    go.eos_ids = {base.tokens[4]};
    auto eos = cuset::Generator(model, *tok, go, at::kCPU).generate({{prompts[0], 0}})[0];
    EXPECT_EQ(eos.finish, cuset::FinishReason::kEos);
    size_t first = 0;
    while (base.tokens[first] != base.tokens[4]) ++first;
    EXPECT_EQ(eos.tokens.size(), first + 1);

    // The context length caps the budget.
    go.eos_ids.clear();
    go.context_length = static_cast<int64_t>(prompts[0].size()) + 3;
    auto ctx = cuset::Generator(model, *tok, go, at::kCPU).generate({{prompts[0], 0}})[0];
    EXPECT_EQ(ctx.tokens.size(), 3u);
    EXPECT_EQ(ctx.finish, cuset::FinishReason::kLength);
}

TEST(GeneratePrompt, RecordsParseAsDocumented) {
    cuset::PromptRecord r;
    std::string why;
    ASSERT_TRUE(cuset::prompt_parse(R"({"id": 5, "system": "S", "prompt": "P", "response": "R"})", &r, &why)) << why;
    EXPECT_EQ(r.id, "5");
    ASSERT_EQ(r.prompt.messages.size(), 2u);
    EXPECT_EQ(r.prompt.messages[0].role, "system");
    EXPECT_EQ(r.reference.value_or(""), "R");
    ASSERT_TRUE(cuset::prompt_parse(
        R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}, {"role": "assistant", "content": "d"}]})",
        &r, &why));
    EXPECT_EQ(r.prompt.messages.size(), 3u);
    EXPECT_EQ(r.prompt.messages.back().content, "c");
    EXPECT_EQ(r.reference.value_or(""), "d");
    ASSERT_TRUE(cuset::prompt_parse(R"({"prompt": "only"})", &r, &why));
    EXPECT_FALSE(r.reference.has_value());
    EXPECT_FALSE(cuset::prompt_parse(R"({"prompt": "  "})", &r, &why));
    EXPECT_NE(why.find("empty prompt"), std::string::npos) << why;
    EXPECT_FALSE(cuset::prompt_parse("{\"prompt\": \"a\xff\"}", &r, &why));
    EXPECT_NE(why.find("invalid UTF-8"), std::string::npos) << why;
    EXPECT_FALSE(cuset::prompt_parse(R"({"messages": [{"role": "assistant", "content": "x"}]})", &r, &why));
    EXPECT_NE(why.find("user turn"), std::string::npos) << why;
    EXPECT_FALSE(cuset::prompt_parse("{not json", &r, &why));
    EXPECT_NE(why.find("invalid JSON"), std::string::npos) << why;
}

// Every line `generate` writes is one its readers accept (a record of at most 64 MiB): an answer
// larger than that (a served model's 70 MiB body) is cut at a character boundary and its
// finish_reason says "cut"; an ordinary answer is written as it is.
TEST(GenerateOutput, AnAnswerPastTheRecordLimitIsCutAndSaysSo) {
    const std::string dir = cuset::test::scratch_dir("generate_output_cut");
    cuset::GenerateRequest req;
    req.out = dir + "/out.jsonl";
    req.settings.n = 2;
    cuset::PromptRecord rec;
    rec.id = "big";
    std::vector<std::vector<cuset::WrittenSample>> results(1, std::vector<cuset::WrittenSample>(2));
    results[0][0].text = std::string(70u << 20, 'a') + "\xC3\xA9";
    results[0][0].finish = "stop";
    results[0][1].text = "small";
    results[0][1].finish = "eos";
    cuset::GenerateSummary sum;
    cuset::generate_output_write(req, {rec}, results, /*greedy=*/false, 0, sum);
    cuset::LineReader in(req.out, "generation output");
    std::string line;
    ASSERT_TRUE(in.next(line));
    EXPECT_LT(line.size(), cuset::kMaxRecordBytes);
    const nlohmann::json a = nlohmann::json::parse(line);
    EXPECT_EQ(a["finish_reason"], "cut");
    EXPECT_EQ(a["response"].get<std::string>().rfind("aaa", 0), 0u);
    ASSERT_TRUE(in.next(line));
    const nlohmann::json b = nlohmann::json::parse(line);
    EXPECT_EQ(b["response"], "small");
    EXPECT_EQ(b["finish_reason"], "eos");
    EXPECT_FALSE(in.next(line));
}
