// The emulator's source rewrite (cuset/emu/transform.h): hand-written cases of each rule (their
// expected texts are what the original Python rewrite, tests/golden/emu_transform.py, prints,
// except in comments and literals, which no rule rewrites), the errors, and equality with the
// Python rewrite on every program of data/cuda-sft/src.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cuset/core/error.h"
#include "cuset/emu/transform.h"
#include "test_util.h"

using cuset::emu::transform_program;

namespace {

std::string golden_dir() { return std::string(CUSET_TEST_WORK) + "/golden/emu_transform"; }

// The InputError message of rewriting `src` ("" and a failure when none is thrown).
std::string error_of(const std::string& src) {
    try {
        transform_program(src);
    } catch (const cuset::InputError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no InputError for: " << src;
    return "";
}

}  // namespace

TEST(EmuTransform, LaunchWithTwoThreeAndFourConfigurationArguments) {
    EXPECT_EQ(transform_program("k<<<g, b>>>(x, n);"), "cuemu::Launch(g, b).args(x, n).go([&]{ k(x, n); });");
    EXPECT_EQ(transform_program("k<<<g, b, smem>>>(x);"), "cuemu::Launch(g, b, smem).args(x).go([&]{ k(x); });");
    EXPECT_EQ(transform_program("k<<<dim3(2, 2), dim3(8, 8), 0, stream>>>(x);"),
              "cuemu::Launch(dim3(2, 2), dim3(8, 8), 0, stream).args(x).go([&]{ k(x); });");
}

TEST(EmuTransform, TemplateAndQualifiedKernels) {
    EXPECT_EQ(transform_program("k<float, 4><<<g, b>>>(x);"), "cuemu::Launch(g, b).args(x).go([&]{ k<float, 4>(x); });");
    EXPECT_EQ(transform_program("ns::k<<<1, 32>>>(p);"), "cuemu::Launch(1, 32).args(p).go([&]{ ns::k(p); });");
    EXPECT_EQ(transform_program("template <int N> __global__ void k();\nint main() { k<N><<<1, 1>>>(); k<<<1, 1>>>(); }"),
              "template <int N> __global__ void k();\nint main() { cuemu::Launch(1, 1).go([&]{ k<N>(); }); "
              "cuemu::Launch(1, 1).go([&]{ k(); }); }");
}

TEST(EmuTransform, SpacesNewlinesNestedCallsAndStringsInTheArguments) {
    EXPECT_EQ(transform_program("  k <<< 1, 32 >>> (p,\n    q);"), "  cuemu::Launch( 1, 32 ).args(p,\n    q).go([&]{ k(p,\n    q); });");
    EXPECT_EQ(transform_program("k<<<n / 256, 256>>>(f(a, g(b)), \"s)\");"),
              "cuemu::Launch(n / 256, 256).args(f(a, g(b)), \"s)\").go([&]{ k(f(a, g(b)), \"s)\"); });");
    EXPECT_EQ(transform_program("k<<<1, 1>>>(\"a\\\")\");"), "cuemu::Launch(1, 1).args(\"a\\\")\").go([&]{ k(\"a\\\")\"); });");
}

// The arguments are read once more as host expressions before the launch (cuemu.h's
// Launch::args checks the pointers among them); an empty list has nothing to read, and a braced
// list has no type outside the kernel's call, so both launch as they are.
TEST(EmuTransform, TheArgumentsAreReadBeforeTheLaunchUnlessEmptyOrBraced) {
    EXPECT_EQ(transform_program("k<<<1, 1>>>( );"), "cuemu::Launch(1, 1).go([&]{ k( ); });");
    EXPECT_EQ(transform_program("k<<<1, 1>>>(p, {1, 2});"), "cuemu::Launch(1, 1).go([&]{ k(p, {1, 2}); });");
    EXPECT_EQ(transform_program("k<<<1, 1>>>(args...);"), "cuemu::Launch(1, 1).args(args...).go([&]{ k(args...); });");
}

TEST(EmuTransform, LaunchesInCommentsAndStringsAreLeftAlone) {
    const std::string src = "// k<<<1, 1>>>(x);\n/* k<<<1, 1>>>(x); */ printf(\"k<<<1, 1>>>(x)\");";
    EXPECT_EQ(transform_program(src), src);
    EXPECT_EQ(transform_program("/* k<<<1, 1>>>() */ k<<<2, 3>>>(y);"), "/* k<<<1, 1>>>() */ cuemu::Launch(2, 3).args(y).go([&]{ k(y); });");
}

TEST(EmuTransform, ExternSharedBecomesThePointerToDynamicSharedMemory) {
    EXPECT_EQ(transform_program("extern __shared__ float s[];"), "float* s = (float*)cuemu::dyn_smem();");
    EXPECT_EQ(transform_program("extern __shared__ unsigned int buf[ ];"),
              "unsigned int* buf = (unsigned int*)cuemu::dyn_smem();");
    // The original's backtracking: three spaces and no type give a one-space type.
    EXPECT_EQ(transform_program("extern  __shared__   x[];"), " * x = ( *)cuemu::dyn_smem();");
    // An attribute between __shared__ and the type is not rewritten.
    EXPECT_EQ(transform_program("extern __shared__ __align__(16) float s[];"), "extern __shared__ __align__(16) float s[];");
}

TEST(EmuTransform, NoRuleRewritesCommentsOrLiteralsButIfZeroBlocksAreCode) {
    const std::string quoted = "// extern __shared__ float s[];\n/* cudaLaunchKernel((void*)k, g, b, a, 0, 0); */\n"
                               "puts(\"extern __shared__ int t[];\"); char c = 'k'; // __shared__ int x;\n";
    EXPECT_EQ(transform_program(quoted), quoted);
    EXPECT_EQ(transform_program("#if 0\nextern __shared__ float s[];\n#endif\n"),
              "#if 0\nfloat* s = (float*)cuemu::dyn_smem();\n#endif\n");
    // A match that starts in a comment is no match; the declaration after it still is.
    EXPECT_EQ(transform_program("// extern __shared__ float\nextern __shared__ float s[];"),
              "// extern __shared__ float\nfloat* s = (float*)cuemu::dyn_smem();");
}

TEST(EmuTransform, StaticSharedVariablesArePoisoned) {
    EXPECT_EQ(transform_program("__shared__ float tile[16][17];"),
              "__shared__ float tile[16][17]; cuemu::poison_shared(&tile, sizeof(tile));");
    EXPECT_EQ(transform_program("__shared__ int a, b[4];"),
              "__shared__ int a, b[4]; cuemu::poison_shared(&a, sizeof(a)); cuemu::poison_shared(&b, sizeof(b));");
    EXPECT_EQ(transform_program("__shared__ float a[2]; __shared__ float b[2];"),
              "__shared__ float a[2]; cuemu::poison_shared(&a, sizeof(a)); __shared__ float b[2]; "
              "cuemu::poison_shared(&b, sizeof(b));");
    // A line holding "()" after __shared__ is skipped; comments are skipped.
    EXPECT_EQ(transform_program("__shared__ float f(); __shared__ double d;"),
              "__shared__ float f(); __shared__ double d; cuemu::poison_shared(&d, sizeof(d));");
    EXPECT_EQ(transform_program("// __shared__ int c;\n"), "// __shared__ int c;\n");
    const std::string split = "__global__ void k(float* p) {\n  __shared__\n  float t[4]; f();\n}";
    EXPECT_EQ(transform_program(split), split);
}

TEST(EmuTransform, LaunchKernelCallsBecomeTypedLaunches) {
    EXPECT_EQ(transform_program("cudaLaunchKernel((void*)k, g, b, args, 0, 0);"),
              "cuemu::launch_args(false, k, g, b, args, 0, 0);");
    EXPECT_EQ(transform_program("cudaLaunchCooperativeKernel((const void *) k, g, b, args, smem);"),
              "cuemu::launch_args(true, k, g, b, args, smem);");
    EXPECT_EQ(transform_program("cudaLaunchKernel(k, g, b, args);"), "cudaLaunchKernel(k, g, b, args);");
}

TEST(EmuTransform, MetadataBlockAndLineEndings) {
    EXPECT_EQ(transform_program("/*@prompt\nwrite k\n@explanation\nx\n@*/\nint x;\n"), "\n\n\n\n\nint x;\n");
    EXPECT_EQ(transform_program("a\r\nb\rc\n"), "a\nb\nc\n");
    EXPECT_EQ(transform_program(""), "");
}

TEST(EmuTransform, ProgramsThatCannotBeRewrittenThrowOneLineWithTheLine) {
    EXPECT_EQ(error_of("int a;\nk<<<1,1>>>(a, (b);"), "emulator rewrite: unbalanced parentheses in a launch's arguments at line 2");
    EXPECT_EQ(error_of("k<<<1,1>>(a);"), "emulator rewrite: '<<<' without '>>>' at line 1");
    EXPECT_EQ(error_of("k<<<1,1>>> ;"), "emulator rewrite: a launch without an argument list after '>>>' at line 1");
    EXPECT_EQ(error_of("x = y <<< 2;"), "emulator rewrite: '<<<' without '>>>' at line 1");
    EXPECT_EQ(error_of("int a;\n\nint b; /* open"), "emulator rewrite: unterminated /* comment at line 3");
    EXPECT_EQ(error_of("char c = 'x;"), "emulator rewrite: unterminated character literal at line 1");
    EXPECT_EQ(error_of("const char* s = \"abc;\n"), "emulator rewrite: unterminated string literal at line 1");
    EXPECT_EQ(error_of("foo> <<<1,1>>>(x)"), "emulator rewrite: unbalanced template arguments before '<<<' at line 1");
    EXPECT_EQ(error_of("a >> b; k<(1 > 0)><<<1, 1>>>();"),
              "emulator rewrite: unbalanced template arguments before '<<<' at line 1");
    // A kernel's name is not looked for inside the previous launch.
    EXPECT_EQ(error_of("k<<<1, 1>>>(a)><<<1, 1>>>(b);"), "emulator rewrite: unbalanced template arguments before '<<<' at line 1");
    EXPECT_EQ(error_of("__shared__ int a, ;"), "emulator rewrite: a __shared__ declarator without a name at line 1");
    EXPECT_EQ(error_of("/*" + std::string(5000, '<') + "*/ k<" + std::string(5000, 'x') + "><<<1, 1>>>();"),
              "emulator rewrite: template arguments before '<<<' longer than 4096 characters at line 1");
}

// Every program of data/cuda-sft/src rewritten as the original Python rewrite does
// (tests/golden/emu_transform.py, the golden_emu_transform fixture).
TEST(EmuTransform, EqualsThePythonRewriteOnTheBundledPrograms) {
    const std::vector<std::string> stems = cuset::test::lines_of(golden_dir() + "/list.txt");
    ASSERT_GE(stems.size(), 100u) << "run the golden_emu_transform fixture first";
    for (const std::string& stem : stems) {
        const std::string src = cuset::test::read_file(std::string(CUSET_SOURCE_DIR) + "/data/cuda-sft/src/" + stem + ".cu");
        const std::string want = golden_dir() + "/" + stem + ".cpp";
        ASSERT_TRUE(std::filesystem::exists(want)) << stem << ": the Python rewrite failed";
        EXPECT_EQ(transform_program(src), cuset::test::read_file(want)) << stem;
    }
}
