// `data check --against`: n-gram overlap of samples with a benchmark (data/decontaminate.h).
#include "cuset/data/decontaminate.h"

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"

namespace cuset {

namespace {

bool word_byte(unsigned char c) { return c == '_' || c >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }
bool space_byte(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

uint64_t token_hash(std::string_view text, const OverlapToken& t) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the lower-cased bytes
    for (size_t i = t.begin; i < t.end; ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c | 0x20);
        h = (h ^ c) * 1099511628211ull;
    }
    return h;
}

// Calls f(hash, first token index) for every n-gram of `text`: a polynomial hash over the token
// hashes, rolled one token at a time (arithmetic mod 2^64).
template <class F>
void for_each_ngram(std::string_view text, const std::vector<OverlapToken>& toks, int n, F&& f) {
    if (static_cast<int64_t>(toks.size()) < n) return;
    constexpr uint64_t kBase = 0x9E3779B97F4A7C15ull;
    uint64_t top = 1;  // kBase^(n-1)
    for (int i = 1; i < n; ++i) top *= kBase;
    std::vector<uint64_t> th(toks.size());
    for (size_t i = 0; i < toks.size(); ++i) th[i] = token_hash(text, toks[i]);
    uint64_t h = 0;
    for (int i = 0; i < n; ++i) h = h * kBase + th[i];
    f(h, size_t{0});
    for (size_t i = n; i < toks.size(); ++i) {
        h = (h - th[i - n] * top) * kBase + th[i];
        f(h, i - n + 1);
    }
}

void collect_strings(const nlohmann::json& v, std::vector<std::string>* out) {
    if (v.is_string()) out->push_back(v.get<std::string>());
    else if (v.is_array() || v.is_object())
        for (const auto& x : v) collect_strings(x, out);
}

}  // namespace

std::vector<OverlapToken> overlap_tokens(std::string_view text) {
    std::vector<OverlapToken> out;
    size_t i = 0;
    while (i < text.size()) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        if (space_byte(c)) {
            ++i;
            continue;
        }
        size_t b = i++;
        if (word_byte(c))
            while (i < text.size() && word_byte(static_cast<unsigned char>(text[i]))) ++i;
        out.push_back({b, i});
    }
    return out;
}

BenchmarkIndex benchmark_index_load(const std::string& path, int n) {
    if (n < 1) throw UsageError("--ngram must be at least 1");
    LineReader in(path, "benchmark file");
    BenchmarkIndex idx;
    idx.path = path;
    idx.n = n;
    std::string line;
    while (in.next(line)) {
        const int64_t line_no = in.line_no();
        if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
        const nlohmann::json rec = json_parse(line, path + ":" + std::to_string(line_no));
        if (!rec.is_object()) throw InputError(path + ":" + std::to_string(line_no) + ": expected a JSON object (one task)");
        std::string name = "line " + std::to_string(line_no);
        if (auto t = rec.find("task_name"); t != rec.end() && t->is_string()) name = t->get<std::string>();
        else if (auto id = rec.find("id"); id != rec.end() && !id->is_null())
            name = id->is_string() ? id->get<std::string>() : id->dump();
        const auto task = static_cast<uint32_t>(idx.task_names.size());
        idx.task_names.push_back(quote_bounded(name, 80));
        std::vector<std::string> texts;
        collect_strings(rec, &texts);
        for (const std::string& s : texts)
            for_each_ngram(s, overlap_tokens(s), n, [&](uint64_t h, size_t) { idx.task_of.emplace(h, task); });
    }
    if (idx.task_names.empty()) throw InputError(path + ": no task (an empty benchmark file)");
    return idx;
}

Overlap benchmark_overlap(const BenchmarkIndex& index, const std::vector<std::string_view>& texts) {
    Overlap o;
    std::map<uint32_t, int64_t> per_task;
    for (std::string_view s : texts) {
        const std::vector<OverlapToken> toks = overlap_tokens(s);
        for_each_ngram(s, toks, index.n, [&](uint64_t h, size_t first) {
            auto it = index.task_of.find(h);
            if (it == index.task_of.end()) return;
            if (o.shared++ == 0) {
                const size_t b = toks[first].begin, e = toks[first + index.n - 1].end;
                std::string span(s.substr(b, e - b));
                for (char& c : span)
                    if (space_byte(static_cast<unsigned char>(c))) c = ' ';  // one line in the console
                o.first = quote_bounded(span, 120);
            }
            ++per_task[it->second];
        });
    }
    for (const auto& [task, count] : per_task)
        if (count > o.task_shared) {
            o.task = task;
            o.task_shared = count;
        }
    return o;
}

}  // namespace cuset
