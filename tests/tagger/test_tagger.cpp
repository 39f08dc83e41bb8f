// The sensitivity tagger against hand-labelled spans: every construct of docs/method.md sec. 6
// (kernels, launches, configuration statements, launch APIs, finer categories, Markdown
// regions), negative cases, broken and truncated code, span properties and tag_tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cuset/tagger/cuda_lexer.h"
#include "cuset/core/error.h"
#include "cuset/tagger/tagger.h"
#include "tagger_test_util.h"
#include "test_util.h"

using cuset::TagSpan;
using cuset::TaggerOptions;
using cuset::tag_text;
using cuset::test::check_span_invariants;
using cuset::test::expect_tags;

namespace {

const uint32_t K = cuset::kTagKernel;
const uint32_t L = cuset::kTagLaunch;

std::string fixture(const std::string& name) {
    return cuset::test::read_file(std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/tagger/" + name);
}

// Bits of every byte of `needle`'s first occurrence after `from` in `text` (must exist).
std::vector<uint32_t> bits_of(const std::string& text, const std::vector<TagSpan>& spans,
                              const std::string& needle, size_t from = 0) {
    size_t at = text.find(needle, from);
    EXPECT_NE(at, std::string::npos) << needle;
    if (at == std::string::npos) return {};
    auto all = cuset::test::bits_per_byte(spans, text.size());
    return std::vector<uint32_t>(all.begin() + at, all.begin() + at + needle.size());
}

bool all_have(const std::vector<uint32_t>& bits, uint32_t want) {
    for (uint32_t b : bits)
        if ((b & want) != want) return false;
    return !bits.empty();
}

bool none_set(const std::vector<uint32_t>& bits) {
    for (uint32_t b : bits)
        if (b != 0) return false;
    return true;
}

}  // namespace

// ---------------------------------------------------------------- exact spans

TEST(Tagger, ExactSpansOfABareKernel) {
    std::vector<TagSpan> want = {{0, 22, K}};
    EXPECT_EQ(tag_text("__global__ void k() {}"), want);
}

TEST(Tagger, ExactSpansInResponseCoordinates) {
    // "Text\n" (5) + "```cuda\n" (8): the code starts at byte 13.
    std::string r = "Text\n```cuda\n__global__ void k() {}\n```\nk<<<1, 1>>>() in prose\n";
    std::vector<TagSpan> want = {{13, 35, K}};
    EXPECT_EQ(tag_text(r), want);
}

TEST(Tagger, ExactPiecesOfNestedCategories) {
    std::string src = "__global__ void k(float* p) { p[threadIdx.x] = 0; }";
    //                 0         1         2         3         4         5
    //                 012345678901234567890123456789012345678901234567890
    std::vector<TagSpan> want = {
        {0, 30, K},                                  // qualifiers .. "{ "
        {30, 32, K | cuset::kTagMemoryAccess},       // "p["
        {32, 43, K | cuset::kTagMemoryAccess | cuset::kTagIndexing},  // "threadIdx.x"
        {43, 44, K | cuset::kTagMemoryAccess},       // "]"
        {44, 51, K},                                 // " = 0; }"
    };
    EXPECT_EQ(tag_text(src), want);
}

// ---------------------------------------------------------------- kernels

TEST(Tagger, SimpleKernelWithFinerCategories) {
    expect_tags(R"(«K|__global__ void add(const float* a, float* c, int n) {
    «I|int i = blockIdx.x * blockDim.x + threadIdx.x;»
    «B|if (i < n)» «M|c[i]» = «M|a[i]» * 2.0f;
}»
)");
}

TEST(Tagger, TemplateHeaderLaunchBoundsAndSpecifiers) {
    expect_tags(R"(// header
«K|template <typename T, int BLOCK = 256>
__global__ void __launch_bounds__(BLOCK, 2) scale(T* x, T s) { «M|x[«I|threadIdx.x»]» *= s; }»
«K|static __global__ void a() {}»
«K|extern "C" __global__ void b(int) {}»
«K|__launch_bounds__(128) __global__ void c() {}»
«K|template <typename T, template <typename> class V = Vec>
[[maybe_unused]] __global__ void d(V<T> v) {}»
int host(int x) { return x; }
)");
}

