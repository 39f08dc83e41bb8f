// rl/token_weights: the byte spans of generated tokens in their decoded text, against the
// tokenizer's own offsets of the same text (tests/text checks those against Hugging Face's).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuset/rl/token_weights.h"
#include "cuset/tagger/tagger.h"
#include "cuset/text/tokenizer.h"

namespace {

const std::string kDemo = std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder";

}  // namespace

TEST(TokenWeights, ByteSpansOfTokensAreTheTokenizersOffsets) {
    auto tok = cuset::tokenizer_load(kDemo);
    const std::string text =
        "Here:\n```cuda\n__global__ void scale(float* x, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) x[i] *= 2.0f;  // größer\n}\nint main() { scale<<<4, 256>>>(nullptr, 0); }\n```\n";
    const cuset::Encoding e = tok->encode(text, false);
    ASSERT_EQ(tok->decode(e.ids), text) << "the demo tokenizer round-trips this text";
    const auto spans = cuset::rl::token_byte_spans(*tok, e.ids);
    ASSERT_EQ(spans.size(), e.ids.size());
    // A token whose bytes are whole characters has the tokenizer's span. The bytes of ö and ß are
    // split over tokens here: the tokenizer gives each part the character's span, the decoding
    // shows the character once it is complete, so the part that completes it gets its bytes and
    // the others an empty span inside them.
    int32_t end = 0;
    int split = 0;
    for (size_t t = 0; t < spans.size(); ++t) {
        const auto [b, e_] = e.offsets[t];
        EXPECT_EQ(spans[t].first, end) << "token " << t << ": spans are contiguous";
        end = spans[t].second;
        if (tok->decode({e.ids[t]}) == text.substr(b, e_ - b)) {
            EXPECT_EQ(spans[t].first, static_cast<int32_t>(b)) << "token " << t;
            EXPECT_EQ(spans[t].second, static_cast<int32_t>(e_)) << "token " << t;
        } else {
            ++split;
            EXPECT_GE(spans[t].first, static_cast<int32_t>(b)) << "token " << t;
            EXPECT_LE(spans[t].second, static_cast<int32_t>(e_)) << "token " << t;
        }
    }
    EXPECT_EQ(end, static_cast<int32_t>(text.size()));
    EXPECT_GT(split, 0) << "the text holds characters split over tokens";
    // The tagger's marks on those spans: the launch configuration and the kernel body are there.
    const std::vector<uint32_t> bits = cuset::tag_tokens(cuset::tag_text(text), spans);
    uint32_t any = 0;
    for (uint32_t b : bits) any |= b;
    EXPECT_TRUE(any & cuset::kTagKernel);
    EXPECT_TRUE(any & cuset::kTagLaunch);
    EXPECT_EQ(bits.front(), 0u) << "'Here' is prose";
}
