// The decoder's KV cache (model/kv_cache.h) against the decoder without it: on the golden random
// Llama / Qwen2 / Qwen3 models (tests/golden/model.py), a left-padded batch prefilled in part and
// then decoded one token at a time gives, at every real position, the logits of one full forward
// over the whole sequence; a row leaving the batch does not change the others.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "cuset/model/kv_cache.h"
#include "cuset/model/model.h"
#include "cuset/model/safetensors_torch.h"
#include "tensor_check.h"
#include "test_util.h"

namespace {

const std::string kGolden = std::string(CUSET_TEST_WORK) + "/golden/model";

std::vector<std::string> golden_cases() { return cuset::test::lines_of(kGolden + "/cases.txt"); }

// fp32: the cached path attends over the same keys through another mask shape and SDPA call, so
// only summation order differs: |err| <= 1e-4 + 1e-5 |ref| on logits of magnitude <= ~20 (the
// model parity tolerance); a misaligned causal mask or a wrong position moves logits by 1e-2+.
cuset::test::Closeness close_to(const at::Tensor& ours, const at::Tensor& ref, const at::Tensor& keep) {
    return cuset::test::closeness(ours, ref, /*rtol=*/1e-5, /*atol=*/1e-4, keep);
}

}  // namespace

TEST(KvCache, PrefillAndDecodeStepsEqualTheFullForward) {
    auto cases = golden_cases();
    ASSERT_EQ(cases.size(), 4u) << "golden fixture missing: " << kGolden;
    at::NoGradGuard no_grad;
    for (const std::string& c : cases) {
        SCOPED_TRACE(c);
        cuset::Decoder model = cuset::model_load(kGolden + "/" + c + "/model", at::kFloat, at::kCPU);
        auto in = cuset::safetensors_load(kGolden + "/" + c + "/inputs.safetensors", at::kCPU);
        at::Tensor ids = in.at("left_ids");                               // [B, T] left-padded
        at::Tensor mask = in.at("left_mask").to(at::kBool);              // [B, T]
        at::Tensor pos = (mask.to(at::kLong).cumsum(1) - 1).clamp_min(0);  // [B, T] per-row positions
        const int64_t b = ids.size(0), t = ids.size(1), prefill = t / 2;
        ASSERT_GT(t - prefill, 2);
        at::Tensor full = model->logits(model->forward(ids, mask, pos));  // [B, T, V]

        cuset::KvCache cache = cuset::kv_cache_allocate(model->config(), b, t, at::kFloat, at::kCPU);
        at::Tensor first = model->logits(model->forward(ids.narrow(1, 0, prefill), mask.narrow(1, 0, prefill),
                                                        pos.narrow(1, 0, prefill), {}, &cache));
        EXPECT_EQ(cache.length, prefill);
        const auto pre = close_to(first, full.narrow(1, 0, prefill), mask.narrow(1, 0, prefill).unsqueeze(-1));
        CUSET_EXPECT_WITHIN(pre.err, pre.bound) << "prefill";
        for (int64_t i = prefill; i < t; ++i) {
            at::Tensor step = model->logits(model->forward(ids.narrow(1, i, 1), mask.narrow(1, i, 1),
                                                           pos.narrow(1, i, 1), {}, &cache));  // [B, 1, V]
            const auto dec = close_to(step, full.narrow(1, i, 1), mask.narrow(1, i, 1).unsqueeze(-1));
            CUSET_EXPECT_WITHIN(dec.err, dec.bound) << "decode step at position " << i;
        }
        EXPECT_EQ(cache.length, t);
    }
}

TEST(KvCache, RowsLeavingTheBatchDoNotChangeTheOthers) {
    auto cases = golden_cases();
    ASSERT_FALSE(cases.empty());
    at::NoGradGuard no_grad;
    cuset::Decoder model = cuset::model_load(kGolden + "/" + cases[0] + "/model", at::kFloat, at::kCPU);
    auto in = cuset::safetensors_load(kGolden + "/" + cases[0] + "/inputs.safetensors", at::kCPU);
    at::Tensor ids = in.at("left_ids"), mask = in.at("left_mask").to(at::kBool);
    at::Tensor pos = (mask.to(at::kLong).cumsum(1) - 1).clamp_min(0);
    const int64_t b = ids.size(0), t = ids.size(1), prefill = t / 2;
    ASSERT_GE(b, 2);
    at::Tensor full = model->logits(model->forward(ids, mask, pos));
    cuset::KvCache cache = cuset::kv_cache_allocate(model->config(), b, t, at::kFloat, at::kCPU);
    (void)model->forward(ids.narrow(1, 0, prefill), mask.narrow(1, 0, prefill), pos.narrow(1, 0, prefill), {}, &cache);
    at::Tensor keep = at::arange(1, b, at::kLong);  // row 0 finished
    cache.select_rows(keep);
    EXPECT_EQ(cache.batch(), b - 1);
    for (int64_t i = prefill; i < t; ++i) {
        at::Tensor r = keep;
        at::Tensor step = model->logits(model->forward(ids.index_select(0, r).narrow(1, i, 1),
                                                       mask.index_select(0, r).narrow(1, i, 1),
                                                       pos.index_select(0, r).narrow(1, i, 1), {}, &cache));
        const auto c = close_to(step, full.index_select(0, r).narrow(1, i, 1),
                                mask.index_select(0, r).narrow(1, i, 1).unsqueeze(-1));
        CUSET_EXPECT_WITHIN(c.err, c.bound) << "position " << i;
    }
}
