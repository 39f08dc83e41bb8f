// Score files (binary + index, or JSONL), the scoring pass, and the analysis command.
#include "cuset/score.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <numeric>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "cuset/batching.h"
#include "cuset/dataset.h"
#include "cuset/device.h"
#include "cuset/error.h"
#include "cuset/hash.h"
#include "cuset/log.h"
#include "cuset/model.h"
#include "cuset/objective.h"
#include "cuset/progress.h"
#include "cuset/stats.h"
#include "cuset/trainer.h"

namespace cuset {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr char kMagic[8] = {'C', 'U', 'S', 'E', 'T', 'S', 'C', 'R'};
constexpr int kVersion = 1;

json header_to_json(const ScoreHeader& h) {
    return {{"format", "cuset-scores"},
            {"version", kVersion},
            {"model_hash", h.key.model_hash},
            {"pipeline_hash", h.key.pipeline_hash},
            {"data_hash", h.key.data_hash},
            {"model", h.model},
            {"data", h.data},
            {"dtype", h.dtype},
            {"max_seq_len", h.max_seq_len},
            {"n_samples", h.n_samples}};
}

ScoreHeader header_from_json(const json& j, const std::string& where) {
    if (j.value("format", "") != "cuset-scores")
        throw InputError(where + ": not a cuset score file (write one with `cuset-train score`)");
    if (j.value("version", -1) != kVersion)
        throw InputError(where + ": score file version " + std::to_string(j.value("version", -1)) +
                         " is not supported (this build reads version " + std::to_string(kVersion) +
                         "); score the data again with `cuset-train score`");
    ScoreHeader h;
    try {
        h.key.model_hash = j.at("model_hash");
        h.key.pipeline_hash = j.at("pipeline_hash");
        h.key.data_hash = j.at("data_hash");
        h.model = j.at("model");
        h.data = j.at("data");
        h.dtype = j.at("dtype");
        h.max_seq_len = j.at("max_seq_len");
        h.n_samples = j.at("n_samples");
    } catch (const json::exception& e) {
        throw InputError(where + ": malformed score header: " + e.what());
    }
    return h;
}

template <class T>
void put_vec(std::ofstream& f, const std::vector<T>& v, uint64_t* offset) {
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
    *offset += v.size() * sizeof(T);
}

json record_to_json(const ScoreRecord& r) {
    std::vector<json> prob;
    prob.reserve(r.prob.size());
    for (float p : r.prob) prob.push_back(std::isfinite(p) ? json(p) : json(nullptr));
    return {{"id", r.id}, {"ids", r.ids}, {"prob", prob}, {"role", r.roles}, {"trainable", r.trainable},
            {"bits", r.tag_bits}};
}

}  // namespace

ScoreWriter::ScoreWriter(const std::string& path, ScoreHeader header) : path_(path), header_(std::move(header)) {
    tmp_ = path_ + ".tmp-" + std::to_string(::getpid());
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw RuntimeFailure("cannot write score file '" + tmp_ + "'");
    out_.write(kMagic, 8);
    uint32_t v = kVersion;
    out_.write(reinterpret_cast<const char*>(&v), 4);
    offset_ = 12;
}

ScoreWriter::~ScoreWriter() {
    if (!closed_) {
        out_.close();
        std::error_code ec;
        fs::remove(tmp_, ec);
    }
}

void ScoreWriter::add(const ScoreRecord& r) {
    index_.emplace_back(r.id, offset_);
    uint64_t T = r.ids.size();
    out_.write(reinterpret_cast<const char*>(&T), 8);
    offset_ += 8;
    put_vec(out_, r.ids, &offset_);
    put_vec(out_, r.prob, &offset_);
    put_vec(out_, r.roles, &offset_);
    put_vec(out_, r.trainable, &offset_);
    put_vec(out_, r.tag_bits, &offset_);
}