TEST(Tagger, DeviceFunctionsFollowTheOption) {
    expect_tags(R"(«K|__device__ __forceinline__ float sq(float v) { return v * v; }»
«K|__host__ __device__ int twice(int v) { return 2 * v; }»
«K|__device__ __host__ int thrice(int v) { return 3 * v; }»
struct Acc {
    «K|__device__ float get() const { return x; }»
    «K|__device__ Acc(float v) : x(v) {}»
    float x;
};
«K|__global__ void k(float* p) { «M|p[0]» = sq(«M|p[1]»); }»
)");
    TaggerOptions no_device;
    no_device.device_functions = false;
    expect_tags(R"(__device__ __forceinline__ float sq(float v) { return v * v; }
__host__ __device__ int twice(int v) { return 2 * v; }
«K|__global__ void k(float* p) { «M|p[0]» = sq(«M|p[1]»); }»
)",
                no_device);
}

TEST(Tagger, DeclarationsVariablesAndPrototypesAreNotKernels) {
    expect_tags(R"(__global__ void proto(float* x);
template <typename T> __global__ void proto2(T* x);
template __global__ void proto2<float>(float*);
__device__ int counter;
__device__ __constant__ float table[16] = {1, 2};
__device__ void (*fp)(int) = nullptr;
)");
}

TEST(Tagger, OperatorsAndExplicitSpecialisations) {
    expect_tags(R"(«K|__device__ inline float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }»
struct F { «K|__device__ float operator()(float v) const { return v; }» };
«K|template <> __global__ void k<float>(float* p) { «M|p[0]» = 0; }»
)");
}

TEST(Tagger, ExtendedDeviceLambda) {
    expect_tags(R"(void run(float* d, int n) {
    thrust::for_each(thrust::device, idx, idx + n, «K|[=] __device__ (int i) { d[i] *= 2; }»);
    auto f = «K|[d] __host__ __device__ (int i) mutable { return d[i]; }»;
}
)");
}

// ---------------------------------------------------------------- finer categories

TEST(Tagger, ThreadIndexingStatements) {
    expect_tags(R"(«K|__global__ void k(float* out, int n, int m) {
    «I|const int tid = threadIdx.x;»
    «I|int gid = blockIdx.x * blockDim.x + tid;»
    «I|int row = gid / m, col = gid % m;»
    «I|unsigned lane = «I|threadIdx.x» & 31u;»
    float v = «I|threadIdx.y» * 0.5f;
    int value = «M|out[gid]»;
    «I|gid += blockDim.x * gridDim.x;»
    v = gid;
    «I|row += 1;»
    «M|out[row * m + col]» = v + lane + value;
}»
)");
}

TEST(Tagger, CooperativeGroupsIndexAndSync) {
    expect_tags(R"(«K|__global__ void k(float* v, int n) {
    auto block = cg::this_thread_block();
    «I|int i = block.thread_rank();»
    «Y|block.sync()»;
    «Y|cg::sync(block)»;
    «I|int w = «I|cg::this_grid().thread_rank()»;»
    «Y|cg::this_grid().sync()»;
    «B|if (w < n)» «M|v[w]» = 0;
}»
)");
}

TEST(Tagger, SharedMemoryDeclarationsAndSubscripts) {
    expect_tags(R"(«K|__global__ void k(const float* in, float* out) {
    «S|__shared__ float tile[32][33];»
    «S|extern __shared__ __align__(16) unsigned char smem[];»
    «S|__shared__ float a[8], b[8];»
    «S|__shared__ typename Reduce::TempStorage temp;»
    float* s = reinterpret_cast<float*>(smem);
    «S|tile[«I|threadIdx.y»][«I|threadIdx.x»]» = «M|in[0]»;
    «S|a[0]» = «S|b[1]» + s[2];
    «M|out[0]» = «S|tile[0][0]»;
}»
)");
}

TEST(Tagger, SynchronisationShufflesAndAtomics) {
    expect_tags(R"(«K|__global__ void k(int* c, float v) {
    «Y|__syncthreads()»;
    «Y|__syncwarp(0xffffffff)»;
    «Y|__threadfence()»; «Y|__threadfence_block()»; «Y|__threadfence_system()»;
    int all = «Y|__syncthreads_count(v > 0)»;
    v += «Y|__shfl_xor_sync(0xffffffffu, v, 16)»;
    v = «Y|__shfl_sync(~0u, v, 0)»;
    unsigned m = «Y|__ballot_sync(0xffffffffu, v > 0)»;
    «Y|atomicAdd(&«M|c[0]», 1)»;
    «Y|atomicCAS(c, 0, 1)»;
    «Y|atomicMax_block(c, all)»;
    ::«Y|atomicExch(c, m)»;
}»
)");
}

