// Score files: the binary format (records + JSON index) and JSONL, read and written.
#include "cuset/data/score_file.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/input_file.h"
#include "cuset/core/json_io.h"
#include "cuset/core/log.h"

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
    if (!j.is_object() || !j.contains("format") || j["format"] != "cuset-scores")
        throw InputError(where + ": not a cuset score file (write one with `cuset-train score`)");
    const int64_t version = JsonFields(j, where).integer_or("version", -1);
    if (version != kVersion)
        throw InputError(where + ": score file version " + std::to_string(version) +
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
        throw InputError(where + ": malformed score header: " + quote_bounded(e.what()));
    }
    return h;
}

template <class T>
void put_vec(std::ostream& f, const std::vector<T>& v, uint64_t* offset) {
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
    out_ = std::make_unique<AtomicFile>(path_, "score file");
    std::ostream& f = out_->stream();
    f.write(kMagic, 8);
    uint32_t v = kVersion;
    f.write(reinterpret_cast<const char*>(&v), 4);
    offset_ = 12;
}

// Without close(), the AtomicFile removes the temporary file and FILE stays as it was.
ScoreWriter::~ScoreWriter() = default;

void ScoreWriter::add(const ScoreRecord& r) {
    if (closed_) throw RuntimeFailure("score file '" + path_ + "' is already closed");
    std::ostream& f = out_->stream();
    index_.emplace_back(r.id, offset_);
    uint64_t T = r.ids.size();
    f.write(reinterpret_cast<const char*>(&T), 8);
    offset_ += 8;
    put_vec(f, r.ids, &offset_);
    put_vec(f, r.prob, &offset_);
    put_vec(f, r.roles, &offset_);
    put_vec(f, r.trainable, &offset_);
    put_vec(f, r.tag_bits, &offset_);
}

void ScoreWriter::close() {
    if (closed_) return;
    header_.n_samples = static_cast<int64_t>(index_.size());
    json idx = header_to_json(header_);
    json ids = json::array(), offs = json::array();
    for (auto& [id, off] : index_) {
        ids.push_back(id);
        offs.push_back(off);
    }
    idx["ids"] = ids;
    idx["offsets"] = offs;
    // The records first, then the index that points into them.
    out_->commit();
    atomic_write(path_ + ".idx", idx.dump() + "\n", "score index");
    closed_ = true;
}

ScoreFile::ScoreFile(const std::string& path) : path_(path) {
    require_regular_file(path, "score file");
    std::error_code ec;
    if (!std::filesystem::exists(path + ".idx", ec))
        throw InputError("score index '" + path + ".idx' is missing (score files come in pairs: FILE and FILE.idx)");
    const json idx = json_read_file(path + ".idx", "score index");
    header_ = header_from_json(idx, path + ".idx");
    try {
        ids_ = idx.value("ids", std::vector<std::string>{});
        offsets_ = idx.value("offsets", std::vector<uint64_t>{});
    } catch (const json::exception&) {
        throw InputError(path + ".idx: \"ids\" must be a list of strings and \"offsets\" a list of byte offsets");
    }
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
    require_regular_file(path, "score file");
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
    LineReader in(path, "score file");
    std::string line;
    int64_t lineno = 0;
    bool have_header = false;
    while (in.next(line)) {
        lineno = in.line_no();
        if (line.empty()) continue;
        const json j = json_parse(line, path + ":" + std::to_string(lineno));
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
            throw InputError(strprintf("%s:%lld: malformed score record: %s", path.c_str(), (long long)lineno, quote_bounded(e.what()).c_str()));
        }
    }
    if (!have_header) throw InputError(path + ": empty score file");
    return out;
}

void score_write_jsonl(const std::string& path, ScoreHeader header, const std::vector<ScoreRecord>& records) {
    AtomicFile file(path);
    std::ostream& f = file.stream();
    header.n_samples = static_cast<int64_t>(records.size());
    f << header_to_json(header).dump() << "\n";
    for (const ScoreRecord& r : records) f << record_to_json(r).dump() << "\n";
    file.commit();
}

}  // namespace cuset
