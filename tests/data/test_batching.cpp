// Batching: next-token labels and sensitivity, truncation policies, the per-epoch order, packing,
// the step/rank split, micro-batch tensors, and the tokenised-data cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include <ATen/ATen.h>

#include "cuset/data/batching.h"
#include "test_util.h"

using cuset::PreparedData;
using cuset::TokenizedSample;

namespace {

// ids 10.., the tokens from `first_response` on are trainable; bits 4 on every third of them.
TokenizedSample sample(const std::string& id, int T, int first_response) {
    TokenizedSample s;
    s.id = id;
    for (int t = 0; t < T; ++t) {
        s.ids.push_back(10 + t);
        s.roles.push_back(t >= first_response ? 3 : 2);
        s.trainable.push_back(t >= first_response);
        s.tag_bits.push_back(t >= first_response && t % 3 == 0 ? 4u : 0u);
    }
    return s;
}

PreparedData prepared(int n, int T = 6) {
    std::vector<TokenizedSample> v;
    for (int i = 0; i < n; ++i) {
        std::string id = "s";  // not "s" + to_string(i): GCC 12 warns falsely on that (-Wrestrict, PR 105651)
        id += std::to_string(i);
        v.push_back(sample(id, T + i % 3, 2));
    }
    return cuset::data_prepare(v, {64, "truncate"});
}

}  // namespace

TEST(Prepare, LabelsAreNextTrainableTokens) {
    // ids 10 11 12 13 14, trainable from t=2: position t predicts ids[t+1] when trainable.
    auto d = cuset::data_prepare({sample("a", 5, 2)}, {16, "truncate"});
    ASSERT_EQ(d.examples.size(), 1u);
    const auto& e = d.examples[0];
    EXPECT_EQ(e.labels, (std::vector<int32_t>{-100, 12, 13, 14, -100}));
    // tag bits of the targets: token 3 has bits 4 (3 % 3 == 0), tokens 2 and 4 none.
    EXPECT_EQ(e.label_bits, (std::vector<uint32_t>{0, 0, 4, 0, 0}));
    EXPECT_EQ(e.n_targets, 3);
    EXPECT_EQ(d.n_targets, 3);
    EXPECT_EQ(d.n_sensitive, 1);
}

TEST(Prepare, TruncateOrDrop) {
    std::vector<TokenizedSample> v = {sample("long", 10, 2), sample("short", 4, 2), sample("prompt-only-after-cut", 10, 8)};
    auto t = cuset::data_prepare(v, {6, "truncate"});
    // "long" keeps 6 tokens (targets at t=1..4); the third loses its whole response.
    ASSERT_EQ(t.examples.size(), 2u);
    EXPECT_EQ(t.examples[0].ids.size(), 6u);
    EXPECT_EQ(t.examples[0].n_targets, 4);
    EXPECT_EQ(t.n_truncated, 2);
    EXPECT_EQ(t.n_dropped, 1);
    auto d = cuset::data_prepare(v, {6, "drop"});
    ASSERT_EQ(d.examples.size(), 1u);
    EXPECT_EQ(d.examples[0].id, "short");
    EXPECT_EQ(d.n_dropped, 2);
    EXPECT_EQ(d.n_truncated, 0);
}

TEST(Order, DeterministicPermutationPerEpoch) {
    auto d = prepared(50);
    cuset::OrderOptions o;
    o.seed = 3;
    auto a = cuset::epoch_rows(d, o, 0);
    auto b = cuset::epoch_rows(d, o, 0);
    auto c = cuset::epoch_rows(d, o, 1);
    std::vector<int32_t> ia, ib, ic;
    for (auto& r : a) ia.push_back(r.examples[0]);
    for (auto& r : b) ib.push_back(r.examples[0]);
    for (auto& r : c) ic.push_back(r.examples[0]);
    EXPECT_EQ(ia, ib);
    EXPECT_NE(ia, ic);
    std::vector<int32_t> sorted = ia;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);  // a permutation
    o.shuffle = false;
    auto plain = cuset::epoch_rows(d, o, 5);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(plain[i].examples[0], i);
}

TEST(Order, PackingRespectsCapacityAndKeepsEverySample) {
    auto d = prepared(20);  // lengths 6, 7, 8 repeating
    cuset::OrderOptions o;
    o.packing = true;
    o.max_seq_len = 16;
    auto rows = cuset::epoch_rows(d, o, 0);
    std::multiset<int32_t> seen;
    for (const auto& r : rows) {
        int64_t len = 0;
        for (int32_t i : r.examples) {
            len += static_cast<int64_t>(d.examples[i].ids.size());
            seen.insert(i);
        }
        EXPECT_EQ(len, r.length);
        EXPECT_LE(r.length, 16);
    }
    EXPECT_EQ(seen.size(), 20u);
    EXPECT_LT(rows.size(), 20u);
}

TEST(Order, GroupByLengthSortsWithinWindows) {
    auto d = prepared(12);
    cuset::OrderOptions o;
    o.group_by_length = true;
    o.group_window = 4;
    auto rows = cuset::epoch_rows(d, o, 0);
    for (size_t w = 0; w < rows.size(); w += 4)
        for (size_t i = w + 1; i < std::min(rows.size(), w + 4); ++i)
            EXPECT_GE(rows[i - 1].length, rows[i].length);
}