TEST(Tagger, MemoryAccessThroughPointerParametersAndAliases) {
    expect_tags(R"(«K|__global__ void k(const float* __restrict__ a, float b[], Tensor<float, 2> t, int* idx, int n) {
    «M|b[0]» = «M|a[«M|idx[0]»]»;
    t[0] = 1;
    «I|const float* row = a + blockIdx.x * n;»
    float x = «M|row[1]» + n;
    «M|b[1]» = x + «M|a[0]»;
    s.a[0] = 0;
}»
)");
}

TEST(Tagger, BoundsChecksInIfWhileAndForConditions) {
    expect_tags(R"(«K|__global__ void k(float* p, int n, int m) {
    «I|int i = blockIdx.x * blockDim.x + threadIdx.x;»
    «B|if (i >= n)» return;
    «B|if (i < n && «I|threadIdx.y» < m)» { «M|p[i]» = 0; }
    «B|while (i < n)» { «I|i += 32;» }
    for («I|int j = i»; «B|j <= n»; ++j) {}
    for (int k = 0; k < m; ++k) {}
    if («M|p[i]» > 0) «M|p[i]» = 0;
    if (i == 0) «M|p[0]» = 1;
    else «B|if (i > m)» «M|p[1]» = 2;
    float v = «B|i < n» ? «M|p[i]» : 0.f;
    v += «B|(i < n && «I|threadIdx.x» < m)» ? 1.f : 0.f;
    v += p ? 1.f : 0.f;
    «M|p[0]» = v + (n < m ? n : m);
}»
)");
}

// ---------------------------------------------------------------- launches

TEST(Tagger, LaunchStatementWithConfigDeclarations) {
    expect_tags(R"(void run(const float* x, float* y, int n, cudaStream_t stream) {
    «L|dim3 block(256);»
    «L|int blocks = (n + block.x - 1) / block.x;»
    «L|size_t smem = block.x * sizeof(float);»
    int unrelated = 3;
    if (blocks > 1024) «L|blocks = 1024;»
    «L|k<<<blocks, block, smem, stream>>>(x, y, n);»
    «L|k<<<(n + 255) / 256, 256>>>(x, y, n);»
}
)");
}

TEST(Tagger, ConfigStatementsStayInTheirFunction) {
    expect_tags(R"(void a(int n) {
    «L|int threads = 128;»
    «L|k<<<1, threads>>>(n);»
}
void b(int n) {
    int threads = 64;
    use(threads);
}
)");
}

TEST(Tagger, TemplatedAndQualifiedKernelNamesAndMacros) {
    expect_tags(R"(void run(float* x, int n) {
    «L|constexpr int kB = 128;»
    «L|reduce<float, kB><<<DIV_UP(n, kB), kB, SMEM_BYTES(kB)>>>(x, n);»
    «L|ops::scale<Vec<float, 4>><<<1, 1>>>(x);»
    «L|KERNEL_NAME(float)<<<1, 32>>>(x);»
    «L|launch_kernel<<<dim3(n / kB, 1, 1), dim3(kB), 0, 0>>>(x)»
}
)");
}

TEST(Tagger, LaunchApisAttributesAndOccupancy) {
    expect_tags(R"(void run(float* x, int n, cudaStream_t s) {
    «L|int block = 0, min_grid = 0;»
    «L|cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, k, 0, 0);»
    «L|cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);»
    void* args[] = {&x, &n};
    CUDA_CHECK(«L|cudaLaunchKernel((void*)k, dim3(min_grid), dim3(block), args, 0, s)»);
    «L|cudaLaunchCooperativeKernel((void*)k, 4, 128, args);»
    «L|cudaLaunchConfig_t cfg = {};»
    «L|cfg.gridDim = dim3(8);»
    «L|cfg.stream = s;»
    «L|cudaLaunchKernelEx(&cfg, k, x, n);»
    int per_sm;
    «L|cudaOccupancyMaxActiveBlocksPerMultiprocessor<float>(&per_sm, k, 128, 0);»
    «L|cuLaunchKernel(f, gx, 1, 1, 128, 1, 1, 0, s, params, nullptr);»
}
)");
}

