// generate.backend openai (generate_run.h): the prompts' messages to an OpenAI-compatible
// chat-completions server, many requests in flight, the answers written as the local backend
// writes its samples.
#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/data/data.h"
#include "cuset/generate/generate_run.h"
#include "cuset/generate/openai_client.h"
#include "cuset/generate/sampling.h"
#include "generate_output.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {


// The API's finish_reason in the local backend's words: "length" stays, everything else
// ("stop", "eos", a tool call) is a sequence that ended by itself.
std::string finish_of(const std::string& api) { return api == "length" ? "length" : "stop"; }

// The request body of one prompt: its messages, the sampling keys, `n` samples, `seed`.
json request_body(const GenerateSettings& g, const json& messages, const json& tools, const json& stop, int64_t n,
                  uint64_t seed) {
    const SamplingOptions& s = g.sampling;
    json b;
    b["model"] = g.server.model;
    b["messages"] = messages;
    b["max_tokens"] = g.max_new_tokens;
    b["temperature"] = s.temperature;
    b["top_p"] = s.top_p;
    // Not OpenAI fields, but vLLM's, SGLang's and llama.cpp's: min_p and the penalty always, so
    // that a server's own default (llama.cpp's min_p 0.05) does not stand in for cuset's; top_k
    // when on (the servers disagree on how to say "off": 0, -1), else the server's default.
    if (s.top_k > 0) b["top_k"] = s.top_k;
    b["min_p"] = s.min_p;
    b["repetition_penalty"] = s.repetition_penalty;  // vLLM, SGLang
    b["repeat_penalty"] = s.repetition_penalty;      // llama.cpp
    b["seed"] = static_cast<int64_t>(seed & 0x7fffffffu);
    if (n > 1) b["n"] = n;
    if (!stop.empty()) b["stop"] = stop;
    if (!tools.is_null()) b["tools"] = tools;
    b["chat_template_kwargs"] = {{"enable_thinking", g.thinking}};
    return b;
}

}  // namespace

GenerateSummary generate_run_openai(const GenerateRequest& req, const TextOptions& text) {
    if (req.prompts.empty()) throw UsageError("generate: no prompts file (use --prompts FILE.jsonl)");
    if (req.out.empty()) throw UsageError("generate: no output file (use --out FILE.jsonl)");
    const GenerateSettings& g = req.settings;
    if (g.server.url.empty())
        throw UsageError("generate: key 'generate.url' must name the server (e.g. http://127.0.0.1:8000/v1) when "
                         "'generate.backend' is openai");
    refuse_output_equal_to_input(req.out, {req.prompts}, "generate");
    json stop = json::array();
    if (!g.stop.empty()) stop = json_parse(g.stop, "key 'generate.stop'", ExitCode::kUsage);
    ChatClient client(g.server);  // reads the API key first: a missing one is named before any work

    // Prompts: parsed; their messages as the API takes them.
    std::vector<json> messages, tools;
    GenerateSummary sum;
    const std::string& system_prompt = text.chat_format.system_prompt;
    const std::vector<PromptRecord> records = generate_read_prompts(
        req,
        [&](PromptRecord& rec, std::string* problem) {
            json msgs = json::array();
            bool has_system = false;
            for (const Message& m : rec.prompt.messages) has_system = has_system || m.role == "system";
            if (!has_system && !system_prompt.empty()) msgs.push_back({{"role", "system"}, {"content", system_prompt}});
            for (const Message& m : rec.prompt.messages) {
                if (m.role == "text") {
                    *problem = "a raw-text record ({\"text\"}) has no chat messages to send to a chat-completions "
                               "server (write it as {\"prompt\"} or {\"messages\"})";
                    return false;
                }
                msgs.push_back({{"role", m.role}, {"content", m.content}});
            }
            tools.push_back(rec.prompt.tools.is_null() ? json() : json::parse(rec.prompt.tools.dump()));
            messages.push_back(std::move(msgs));
            return true;
        },
        sum);

    // One request per prompt for n samples (greedy: one sample, copied n times, as the local
    // backend does); a prompt answered with fewer choices asks again for the rest, seeded on.
    const bool greedy = g.sampling.greedy();
    const int64_t wanted = greedy ? 1 : g.n;
    std::vector<std::vector<WrittenSample>> results(records.size());
    auto ask = [&](size_t p) {
        const int64_t have = static_cast<int64_t>(results[p].size());
        const uint64_t seed = sample_seed(static_cast<uint64_t>(g.seed), records[p].id, have);
        client.add(p, request_body(g, messages[p], tools[p], stop, wanted - have, seed).dump(-1, ' ', false,
                                                                                            json::error_handler_t::replace));
    };
    for (size_t p = 0; p < records.size(); ++p) ask(p);

    log_info("generate: %zu prompt(s) x %lld sample(s) from '%s' at %s (%s), max %lld new tokens, %lld request(s) in "
             "flight",
             records.size(), static_cast<long long>(g.n), g.server.model.c_str(), client.endpoint().c_str(),
             greedy ? "greedy" : "sampling", static_cast<long long>(g.max_new_tokens),
             static_cast<long long>(g.server.concurrency));
    const int64_t samples_per_choice = greedy ? g.n : 1;
    Progress progress("generate", static_cast<int64_t>(records.size()) * g.n, "samples", progress_bar_wanted(g.progress));
    int64_t tokens = 0, done = 0;
    auto rate = [&] {
        const double s = progress.elapsed_seconds();
        return strprintf("%lld tokens, %.1f tok/s", static_cast<long long>(tokens), s > 0 ? tokens / s : 0.0);
    };
    client.run([&](size_t p, const ChatResponse& r) {
        if (r.choices.empty())
            throw RuntimeFailure("generate: POST " + client.endpoint() + " answered with no choice for prompt '" +
                                 records[p].id + "'");
        const int64_t room = wanted - static_cast<int64_t>(results[p].size());
        const size_t take = std::min(r.choices.size(), static_cast<size_t>(room));
        for (size_t c = 0; c < take; ++c) {
            WrittenSample s;
            s.text = r.choices[c].text;
            s.finish = finish_of(r.choices[c].finish_reason);
            s.prompt_tokens = r.prompt_tokens;
            s.tokens = r.choices.size() == 1 ? r.completion_tokens : -1;
            s.seconds = r.seconds;
            results[p].push_back(std::move(s));
        }
        if (r.completion_tokens > 0) tokens += r.completion_tokens;
        done += static_cast<int64_t>(take) * samples_per_choice;
        progress.update(done, rate());
        if (static_cast<int64_t>(results[p].size()) < wanted) ask(p);
    });
    progress.finish(rate());
    sum.seconds = progress.elapsed_seconds();

    generate_output_write(req, records, results, greedy, tokens, sum);
    return sum;
}

}  // namespace cuset