TEST(Order, RankSplitsConcatenateToTheGlobalStep) {
    auto d = prepared(23);
    auto rows = cuset::epoch_rows(d, {}, 0);
    const int64_t G = 8;
    EXPECT_EQ(cuset::steps_per_epoch(23, G), 3);
    for (int64_t step = 0; step < 3; ++step) {
        auto whole = cuset::step_rows_for_rank(rows, G, step, 0, 1);
        for (int64_t world : {2, 3}) {
            std::vector<int32_t> joined;
            for (int64_t r = 0; r < world; ++r)
                for (auto& row : cuset::step_rows_for_rank(rows, G, step, r, world))
                    joined.push_back(row.examples[0]);
            std::vector<int32_t> want;
            for (auto& row : whole) want.push_back(row.examples[0]);
            EXPECT_EQ(joined, want) << "step " << step << " world " << world;
        }
    }
    EXPECT_EQ(cuset::step_rows_for_rank(rows, G, 2, 0, 1).size(), 7u);  // the partial last step
}

TEST(MicroBatch, PaddingMasksAndSampleIndex) {
    auto d = cuset::data_prepare({sample("a", 5, 2), sample("b", 3, 1)}, {16, "truncate"});
    std::vector<cuset::Row> rows = {{{0}, 5}, {{1}, 3}};
    auto mb = cuset::make_micro_batch(d, rows, /*pad_id=*/0, c10::Device("cpu"));
    ASSERT_EQ(mb.input_ids.sizes(), (std::vector<int64_t>{2, 5}));
    EXPECT_TRUE(at::equal(mb.input_ids[1], at::tensor({10, 11, 12, 0, 0}, at::kLong)));
    EXPECT_TRUE(at::equal(mb.attention_mask[1], at::tensor({1, 1, 1, 0, 0}, at::kInt).to(at::kBool)));
    EXPECT_TRUE(at::equal(mb.labels[1], at::tensor({11, 12, -100, -100, -100}, at::kLong)));
    EXPECT_TRUE(at::equal(mb.sample_index[0], at::tensor({-1, 0, 0, 0, -1}, at::kLong)));
    EXPECT_TRUE(at::equal(mb.sample_index[1], at::tensor({1, 1, -1, -1, -1}, at::kLong)));
    EXPECT_FALSE(mb.segment_ids.defined());
    EXPECT_FALSE(mb.causal_mask().defined());  // right padding: plain causal attention suffices
    EXPECT_EQ(mb.n_tokens, 8);
    EXPECT_EQ(mb.n_targets, 3 + 2);
    EXPECT_EQ(mb.sample_ids, (std::vector<std::string>{"a", "b"}));
    // sample "b": token 12 (t=2) is trainable with bits 0; token 11 (t=1): 1 % 3 != 0 -> 0.
    EXPECT_FALSE(mb.sensitive[1].any().item<bool>());
    EXPECT_TRUE(mb.sensitive[0][2].item<bool>());  // target 13 (t=3, 3 % 3 == 0)
}

TEST(MicroBatch, PackedRowsRestartPositionsAndSegments) {
    auto d = cuset::data_prepare({sample("a", 3, 1), sample("b", 2, 1)}, {16, "truncate"});
    std::vector<cuset::Row> rows = {{{0, 1}, 5}};
    auto mb = cuset::make_micro_batch(d, rows, 0, c10::Device("cpu"));
    EXPECT_TRUE(at::equal(mb.position_ids[0], at::tensor({0, 1, 2, 0, 1}, at::kLong)));
    ASSERT_TRUE(mb.segment_ids.defined());
    EXPECT_TRUE(at::equal(mb.segment_ids[0], at::tensor({0, 0, 0, 1, 1}, at::kLong)));
    EXPECT_TRUE(mb.causal_mask().defined());  // packed: the segments need the mask path
    // the last token of "a" has no target (the next token belongs to "b")
    EXPECT_TRUE(at::equal(mb.labels[0], at::tensor({11, 12, -100, 11, -100}, at::kLong)));
    EXPECT_TRUE(at::equal(mb.sample_index[0], at::tensor({0, 0, -1, 1, -1}, at::kLong)));
}

TEST(TokenizedCache, RoundTripAndKeyMismatch) {
    std::string dir = cuset::test::scratch_dir("tok-cache");
    std::vector<TokenizedSample> v = {sample("x", 7, 3), sample("y", 4, 1)};
    cuset::tokenized_cache_save(dir + "/c.bin", "key1", v);
    std::vector<TokenizedSample> back;
    ASSERT_TRUE(cuset::tokenized_cache_load(dir + "/c.bin", "key1", &back));
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].ids, v[0].ids);
    EXPECT_EQ(back[1].tag_bits, v[1].tag_bits);
    EXPECT_EQ(back[1].id, "y");
    EXPECT_EQ(cuset::tokenized_hash(back), cuset::tokenized_hash(v));
    EXPECT_FALSE(cuset::tokenized_cache_load(dir + "/c.bin", "key2", &back));
    cuset::test::write_file(dir + "/bad.bin", "CUSETTOK garbage");
    EXPECT_FALSE(cuset::tokenized_cache_load(dir + "/bad.bin", "key1", &back));
    EXPECT_FALSE(cuset::tokenized_cache_load(dir + "/absent.bin", "key1", &back));
}
