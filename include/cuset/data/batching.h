// From tokenised samples to the tensors of one micro-batch: next-token labels and their
// sensitivity, truncation, the deterministic per-epoch order (seed, epoch), optional length
// grouping and packing, the split of an optimizer step over ranks and micro-batches, padding,
// and the on-disk cache of tokenised data. It does not tokenise (data.h) or run the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "cuset/data/data.h"

namespace cuset {

// One sample as the trainer uses it: position t predicts labels[t] (= ids[t+1] when that token
// is trainable, else -100).
struct Example {
    std::string id;
    std::vector<int32_t> ids;          // [T]
    std::vector<int32_t> labels;       // [T] next-token target or -100
    std::vector<uint32_t> label_bits;  // [T] tagger bits of the target token (0 = not sensitive)
    int64_t n_targets = 0;             // labels != -100
    int32_t source = -1;               // index of the TokenizedSample it came from
};

struct PrepareOptions {
    int64_t max_seq_len = 2048;
    std::string truncation = "truncate";  // truncate (keep the first max_seq_len tokens) | drop
};

struct PreparedData {
    std::vector<Example> examples;
    int64_t n_input = 0;       // samples before truncation
    int64_t n_truncated = 0;   // samples cut to max_seq_len
    int64_t n_dropped = 0;     // samples dropped (too long with `drop`, or no target left after truncation)
    int64_t n_tokens = 0;      // tokens of the kept examples
    int64_t n_targets = 0;     // training targets of the kept examples
    int64_t n_sensitive = 0;   // targets with tagger bits
};

PreparedData data_prepare(const std::vector<TokenizedSample>& samples, const PrepareOptions& o);

// A row of a micro-batch: one example, or several packed ones (in order).
struct Row {
    std::vector<int32_t> examples;  // indices into PreparedData::examples
    int64_t length = 0;             // tokens
};

struct OrderOptions {
    uint64_t seed = 0;
    bool shuffle = true;
    bool group_by_length = false;  // sort within windows of `group_window` rows by length
    int64_t group_window = 256;
    bool packing = false;
    int64_t max_seq_len = 2048;    // packed row capacity
};

// The rows of one epoch, in training order: a function of (data, options, epoch) only, the same
// on every rank and after a resume. Shuffling is a Fisher-Yates permutation from a SplitMix64
// stream seeded by (seed, epoch), identical on every platform.
std::vector<Row> epoch_rows(const PreparedData& data, const OrderOptions& o, int64_t epoch);

// Optimizer steps of an epoch with `global_batch` rows per step (the last step may be partial).
int64_t steps_per_epoch(int64_t n_rows, int64_t global_batch);

// The rows of optimizer step `step_in_epoch` that rank `rank` of `world` trains on: the step's
// rows split into contiguous, near-equal parts, rank 0 first. Concatenating the ranks' parts
// gives the single-process order.
std::vector<Row> step_rows_for_rank(const std::vector<Row>& epoch, int64_t global_batch,
                                    int64_t step_in_epoch, int64_t rank, int64_t world);

struct MicroBatch {
    at::Tensor input_ids;       // [B, T] int64
    at::Tensor attention_mask;  // [B, T] bool, true = real token; undefined when nothing is padded or packed
    at::Tensor position_ids;    // [B, T] int64, restarting at 0 for every packed sample
    at::Tensor segment_ids;     // [B, T] int64 sample ordinal within the row (packing), else undefined
    at::Tensor labels;          // [B, T] int64, -100 = no target
    at::Tensor sensitive;       // [B, T] bool
    at::Tensor label_bits;      // [B, T] int32 tagger bits of the target
    at::Tensor sample_index;    // [B, T] int64 sample ordinal in the micro-batch, -1 = no target
    at::Tensor confidence;      // [B, T] fp32 cached p(target) (confidence.source: cached), else undefined
    at::Tensor reference_prob;  // [B, T] fp32 reference model's p(target) (rho1), else undefined
    std::vector<std::string> sample_ids;  // [S]
    int64_t n_tokens = 0;       // real tokens
    int64_t n_targets = 0;      // labels != -100

    // The padding mask the causal decoder needs: none for right-padded rows (a real token never
    // attends to a later pad, and pads have no target, so their outputs are never used), which
    // keeps attention on the causal kernels that skip the upper triangle (flash on the GPU); the
    // mask with packing, where the decoder combines it with the segments.
    at::Tensor causal_mask() const { return segment_ids.defined() ? attention_mask : at::Tensor(); }
};

// Right-pads the rows to the longest (pad_id), builds the tensors on the CPU, and moves them to
// `device` (through pinned memory, non-blocking, when the device is a GPU). `probs`, when given,
// holds per source sample the cached p(token t | prefix) at [t] (a score file's records): the
// confidence of the target at position t is probs[source][t + 1]. `ref_probs`: the same layout
// from the reference model's score file (rho1), into MicroBatch::reference_prob.
MicroBatch make_micro_batch(const PreparedData& data, const std::vector<Row>& rows, int32_t pad_id,
                            c10::Device device, const std::vector<std::vector<float>>* probs = nullptr,
                            const std::vector<std::vector<float>>* ref_probs = nullptr);

// Tokenised-data cache: a binary file of TokenizedSample records keyed by `key` (a hash of the
// data file, tokenizer, chat format and tagger settings). load returns false when the file is
// absent, of another key, or unreadable (then the caller re-tokenises and saves).
bool tokenized_cache_load(const std::string& path, const std::string& key,
                          std::vector<TokenizedSample>* out);
void tokenized_cache_save(const std::string& path, const std::string& key,
                          const std::vector<TokenizedSample>& samples);

// Hash of the tokenised samples (ids, trainable flags, tag bits), stored in checkpoints so that a
// resume on different data is refused.
std::string tokenized_hash(const std::vector<TokenizedSample>& samples);

}  // namespace cuset