TEST(Tagger, SnippetWithoutAFunction) {
    expect_tags(R"(```cuda
«L|int threads = 256;»
«L|int blocks = (n + threads - 1) / threads;»
«L|vec_add<<<blocks, threads>>>(d_a, d_b, d_c, n);»
```
)");
}

TEST(Tagger, DynamicParallelismLaunchInsideAKernel) {
    expect_tags(R"(«K|__global__ void parent(int* p) {
    «KL|int n = 4;»
    «KL|child<<<1, n>>>(p);»
}»
)");
}

TEST(Tagger, MultiKernelFixtureHasEveryKernelAndLaunch) {
    const std::string src = fixture("multi_kernel.cu");
    const auto spans = tag_text(src);
    check_span_invariants(src, spans);
    for (const char* body : {"__device__ __forceinline__ float warp_reduce_sum(float v) {",
                             "__global__ void saxpy(", "__global__ void __launch_bounds__(BLOCK) reduce_sum(",
                             "__global__ void matmul_tiled(", "extern \"C\" __global__ void histogram256(",
                             "__global__ void grid_normalize("}) {
        size_t at = src.find(body);
        ASSERT_NE(at, std::string::npos) << body;
        size_t close = src.find("\n}\n", at);
        ASSERT_NE(close, std::string::npos);
        std::string whole = src.substr(at, close + 2 - at);
        EXPECT_TRUE(all_have(bits_of(src, spans, whole), K)) << whole;
    }
    EXPECT_TRUE(all_have(bits_of(src, spans, "template <typename T, int BLOCK>\n__global__"), K));
    for (const char* launch : {"saxpy<<<blocks, threads, 0, stream>>>(n, a, x, y);",
                               "reduce_sum<float, kBlock><<<grid, kBlock>>>(in, out, n);",
                               "matmul_tiled<<<grid, block>>>(A, B, C, M, N, K);",
                               "cudaFuncSetAttribute(histogram256, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem)",
                               "cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, histogram256, smem, 0)",
                               "cudaLaunchKernel((void*)histogram256, dim3(min_grid), dim3(block_size), args, smem, 0)",
                               "cudaLaunchCooperativeKernel((void*)grid_normalize, dim3(per_sm * 80), dim3(128), args, 0, 0);",
                               "cudaLaunchKernelEx(&config, saxpy, n, a, x, y);", "int threads = 256;",
                               "dim3 block(kTile, kTile);", "config.gridDim = dim3((n + 127) / 128);"})
        EXPECT_TRUE(all_have(bits_of(src, spans, launch), L)) << launch;
    // The launches in the opening comment and in the printf string are not tagged.
    EXPECT_TRUE(none_set(bits_of(src, spans, "kernel<<<grid, block>>>(...)")));
    EXPECT_TRUE(none_set(bits_of(src, spans, "\"launch with saxpy<<<blocks, threads>>>(n, a, x, y)\\n\"")));
    EXPECT_TRUE(none_set(bits_of(src, spans, "int main() {")));
}

TEST(Tagger, RealSourcesHaveEveryKernelAndLaunchTagged) {
    // The bundled training programs (data/cuda-sft/src): every __global__ definition and every
    // <<< outside comments and literals must be tagged.
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(CUSET_SOURCE_DIR) / "data" / "cuda-sft" / "src";
    ASSERT_TRUE(fs::is_directory(dir)) << dir << " is missing: it is part of the repository";
    int n_files = 0, n_kernels = 0, n_launches = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".cu") continue;
        const std::string src = cuset::test::read_file(entry.path().string());
        const auto bits = cuset::test::bits_per_byte(tag_text(src), src.size());
        const auto toks = cuset::cuda_lex(src);
        for (size_t i = 0; i < toks.size(); ++i) {
            const std::string w = src.substr(toks[i].begin, toks[i].end - toks[i].begin);
            if (toks[i].kind == cuset::CudaTokenKind::kPunct && w == "<<<") {
                ++n_launches;
                EXPECT_TRUE(bits[toks[i].begin] & L) << entry.path() << " byte " << toks[i].begin;
            }
            if (toks[i].kind != cuset::CudaTokenKind::kIdentifier || w != "__global__") continue;
            size_t j = i + 1;  // a definition: '{' comes before ';'
            while (j < toks.size() && src[toks[j].begin] != '{' && src[toks[j].begin] != ';') ++j;
            if (j == toks.size() || src[toks[j].begin] != '{') continue;
            ++n_kernels;
            EXPECT_TRUE(bits[toks[i].begin] & K) << entry.path() << " byte " << toks[i].begin;
        }
        ++n_files;
    }
    EXPECT_GT(n_files, 0);
    EXPECT_GE(n_kernels, n_files);
    EXPECT_GE(n_launches, n_files);
}

// ---------------------------------------------------------------- Markdown

TEST(Tagger, FencesWithAnyOrNoLanguageTag) {
    expect_tags(R"(Prose about a `__global__` kernel<<<1, 1>>>() before the code.
```cuda
«K|__global__ void a() {}»
```
Between.
```
«K|__global__ void b() {}»
```
~~~cpp
«K|__global__ void c() {}»
~~~
1. In a list:
   ```c++ title="x.cu"
   «K|__global__ void d() {}»
   ```
````markdown
```
«K|__global__ void e() {}»
```
````
)");
}

TEST(Tagger, WholeResponseWithoutFencesWhenItHasCudaMarkers) {
    expect_tags(R"(«K|__global__ void k(int* p) { «M|p[0]» = 1; }»
«L|k<<<1, 1>>>(p);»
)");
    // No fence and no CUDA marker: nothing is code.
    expect_tags("void f() { int x = 1; }\n");
    // Prose that only mentions CUDA words: code-less, nothing tagged.
    expect_tags("Use the __global__ qualifier to declare a kernel; it runs on the device.\n"
                "Remember that blockIdx and threadIdx index the grid.\n");
}

TEST(Tagger, RegionsOfAResponse) {
    std::string r = "a\n```cuda\nx\n```\nb\n  ~~~\ny\n~~~~\n```\nunclosed";
    auto regions = cuset::tag_code_regions(r);
    ASSERT_EQ(regions.size(), 3u);
    EXPECT_EQ(r.substr(regions[0].begin, regions[0].end - regions[0].begin), "x\n");
    EXPECT_EQ(r.substr(regions[1].begin, regions[1].end - regions[1].begin), "y\n");
    EXPECT_EQ(r.substr(regions[2].begin, regions[2].end - regions[2].begin), "unclosed");
    // A backtick fence whose info string holds a backtick is inline code, not a fence.
    EXPECT_TRUE(cuset::tag_code_regions("```x` y\n__global__").size() == 1u);
    EXPECT_EQ(cuset::tag_code_regions("```x` y\n__global__")[0].begin, 0u);
}

// ---------------------------------------------------------------- negative cases

TEST(Tagger, HostOnlyCppIsNotTagged) {
    expect_tags(R"(```cpp
#include <vector>
template <typename T>
struct Grid { std::vector<std::vector<std::pair<int, int>>> cells; };
int main() {
    int x = 1 << 4, y = x >> 1;
    std::cout << x << y << std::endl;
    std::map<int, std::vector<std::pair<int,int>>> m;
    if (x < y && y > 0) x <<= 2;
    return x;
}
template <typename T> struct Box { friend std::ostream& operator<<<T>(std::ostream&, const Box<T>&); };
```
)");
}

TEST(Tagger, PythonIsNotTagged) {
    expect_tags(R"(```python
# kernel<<<grid, block>>>(x) in a comment
import torch
def launch(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    blocks = (n + 255) // 256
    print(f"launching {blocks} blocks: kernel<<<{blocks}, 256>>>")
    return x << 1 if n < 1024 else x
```
)");
}

TEST(Tagger, ProseMentioningCudaOutsideCodeIsNotTagged) {
    expect_tags(R"(A `__global__ void k() {}` function is launched with `k<<<grid, block>>>()`;
__global__ void not_code() { threadIdx.x; } is prose here because the response has a fence.
```bash
nvcc -o k k.cu && ./k
```
)");
}

TEST(Tagger, LaunchSyntaxInCommentsStringsAndPreprocessorIsNotALaunch) {
    expect_tags(R"(```cuda
// k<<<1, 1>>>(x);
/* k<<<1, 1>>>(x); __global__ void f() {} */
const char* s = "k<<<1, 1>>>(x);";
const char* r = R"x(k<<<1, 1>>>(x);)x";
char c = '<';
#define LAUNCH(k) k<<<1, 1>>>()
#define KERNEL __global__ void g() {}
int z = 1 <<< 2;
```
)");
}

// ---------------------------------------------------------------- broken and truncated code

TEST(Tagger, UnclosedBodyRunsToTheEndOfItsFence) {
    expect_tags(R"(```cuda
«K|__global__ void k(float* p) {
    «M|p[0]» = 1;
    if (x) {
      «Y|__syncthreads()»;»
```
After the fence: k<<<1, 1>>>();
)");
}

TEST(Tagger, UnclosedFenceRunsToTheEnd) {
    expect_tags(R"(Here:
```cuda
«K|__global__ void k(float* p) { «M|p[«I|threadIdx.x»]» = 0; }»
«L|k<<<1, 32>>>(p);»
«K|__global__ void trunc(int n»)");
}

TEST(Tagger, TruncatedLaunchAndSignature) {
    expect_tags("```cuda\n«L|k<<<grid, bl»\n```\n");
    expect_tags("```cuda\n«L|k<<<grid, block>>>(a, b»\n```\n");
    expect_tags("```cuda\n«K|template <int B>\n__global__ void k()»\n```\n");
}

TEST(Tagger, MismatchedBracketsAreTaggedBestEffort) {
    // A missing ')' in the signature: the next '{' is still the body; a stray '}' is ignored.
    expect_tags(R"(«K|__global__ void k(float* p {
    «Y|__syncthreads()»;
}»
}
«K|__global__ void j() { «Y|__syncwarp()»; }»
)");
    // A missing ')' in a condition: the body still closes at its own '}'.
    expect_tags(R"(«K|__global__ void m(float* p) {
    if («M|p[0]» > 0 { «M|p[1]» = 0; }
    «M|p[2]» = 1;
}»
__global__ void after(int);
)");
}

// ---------------------------------------------------------------- spans and tokens

TEST(Tagger, NormaliseSplitsOverlapsAndMergesTouchingPieces) {
    std::vector<TagSpan> in = {{10, 20, K}, {0, 5, L}, {12, 14, 4}, {13, 16, 16}, {5, 8, L}, {30, 30, K}, {40, 45, 0}};
    std::vector<TagSpan> want = {{0, 8, L}, {10, 12, K}, {12, 13, K | 4}, {13, 14, K | 4 | 16}, {14, 16, K | 16}, {16, 20, K}};
    EXPECT_EQ(cuset::tag_spans_normalize(in), want);
}

TEST(Tagger, TagTokensOrsOverlappingSpans) {
    std::vector<TagSpan> spans = {{0, 4, K}, {4, 6, K | 4}, {10, 12, L}};
    std::vector<std::pair<int32_t, int32_t>> toks = {
        {0, 2}, {2, 5}, {5, 6}, {6, 10}, {9, 11}, {-1, -1}, {3, 3}, {11, 20}, {20, 30}};
    std::vector<uint32_t> want = {K, K | 4, K | 4, 0, L, 0, 0, L, 0};
    EXPECT_EQ(cuset::tag_tokens(spans, toks), want);
    EXPECT_TRUE(cuset::tag_tokens({}, toks) == std::vector<uint32_t>(toks.size(), 0));
}

TEST(Tagger, BitNames) {
    EXPECT_EQ(cuset::tag_bits_name(cuset::kTagKernel), "kernel");
    EXPECT_EQ(cuset::tag_bits_name(cuset::kTagLaunch), "launch");
    EXPECT_EQ(cuset::tag_bits_name(cuset::kTagIndexing), "indexing");
    EXPECT_EQ(cuset::tag_bits_name(cuset::kTagSharedMemory), "shared_memory");
    EXPECT_EQ(cuset::tag_bits_name(cuset::kTagSync), "sync");
    EXPECT_EQ(cuset::tag_bits_name(cuset::kTagMemoryAccess), "memory_access");
    EXPECT_EQ(cuset::tag_bits_name(cuset::kTagBoundsCheck), "bounds_check");
    EXPECT_EQ(cuset::tag_bits_name(3), "");
    EXPECT_EQ(cuset::tag_bits_names(K | cuset::kTagSync), "kernel,sync");
}

TEST(Tagger, FixturesSatisfyTheSpanProperties) {
    for (const char* name : {"multi_kernel.cu", "response.md"}) {
        const std::string src = fixture(name);
        auto spans = tag_text(src);
        check_span_invariants(src, spans);
        EXPECT_GT(spans.size(), 10u) << name;
    }
}