void ScoreWriter::close() {
    out_.flush();
    if (!out_) throw RuntimeFailure("cannot write score file '" + tmp_ + "'");
    out_.close();
    header_.n_samples = static_cast<int64_t>(index_.size());
    json idx = header_to_json(header_);
    json ids = json::array(), offs = json::array();
    for (auto& [id, off] : index_) {
        ids.push_back(id);
        offs.push_back(off);
    }
    idx["ids"] = ids;
    idx["offsets"] = offs;
    std::string idx_tmp = path_ + ".idx.tmp-" + std::to_string(::getpid());
    {
        std::ofstream f(idx_tmp, std::ios::trunc);
        f << idx.dump() << "\n";
        if (!f) throw RuntimeFailure("cannot write score index '" + idx_tmp + "'");
    }
    fs::rename(tmp_, path_);
    fs::rename(idx_tmp, path_ + ".idx");
    closed_ = true;
}

ScoreFile::ScoreFile(const std::string& path) : path_(path) {
    std::ifstream f(path + ".idx");
    if (!f) throw InputError("score index '" + path + ".idx' is missing (score files come in pairs: FILE and FILE.idx)");
    json idx;
    try {
        f >> idx;
    } catch (const json::exception& e) {
        throw InputError(path + ".idx: malformed JSON: " + e.what());
    }
    header_ = header_from_json(idx, path + ".idx");
    ids_ = idx.value("ids", std::vector<std::string>{});
    offsets_ = idx.value("offsets", std::vector<uint64_t>{});
    if (ids_.size() != offsets_.size() || static_cast<int64_t>(ids_.size()) != header_.n_samples)
        throw InputError(path + ".idx: ids, offsets and n_samples disagree");
    std::ifstream bin(path, std::ios::binary);
    char magic[8];
    if (!bin.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0)
        throw InputError(path + ": not a cuset score file (bad magic)");
}

ScoreRecord ScoreFile::read(int64_t i) const {
    std::ifstream f(path_, std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offsets_.at(i)));
    ScoreRecord r;
    r.id = ids_[i];
    uint64_t T = 0;
    if (!f.read(reinterpret_cast<char*>(&T), 8) || T > (uint64_t(1) << 32))
        throw InputError(strprintf("%s: record %lld is truncated or corrupt", path_.c_str(), (long long)i));
    r.ids.resize(T);
    r.prob.resize(T);
    r.roles.resize(T);
    r.trainable.resize(T);
    r.tag_bits.resize(T);
    bool ok = f.read(reinterpret_cast<char*>(r.ids.data()), T * 4) &&
              f.read(reinterpret_cast<char*>(r.prob.data()), T * 4) &&
              f.read(reinterpret_cast<char*>(r.roles.data()), T) &&
              f.read(reinterpret_cast<char*>(r.trainable.data()), T) &&
              f.read(reinterpret_cast<char*>(r.tag_bits.data()), T * 4);
    if (!ok) throw InputError(strprintf("%s: record %lld is truncated", path_.c_str(), (long long)i));
    return r;
}

int64_t ScoreFile::find(const std::string& id) const {
    auto it = std::find(ids_.begin(), ids_.end(), id);
    return it == ids_.end() ? -1 : static_cast<int64_t>(it - ids_.begin());
}

std::vector<ScoreRecord> score_load_all(const std::string& path, ScoreHeader* header) {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw InputError("cannot read score file '" + path + "'");
    char magic[8] = {};
    probe.read(magic, 8);
    std::vector<ScoreRecord> out;
    if (probe.gcount() == 8 && std::memcmp(magic, kMagic, 8) == 0) {
        ScoreFile f(path);
        if (header) *header = f.header();
        for (int64_t i = 0; i < f.size(); ++i) out.push_back(f.read(i));
        return out;
    }
    std::ifstream in(path);
    std::string line;
    int64_t lineno = 0;
    bool have_header = false;
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty()) continue;
        json j;
        try {
            j = json::parse(line);
        } catch (const json::exception& e) {
            throw InputError(strprintf("%s:%lld: malformed JSON: %s", path.c_str(), (long long)lineno, e.what()));
        }
        if (!have_header) {
            ScoreHeader h = header_from_json(j, path + ":1");
            if (header) *header = h;
            have_header = true;
            continue;
        }
        try {
            ScoreRecord r;
            r.id = j.at("id");
            r.ids = j.at("ids").get<std::vector<int32_t>>();
            for (const json& p : j.at("prob")) r.prob.push_back(p.is_null() ? std::nanf("") : p.get<float>());
            r.roles = j.at("role").get<std::vector<uint8_t>>();
            r.trainable = j.at("trainable").get<std::vector<uint8_t>>();
            r.tag_bits = j.at("bits").get<std::vector<uint32_t>>();
            out.push_back(std::move(r));
        } catch (const json::exception& e) {
            throw InputError(strprintf("%s:%lld: malformed score record: %s", path.c_str(), (long long)lineno, e.what()));
        }
    }
    if (!have_header) throw InputError(path + ": empty score file");
    return out;
}

