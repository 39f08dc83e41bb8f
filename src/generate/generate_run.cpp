// `cuset-train generate`: reads the prompts, formats them with the generation prompt, decodes
// them in length-sorted batches with a progress bar, writes one JSON line per sample atomically.
#include "cuset/generate/generate_run.h"
#include "generate_output.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"
#include "cuset/core/progress.h"
#include "cuset/core/signals.h"
#include "cuset/core/utf8_text.h"
#include "cuset/data/data.h"
#include "cuset/data/dataset.h"
#include "cuset/generate/generator.h"
#include "cuset/model/device.h"
#include "cuset/model/lora.h"
#include "cuset/model/model.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The stop strings of generate.stop (a JSON array, checked by the config schema).
std::vector<std::string> parse_stop(const std::string& text) {
    std::vector<std::string> out;
    if (text.empty()) return out;
    for (const json& s : json_parse(text, "key 'generate.stop'", ExitCode::kUsage)) out.push_back(s.get<std::string>());
    return out;
}

void add_unique(std::vector<int32_t>* ids, int64_t id) {
    if (id >= 0 && std::find(ids->begin(), ids->end(), static_cast<int32_t>(id)) == ids->end())
        ids->push_back(static_cast<int32_t>(id));
}

}  // namespace

std::string prompt_record_line(const std::string& id, const Conversation& c) {
    nlohmann::json j;
    j["id"] = id;
    nlohmann::json msgs = nlohmann::json::array();
    for (const Message& m : c.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
    j["messages"] = std::move(msgs);
    return json_text(j);
}

bool prompt_parse(const std::string& line, PromptRecord* out, std::string* problem) {
    *out = PromptRecord{};
    Record rec;
    RecordProblem why;
    if (!data_parse_record(line, {RecordUse::kPrompt, /*replace_invalid_utf8=*/false}, &rec, &why)) {
        *problem = why.message;
        return false;
    }
    out->id = rec.conversation.id;
    out->prompt = std::move(rec.conversation);
    out->reference = std::move(rec.reference);
    return true;
}

std::vector<int32_t> generate_eos_ids(const Tokenizer& tok, const ChatFormatter& fmt, const std::string& model_dir,
                                      const std::vector<int64_t>& model_eos, std::vector<std::string>* stop_strings) {
    std::vector<int32_t> ids;
    add_unique(&ids, tok.eos_id());
    for (int64_t e : model_eos) add_unique(&ids, e);
    const fs::path gc = fs::path(model_dir) / "generation_config.json";
    if (fs::exists(gc)) {
        const json j = json_read_file(gc.string(), "generation config");
        if (j.is_object() && j.contains("eos_token_id")) {
            const json& e = j["eos_token_id"];
            if (e.is_number_integer()) add_unique(&ids, e.get<int64_t>());
            else if (e.is_array())
                for (const json& x : e)
                    if (x.is_number_integer()) add_unique(&ids, x.get<int64_t>());
        }
    }
    const std::string eot = fmt.end_of_turn();
    if (!eot.empty()) {
        const int32_t id = tok.token_to_id(eot);
        Encoding enc = tok.encode(eot, false);
        if (id >= 0 && enc.ids.size() == 1 && enc.ids[0] == id) add_unique(&ids, id);
        else if (std::find(stop_strings->begin(), stop_strings->end(), eot) == stop_strings->end())
            stop_strings->push_back(eot);
    }
    return ids;
}

namespace {

// The prompts file read; each prompt formatted with the generation prompt into `prompt_ids`, or
// reported (generate_read_prompts) when it renders to nothing or leaves no room in the context.
std::vector<PromptRecord> read_prompts(const GenerateRequest& req, const TextPipeline& pipe, const ModelConfig& mc,
                                       bool thinking, std::vector<std::vector<int32_t>>* prompt_ids, GenerateSummary& sum) {
    return generate_read_prompts(
        req,
        [&](PromptRecord& rec, std::string* problem) {
            std::vector<int32_t> ids;
            try {
                ids = pipe.formatter->generation_prompt(rec.prompt, thinking);
            } catch (const InputError& e) {
                *problem = e.what();
                return false;
            }
            if (ids.empty()) {
                *problem = "the prompt renders to no tokens";
                return false;
            }
            if (mc.max_position_embeddings > 0 && static_cast<int64_t>(ids.size()) >= mc.max_position_embeddings) {
                *problem = strprintf("prompt of %zu tokens does not fit the context length %lld (max_position_embeddings) "
                                     "with room for one new token", ids.size(),
                                     static_cast<long long>(mc.max_position_embeddings));
                return false;
            }
            prompt_ids->push_back(std::move(ids));
            return true;
        },
        sum);
}

}  // namespace

GenerateSummary generate_run(const GenerateRequest& req, const TextOptions& text, const Runtime& runtime) {
    if (req.settings.backend == "openai") return generate_run_openai(req, text);  // a served model: nothing loaded here
    at::NoGradGuard no_grad;
    if (req.model.empty()) throw UsageError("generate: no model (set model.path or use --model DIR)");
    if (req.prompts.empty()) throw UsageError("generate: no prompts file (use --prompts FILE.jsonl)");
    if (req.out.empty()) throw UsageError("generate: no output file (use --out FILE.jsonl)");
    {  // never over an input: the prompts, the model's, the adapter's or the tokenizer's files
        std::vector<std::string> inputs = folder_entries(req.model);
        for (const std::string& dir : {req.tokenizer, req.adapter})
            for (const std::string& f : folder_entries(dir)) inputs.push_back(f);
        inputs.insert(inputs.end(), {req.prompts, req.tokenizer});
        refuse_output_equal_to_input(req.out, inputs, "generate");
    }
    const GenerateSettings& g = req.settings;
    const c10::Device device = runtime.device;
    const c10::ScalarType dtype = runtime.dtype;
    runtime_use_threads(runtime);
    // model.lora.path's adapter whenever it is set (model.lora.enabled is for training); the model
    // first, so that a LoRA checkpoint given as --model (no tokenizer there either) gets its hint.
    Decoder model = model_load_for_inference(req.model, req.adapter, dtype, device);
    TextPipeline pipe = text_pipeline_from(text);
    const Tokenizer& tok = *pipe.tokenizer;
    const ModelConfig& mc = model->config();

    // Prompts: parsed, formatted with the generation prompt, checked against the context.
    std::vector<std::vector<int32_t>> prompt_ids;
    GenerateSummary sum;
    const std::vector<PromptRecord> records = read_prompts(req, pipe, mc, g.thinking, &prompt_ids, sum);

    GenerateOptions go;
    go.max_new_tokens = g.max_new_tokens;
    go.sampling = g.sampling;
    go.stop_strings = parse_stop(g.stop);
    go.eos_ids = generate_eos_ids(tok, *pipe.formatter, req.model, mc.eos_token_ids, &go.stop_strings);
    go.context_length = mc.max_position_embeddings;
    Generator gen(model, tok, go, device);

    // Sequences (prompt, sample), longest prompts first, in batches of generate.batch_size.
    // Greedy samples of one prompt are all the same: decoded once, copied.
    const bool greedy = go.sampling.greedy();
    const int64_t decoded_per_prompt = greedy ? 1 : g.n;
    struct Seq {
        size_t prompt;
        int64_t sample;
    };
    std::vector<Seq> seqs;
    for (size_t p = 0; p < records.size(); ++p)
        for (int64_t k = 0; k < decoded_per_prompt; ++k) seqs.push_back({p, k});
    std::stable_sort(seqs.begin(), seqs.end(), [&](const Seq& a, const Seq& b) {
        return prompt_ids[a.prompt].size() > prompt_ids[b.prompt].size();
    });
    std::vector<std::vector<GenerationOutput>> results(records.size(), std::vector<GenerationOutput>(decoded_per_prompt));

    const std::string model_name = req.adapter.empty() ? req.model : req.model + " + LoRA " + req.adapter;
    log_info("generate: %zu prompt(s) x %lld sample(s) from %s on %s (%s, %s), max %lld new tokens, batch %lld",
             records.size(), static_cast<long long>(g.n), model_name.c_str(), device.str().c_str(),
             dtype_name(dtype).c_str(), greedy ? "greedy" : "sampling", static_cast<long long>(g.max_new_tokens),
             static_cast<long long>(g.batch_size));
    // Counted in output samples (a greedy decode stands for its prompt's n), tokens as decoded.
    const int64_t samples_per_seq = greedy ? g.n : 1;
    Progress progress("generate", static_cast<int64_t>(records.size()) * g.n, "samples",
                      progress_bar_wanted(g.progress));
    int64_t tokens = 0, done = 0;
    auto rate = [&] {
        const double s = progress.elapsed_seconds();
        return strprintf("%lld tokens, %.1f tok/s", static_cast<long long>(tokens), s > 0 ? tokens / s : 0.0);
    };
    for (size_t start = 0; start < seqs.size(); start += static_cast<size_t>(g.batch_size)) {
        const size_t end = std::min(seqs.size(), start + static_cast<size_t>(g.batch_size));
        std::vector<GenerationInput> batch;
        for (size_t s = start; s < end; ++s)
            batch.push_back({prompt_ids[seqs[s].prompt], sample_seed(static_cast<uint64_t>(g.seed),
                                                                     records[seqs[s].prompt].id, seqs[s].sample)});
        std::vector<GenerationOutput> outs = gen.generate(batch, [&](int64_t n) {
            // A caller that installed a stop handler (data build) is answered within a step.
            if (signals_stop_requested()) throw StoppedBySignal("generate: stopped by a signal");
            tokens += n;
            progress.update(done, rate());
        });
        for (size_t s = start; s < end; ++s)
            results[seqs[s].prompt][static_cast<size_t>(seqs[s].sample)] = std::move(outs[s - start]);
        done += static_cast<int64_t>(end - start) * samples_per_seq;
        progress.update(done, rate());
    }
    progress.finish(rate());
    sum.seconds = progress.elapsed_seconds();

    std::vector<std::vector<WrittenSample>> written(records.size());
    for (size_t p = 0; p < records.size(); ++p)
        for (const GenerationOutput& o : results[p])
            written[p].push_back({o.text, finish_reason_name(o.finish), static_cast<int64_t>(prompt_ids[p].size()),
                                  static_cast<int64_t>(o.tokens.size()), o.seconds});
    generate_output_write(req, records, written, greedy, tokens, sum);
    return sum;
}

std::vector<PromptRecord> generate_read_prompts(const GenerateRequest& req,
                                                const std::function<bool(PromptRecord&, std::string*)>& accept,
                                                GenerateSummary& sum) {
    LineReader in(req.prompts, "prompts file");
    const std::string name = fs::path(req.prompts).filename().string();
    std::vector<PromptRecord> records;
    std::string first_problem;
    for (std::string line; in.next(line);) {
        const int64_t line_no = in.line_no();
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (data_line_blank(line)) continue;
        PromptRecord rec;
        std::string problem;
        bool ok = prompt_parse(line, &rec, &problem);
        if (ok) {
            if (rec.id.empty()) rec.id = name + ":" + std::to_string(line_no);
            rec.prompt.id = rec.id;
            rec.line = line_no;
            ok = accept(rec, &problem);
        }
        if (!ok) {
            const std::string where = req.prompts + ":" + std::to_string(line_no);
            if (!req.settings.skip_invalid)
                throw InputError(where + ": " + problem + " (set generate.skip_invalid: true to skip bad prompts)");
            ++sum.skipped;
            if (first_problem.empty()) first_problem = where + ": " + problem;
            continue;
        }
        records.push_back(std::move(rec));
    }
    if (sum.skipped)
        log_warn("%s: skipped %lld bad prompt(s); first: %s", req.prompts.c_str(), static_cast<long long>(sum.skipped),
                 first_problem.c_str());
    if (records.empty()) throw InputError(req.prompts + ": no prompt to generate for");
    return records;
}

void generate_output_write(const GenerateRequest& req, const std::vector<PromptRecord>& records,
                           const std::vector<std::vector<WrittenSample>>& results, bool greedy, int64_t tokens,
                           GenerateSummary& sum) {
    AtomicFile out(req.out, "generation output");
    for (size_t p = 0; p < records.size(); ++p) {
        for (int64_t k = 0; k < req.settings.n; ++k) {
            const WrittenSample& s = results[p][static_cast<size_t>(greedy ? 0 : k)];
            json j;
            j["id"] = records[p].id;
            j["sample"] = k;
            j["response"] = s.text;
            if (records[p].reference) j["reference"] = *records[p].reference;
            j["prompt_tokens"] = s.prompt_tokens;
            j["generated_tokens"] = s.tokens;
            j["finish_reason"] = s.finish;
            j["seconds"] = s.seconds;
            std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
            // Every line is one this command's readers accept (kMaxRecordBytes): an answer that
            // would pass it (a served model's 200 MB body) is cut, and says so.
            for (size_t keep = s.text.size() / 2; line.size() >= kMaxRecordBytes; keep /= 2) {
                j["response"] = utf8_sanitize(s.text, keep);
                j["finish_reason"] = "cut";
                line = j.dump(-1, ' ', false, json::error_handler_t::replace);
            }
            if (j["finish_reason"] == "cut")
                log_warn("generate: the answer of prompt %s, sample %lld, is cut to %zu bytes (a record may have at most %zu)",
                         records[p].id.c_str(), static_cast<long long>(k), j["response"].get<std::string>().size(),
                         kMaxRecordBytes);
            out.write(line + "\n");
            ++sum.samples;
            if (s.tokens > 0) sum.generated_tokens += s.tokens;
        }
    }
    out.commit();
    sum.prompts = static_cast<int64_t>(records.size());
    log_info("generate: %lld sample(s) of %lld prompt(s) -> %s; %lld tokens in %.1f s (%.1f tok/s)%s",
             static_cast<long long>(sum.samples), static_cast<long long>(sum.prompts), req.out.c_str(),
             static_cast<long long>(tokens), sum.seconds, sum.seconds > 0 ? tokens / sum.seconds : 0.0,
             sum.skipped ? strprintf("; %lld bad prompt(s) skipped", static_cast<long long>(sum.skipped)).c_str() : "");
}

}  // namespace cuset
