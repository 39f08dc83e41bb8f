// Score files: per-token probabilities of a data set under a model, with each token's role,
// trainable flag and tagger bits, in a compact binary file plus an index (or JSONL for small
// sets), keyed by model, tokenizer and data hashes. Written by `cuset-train score`; read as the
// cache behind `objective.confidence.source: cached` and by `cuset-train analyze`. This file only
// reads and writes them: computing the probabilities is analysis/score.h.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace cuset {

class AtomicFile;

// One scored sample. prob[t] = p(ids[t] | ids[<t]) under the model for t >= 1; prob[0] = NaN.
struct ScoreRecord {
    std::string id;
    std::vector<int32_t> ids;        // [T]
    std::vector<float> prob;         // [T]
    std::vector<uint8_t> roles;      // [T] Role
    std::vector<uint8_t> trainable;  // [T] 1 = training target (valid in docs/method.md's sense)
    std::vector<uint32_t> tag_bits;  // [T] tagger category bits (0 = not sensitive)
};

// What a score file was computed from; a cache hit needs all three hashes equal.
struct ScoreKey {
    std::string model_hash;     // hash_model_dir(model folder)
    std::string pipeline_hash;  // tokenizer file, chat format, tagger settings
    std::string data_hash;      // tokenised data (after truncation settings are applied)
    bool operator==(const ScoreKey& o) const {
        return model_hash == o.model_hash && pipeline_hash == o.pipeline_hash && data_hash == o.data_hash;
    }
};

struct ScoreHeader {
    ScoreKey key;
    std::string model;  // paths, for people
    std::string data;
    std::string dtype;
    int64_t max_seq_len = 0;
    int64_t n_samples = 0;
};

// Binary score file FILE (records) + FILE.idx (JSON header, ids and byte offsets). Written to
// temporary names and renamed when complete (core/atomic_file.h); a writer destroyed without
// close() leaves both files as they were.
class ScoreWriter {
public:
    ScoreWriter(const std::string& path, ScoreHeader header);
    ~ScoreWriter();
    void add(const ScoreRecord& r);
    void close();  // writes the index and renames both files into place

private:
    std::string path_;
    ScoreHeader header_;
    std::unique_ptr<AtomicFile> out_;
    std::vector<std::pair<std::string, uint64_t>> index_;
    uint64_t offset_ = 0;
    bool closed_ = false;
};

// Reads a score file; InputError naming the file on a bad magic, version, index or record.
class ScoreFile {
public:
    explicit ScoreFile(const std::string& path);
    const ScoreHeader& header() const { return header_; }
    int64_t size() const { return static_cast<int64_t>(offsets_.size()); }
    const std::string& id(int64_t i) const { return ids_[i]; }
    ScoreRecord read(int64_t i) const;
    int64_t find(const std::string& id) const;  // -1 when absent

private:
    std::string path_;
    ScoreHeader header_;
    std::vector<std::string> ids_;
    std::vector<uint64_t> offsets_;
};

// Loads every record of a score file written as bin or jsonl.
std::vector<ScoreRecord> score_load_all(const std::string& path, ScoreHeader* header = nullptr);

// Writes header + records as JSONL (one header line, then one line per record), atomically.
void score_write_jsonl(const std::string& path, ScoreHeader header, const std::vector<ScoreRecord>& records);

}  // namespace cuset