std::string score_run(const Config& cfg, const ScoreRequest& req) {
    at::NoGradGuard no_grad;
    Config c = cfg;
    if (!req.model.empty()) c.model.path = req.model;
    std::string data = !req.data.empty() ? req.data : req.split == "eval" ? c.data.eval : c.data.train;
    if (data.empty()) throw UsageError("score: no data file (set data.train / data.eval or pass --data)");
    c10::Device device = device_resolve(c.train.device);
    if (c.train.threads > 0) at::set_num_threads(static_cast<int>(c.train.threads));
    c10::ScalarType dtype = c.model.dtype == "auto" ? (device.is_cuda() ? at::kBFloat16 : at::kFloat)
                                                    : dtype_from_name(c.model.dtype);
    TextPipeline pipe = text_pipeline_from(c);
    TokenizedSplit split = dataset_tokenize(data, pipe, c, req.split);
    Decoder model = model_load(c.model.path, dtype, device);

    ScoreHeader header;
    header.key.model_hash = hash_model_dir(c.model.path);
    header.key.pipeline_hash = pipe.key;
    header.key.data_hash = Hasher().add(split.hash).add_u64(static_cast<uint64_t>(c.data.max_seq_len)).hex();
    header.model = c.model.path;
    header.data = data;
    header.dtype = dtype_name(dtype);
    header.max_seq_len = c.data.max_seq_len;

    std::string out = req.out;
    if (out.empty()) {
        std::string dir = run_dir_of(c);
        fs::create_directories(dir);
        out = (fs::path(dir) / (req.format == "jsonl" ? "scores.jsonl" : "scores.bin")).string();
    } else if (fs::path(out).has_parent_path()) {
        fs::create_directories(fs::path(out).parent_path());
    }

    // Samples truncated to max_seq_len (as the trainer sees them), scored longest first.
    const int64_t n = static_cast<int64_t>(split.samples.size());
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto len = [&](int64_t i) {
        return std::min<int64_t>(c.data.max_seq_len, static_cast<int64_t>(split.samples[i].ids.size()));
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return len(a) > len(b); });
    std::vector<ScoreRecord> records(n);
    const int64_t pad = pipe.tokenizer->pad_id() >= 0 ? pipe.tokenizer->pad_id() : 0;
    const int64_t chunk = c.objective.chunk_size;
    const int64_t mbs = c.train.micro_batch_size;
    Progress progress("score", n, "samples", progress_bar_wanted(c.log.progress));
    int64_t done = 0, tokens = 0;
    for (int64_t b0 = 0; b0 < n; b0 += mbs) {
        int64_t B = std::min(mbs, n - b0);
        int64_t T = len(order[b0]);
        at::Tensor ids = at::full({B, T}, pad, at::kLong);          // [B, T]
        at::Tensor labels = at::full({B, T}, kIgnoreIndex, at::kLong);  // [B, T] next token
        auto* ip = ids.data_ptr<int64_t>();
        auto* lp = labels.data_ptr<int64_t>();
        for (int64_t b = 0; b < B; ++b) {
            const TokenizedSample& s = split.samples[order[b0 + b]];
            int64_t L = len(order[b0 + b]);
            for (int64_t t = 0; t < L; ++t) {
                ip[b * T + t] = s.ids[t];
                if (t + 1 < L) lp[b * T + t] = s.ids[t + 1];
            }
            tokens += L;
        }
        // Right-padded rows need no mask under causal attention (see MicroBatch::causal_mask).
        at::Tensor hidden = model->forward(ids.to(device));  // [B, T, D]
        at::Tensor nll = token_nll(hidden.reshape({B * T, -1}), model->lm_head_weight(),
                                   labels.reshape({B * T}).to(device), chunk);  // [B*T] fp32
        at::Tensor prob = at::exp(-nll).to(at::kFloat).cpu().reshape({B, T});   // [B, T]
        const float* pp = prob.data_ptr<float>();
        for (int64_t b = 0; b < B; ++b) {
            int64_t i = order[b0 + b];
            const TokenizedSample& s = split.samples[i];
            int64_t L = len(i);
            ScoreRecord& r = records[i];
            r.id = s.id;
            r.ids.assign(s.ids.begin(), s.ids.begin() + L);
            r.roles.assign(s.roles.begin(), s.roles.begin() + L);
            r.trainable.assign(s.trainable.begin(), s.trainable.begin() + L);
            r.tag_bits.assign(s.tag_bits.begin(), s.tag_bits.begin() + L);
            r.prob.assign(L, std::numeric_limits<float>::quiet_NaN());
            for (int64_t t = 0; t + 1 < L; ++t) r.prob[t + 1] = pp[b * T + t];
        }
        done += B;
        progress.update(done, strprintf("%lld tokens", (long long)tokens));
    }
    progress.finish(strprintf("%lld tokens", (long long)tokens));

    if (req.format == "jsonl") {
        std::string tmp = out + ".tmp-" + std::to_string(::getpid());
        {
            std::ofstream f(tmp, std::ios::trunc);
            header.n_samples = n;
            f << header_to_json(header).dump() << "\n";
            for (const ScoreRecord& r : records) f << record_to_json(r).dump() << "\n";
            if (!f) throw RuntimeFailure("cannot write '" + tmp + "'");
        }
        fs::rename(tmp, out);
    } else {
        ScoreWriter w(out, header);
        for (const ScoreRecord& r : records) w.add(r);
        w.close();
    }
    log_info("scored %lld samples (%lld tokens) of %s with %s -> %s", (long long)n, (long long)tokens, data.c_str(),
             c.model.path.c_str(), out.c_str());
    return out;
}

