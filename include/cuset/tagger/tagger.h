// The CUDA-sensitivity tagger (docs/method.md sec. 6): which bytes of a response are CUDA-sensitive
// (kernel bodies, launch configurations) and the finer categories inside kernels, as sorted
// byte spans, and their projection onto tokens. It reads text only: no model, no tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuset {

enum TagBits : uint32_t {
    kTagKernel = 1u << 0,        // inside a __global__ (or __device__) function, qualifiers through closing brace
    kTagLaunch = 1u << 1,        // launch statements, launch API calls, their config declarations, attributes/occupancy calls
    kTagIndexing = 1u << 2,      // thread indexing (threadIdx/blockIdx/blockDim/gridDim and index statements)
    kTagSharedMemory = 1u << 3,  // __shared__ declarations and subscripts of shared arrays
    kTagSync = 1u << 4,          // __syncthreads, __syncwarp, __threadfence*, cg sync, __shfl*_sync, atomic*
    kTagMemoryAccess = 1u << 5,  // subscripts of pointer parameters
    kTagBoundsCheck = 1u << 6,   // conditions comparing an index with a size
};
constexpr uint32_t kTagAll = (1u << 7) - 1;
constexpr int kTagBitCount = 7;
// The finer categories; they only occur inside kernel bodies, so always together with kTagKernel.
constexpr uint32_t kTagFiner =
    kTagIndexing | kTagSharedMemory | kTagSync | kTagMemoryAccess | kTagBoundsCheck;

struct TagSpan {
    uint32_t begin, end;  // bytes [begin, end) of the response text
    uint32_t bits;        // OR of TagBits
};
inline bool operator==(const TagSpan& a, const TagSpan& b) {
    return a.begin == b.begin && a.end == b.end && a.bits == b.bits;
}

struct TaggerOptions {
    bool device_functions = true;  // tag __device__ functions too (tagger.device_functions)
};

// Sorted, non-overlapping spans; overlapping categories are split into disjoint pieces whose
// bits are the OR of what covers them; touching pieces with equal bits are merged.
// Throws InputError when the response is 4 GiB or longer (offsets are 32-bit).
std::vector<TagSpan> tag_text(std::string_view response, const TaggerOptions& opts = {});

// Per token: OR of the bits of every span overlapping the token's byte span [b, e);
// tokens with b < 0 (no source span) get 0. A token is sensitive when its bits != 0.
// `spans` must be sorted and non-overlapping (as tag_text returns them).
std::vector<uint32_t> tag_tokens(const std::vector<TagSpan>& spans,
                                 const std::vector<std::pair<int32_t, int32_t>>& token_spans);

// "kernel", "launch", "indexing", "shared_memory", "sync", "memory_access", "bounds_check" for a
// single bit; "" for anything else.
std::string tag_bits_name(uint32_t bit);

// Names of every bit set, joined by ',' ("kernel,indexing").
std::string tag_bits_names(uint32_t bits);

// --- building blocks, public for tests and the viewer -------------------------------------

// Where the code is: the contents of every fenced block (``` or ~~~, any or no language tag,
// indented fences accepted; an unclosed fence runs to the end), or the whole response when it
// has no fence but contains a CUDA marker (__global__, <<<, threadIdx, ...); else nothing.
struct CodeRegion {
    uint32_t begin, end;  // bytes of the response; the fence lines themselves are outside
};
std::vector<CodeRegion> tag_code_regions(std::string_view response);

// Spans of one code region (already in response coordinates), unnormalised: possibly
// overlapping and unsorted.
std::vector<TagSpan> tag_code(std::string_view response, CodeRegion region, const TaggerOptions& opts);

// Overlapping spans -> sorted disjoint pieces (OR of bits), touching equal pieces merged,
// empty spans and zero bits dropped.
std::vector<TagSpan> tag_spans_normalize(std::vector<TagSpan> spans);

}  // namespace cuset