int analyze_run(const Config& cfg, const AnalyzeRequest& req) {
    ScoreRequest sr = req.score;
    if (sr.out.empty() && !req.out.empty()) {
        fs::create_directories(req.out);
        sr.out = (fs::path(req.out) / "scores.bin").string();
    }
    std::string scores = req.scores.empty() ? score_run(cfg, sr) : req.scores;
    ScoreHeader header;
    std::vector<ScoreRecord> records = score_load_all(scores, &header);
    std::vector<ScoredSample> samples;
    samples.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
        const ScoreRecord& r = records[i];
        ScoredSample s;
        s.id = static_cast<int64_t>(i);
        // METHOD.md: valid tokens are the training targets; token 0 has no prediction.
        for (size_t t = 1; t < r.ids.size(); ++t) {
            if (!r.trainable[t] || !std::isfinite(r.prob[t])) continue;
            s.confidence.push_back(r.prob[t]);
            s.sensitive.push_back(r.tag_bits[t] != 0);
            s.categories.push_back(r.tag_bits[t]);
        }
        samples.push_back(std::move(s));
    }
    AnalysisReport report = analyze_confidences(samples, cfg.analysis, header.model, header.data);
    std::string dir = req.out.empty() ? run_dir_of(cfg) : req.out;
    fs::create_directories(dir);
    analysis_write(report, dir);
    std::cout << analysis_table(report) << std::flush;
    log_info("wrote %s and %s", (fs::path(dir) / "analysis.json").c_str(), (fs::path(dir) / "analysis.svg").c_str());
    return 0;
}

}  // namespace cuset
